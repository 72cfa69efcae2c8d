// Switch peeks, wire sizes and error names.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "dataplane/wire/framing.hpp"
#include "framing_test_util.hpp"

namespace vf::wire {
namespace {

using test::Bytes;

TEST(Peek, IbFields) {
  const Bytes lrh = {0x70, 0x12, 0x37, 0x5C, 0x00, 0x0E, 0x17, 0xD2};
  rte_mbuf* m = test::guarded_mbuf(lrh);
  EXPECT_EQ(ib_frame_dlid(m), std::optional<uint16_t>(0x375C));
  EXPECT_EQ(ib_frame_vl(m), std::optional<uint8_t>(7));
  EXPECT_EQ(ib_frame_sl(m), std::optional<uint8_t>(1));
  rte_pktmbuf_free(m);
  for (size_t len = 0; len < lrh.size(); ++len) {
    m = test::guarded_mbuf(Bytes(lrh.begin(), lrh.begin() + long(len)));
    EXPECT_FALSE(ib_frame_dlid(m).has_value()) << len;
    EXPECT_FALSE(ib_frame_vl(m).has_value()) << len;
    EXPECT_FALSE(ib_frame_sl(m).has_value()) << len;
    rte_pktmbuf_free(m);
  }
}

TEST(Peek, EthFields) {
  Bytes f = {0x02, 0, 0, 0, 0, 0x0B, 0x02, 0, 0, 0, 0, 0x0A, 0x08, 0x00};
  rte_mbuf* m = test::guarded_mbuf(f);
  ASSERT_NE(eth_frame_dst(m), nullptr);
  EXPECT_EQ(eth_frame_dst(m)[5], 0x0B);
  EXPECT_EQ(eth_frame_pcp(m), std::optional<uint8_t>(0));  // untagged
  rte_pktmbuf_free(m);
  for (size_t len = 0; len < 14; ++len) {
    m = test::guarded_mbuf(Bytes(f.begin(), f.begin() + long(len)));
    EXPECT_EQ(eth_frame_dst(m), nullptr) << len;
    EXPECT_FALSE(eth_frame_pcp(m).has_value()) << len;
    rte_pktmbuf_free(m);
  }
  // Tagged with PCP 6: the tag must be there in full.
  Bytes t = {0x02, 0, 0, 0, 0, 0x0B, 0x02, 0, 0, 0, 0, 0x0A, 0x81, 0x00, 0xC0, 0x05, 0x08, 0x00};
  for (size_t len = 14; len <= t.size(); ++len) {
    m = test::guarded_mbuf(Bytes(t.begin(), t.begin() + long(len)));
    if (len < 18) {
      EXPECT_FALSE(eth_frame_pcp(m).has_value()) << len;
    } else {
      EXPECT_EQ(eth_frame_pcp(m), std::optional<uint8_t>(6));
    }
    rte_pktmbuf_free(m);
  }
}

// The guard the truncation tests rely on: one byte past the data faults.
TEST(GuardedMbufDeathTest, ReadingPastTheDataFaults) {
  rte_mbuf* m = test::guarded_mbuf(Bytes(10, 1));
  const volatile uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  EXPECT_EQ(p[9], 1);
  EXPECT_DEATH((void)p[10], "");
  rte_pktmbuf_free(m);
}

TEST(WireBytes, Ethernet) {
  // No FCS in the mbuf: +4 FCS, pad to 64, +8 preamble/SFD, +12 IFG.
  EXPECT_EQ(eth_wire_bytes(0), 64u + 20);
  EXPECT_EQ(eth_wire_bytes(58), 64u + 20);  // smallest RoCEv2 IPv4 frame
  EXPECT_EQ(eth_wire_bytes(60), 64u + 20);
  EXPECT_EQ(eth_wire_bytes(61), 65u + 20);
  EXPECT_EQ(eth_wire_bytes(1514), 1538u);
  static_assert(eth_wire_bytes(60) == 84);
}

TEST(WireBytes, InfiniBand) {
  EXPECT_EQ(ib_wire_bytes(26), 26u);
  EXPECT_EQ(ib_wire_bytes(4096 + 26), 4122u);
}

TEST(RxErrorName, DistinctAndKnown) {
  std::set<std::string> names;
  for (unsigned i = 0; i < kRxErrorCount; ++i) {
    const char* n = rx_error_name(RxError(i));
    ASSERT_NE(n, nullptr);
    EXPECT_STRNE(n, "unknown") << i;
    names.insert(n);
  }
  EXPECT_EQ(names.size(), kRxErrorCount);
  EXPECT_STREQ(rx_error_name(RxError::kOk), "ok");
  EXPECT_STREQ(rx_error_name(RxError::kBadIcrc), "bad_icrc");
  EXPECT_STREQ(rx_error_name(RxError(200)), "unknown");
}

}  // namespace
}  // namespace vf::wire
