// The capture's one-line frame summaries: IB flow control, LRH + BTH with and
// without GRH, RoCEv2 over IPv4 (tagged) and IPv6, other traffic, and every
// truncation of a frame read safely (ASan checks the "safely").
#include "dataplane/wire/frame_summary.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "dataplane/wire/arp.hpp"
#include "dataplane/wire/bytes.hpp"
#include "dataplane/wire/ndp.hpp"
#include "dataplane/wire/fcp.hpp"
#include "dataplane/wire/transport.hpp"

namespace vf::wire {
namespace {

std::string sum(const std::vector<uint8_t>& f, bool ib) { return frame_summary(f.data(), f.size(), ib); }

std::vector<uint8_t> bth(uint8_t opcode, uint32_t qpn, uint32_t psn, bool ackreq) {
  std::vector<uint8_t> b(kBthLen + 4, 0);
  b[0] = opcode;
  put24(&b[5], qpn);
  b[8] = ackreq ? 0x80 : 0;
  put24(&b[9], psn);
  return b;
}

std::vector<uint8_t> ib_local(uint16_t slid, uint16_t dlid, uint8_t vl, uint8_t sl, const std::vector<uint8_t>& t) {
  std::vector<uint8_t> f{uint8_t(vl << 4), uint8_t(sl << 4 | 2), 0, 0, 0, 0, 0, 0};
  put16(&f[2], dlid);
  put16(&f[6], slid);
  f.insert(f.end(), t.begin(), t.end());
  return f;
}

TEST(FrameSummary, InfiniBand) {
  EXPECT_EQ(sum(ib_local(1, 2, 0, 0, bth(0x04, 0x12, 77, true)), true),
            "IB LID 1 > 2 VL0 SL0 RC SEND Only QP 0x000012 PSN 77 A");
  EXPECT_EQ(sum(ib_local(2, 1, 1, 3, bth(0x11, 0x34, 78, false)), true),
            "IB LID 2 > 1 VL1 SL3 RC Acknowledge QP 0x000034 PSN 78");
  EXPECT_EQ(sum(ib_local(3, 4, 0, 0, bth(0x64, 0x1, 0, false)), true),
            "IB LID 3 > 4 VL0 SL0 UD SEND Only QP 0x000001 PSN 0");
  auto global = ib_local(1, 2, 0, 0, std::vector<uint8_t>(40, 0));
  global[1] = 3;  // LNH: GRH
  const auto t = bth(0x0a, 0x99, 5, false);
  global.insert(global.end(), t.begin(), t.end());
  EXPECT_EQ(sum(global, true), "IB LID 1 > 2 VL0 SL0 GRH RC RDMA WRITE Only QP 0x000099 PSN 5");
  std::vector<uint8_t> fcp(kFcpLen);
  fcp_put(fcp.data(), Fcp{FcpOp::kNormal, 100, 0, 612});
  EXPECT_EQ(sum(fcp, true), "IB flow control VL0 FCTBS 100 FCCL 612");
  fcp[5] ^= 1;
  EXPECT_EQ(sum(fcp, true), "IB link packet (bad LPCRC or Op)");
}

std::vector<uint8_t> roce_v4(bool tagged) {
  std::vector<uint8_t> f(12, 0x02);
  if (tagged) f.insert(f.end(), {0x81, 0x00, 0x60, 0x05});  // PCP 3, VID 5
  f.insert(f.end(), {0x08, 0x00});
  std::vector<uint8_t> ip(20, 0);
  ip[0] = 0x45;
  ip[1] = 0x03;  // ECN CE
  ip[9] = 17;
  put32(&ip[12], 0xC6120001);
  put32(&ip[16], 0xC6120002);
  f.insert(f.end(), ip.begin(), ip.end());
  std::vector<uint8_t> udp(8, 0);
  put16(&udp[0], 49152);
  put16(&udp[2], 4791);
  f.insert(f.end(), udp.begin(), udp.end());
  const auto t = bth(0x0c, 0x11, 1000, false);
  f.insert(f.end(), t.begin(), t.end());
  return f;
}

TEST(FrameSummary, RoceV2AndOtherEthernet) {
  EXPECT_EQ(sum(roce_v4(false), false),
            "IP 198.18.0.1 > 198.18.0.2 CE UDP 49152 > 4791 RoCEv2 RC RDMA READ Request QP 0x000011 PSN 1000");
  EXPECT_EQ(sum(roce_v4(true), false).rfind("vlan 5 p3 IP 198.18.0.1 > 198.18.0.2", 0), 0u);
  std::vector<uint8_t> arp(60, 0);
  put16(&arp[12], 0x0806);
  EXPECT_EQ(sum(arp, false), "ARP (malformed)");  // hardware type 0
  ArpMsg a;
  a.sha = {2, 0, 0, 0, 0, 0x0b};
  a.spa = 0xC6120002;
  a.tpa = 0xC6120001;
  arp_put(&arp[14], a);
  EXPECT_EQ(sum(arp, false), "ARP, Request who-has 198.18.0.1 tell 198.18.0.2");
  a.op = kArpReply;
  arp_put(&arp[14], a);
  EXPECT_EQ(sum(arp, false), "ARP, Reply 198.18.0.2 is-at 02:00:00:00:00:0b");
  std::vector<uint8_t> ns(14 + kNdLen, 0);
  put16(&ns[12], 0x86DD);
  NdMsg m;
  m.src[15] = 1;
  m.target = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  m.dst = solicited_node(m.target);
  nd_put(&ns[14], m);
  EXPECT_EQ(sum(ns, false), "IP6 ::1 > ff02::1:ff00:2 ICMP6, neighbor solicitation, who has 2001:db8::2");
  m.type = kNdAdvert;
  nd_put(&ns[14], m);
  EXPECT_EQ(sum(ns, false).substr(sum(ns, false).find("ICMP6")), "ICMP6, neighbor advertisement, tgt is 2001:db8::2");
  std::vector<uint8_t> v6(14 + 40 + 8, 0);
  put16(&v6[12], 0x86DD);
  v6[14 + 6] = 17;
  v6[14 + 8 + 15] = 1;   // ::1
  v6[14 + 24 + 15] = 2;  // ::2
  put16(&v6[14 + 40 + 2], 53);
  EXPECT_EQ(sum(v6, false), "IP6 ::1 > ::2 UDP 0 > 53");
}

TEST(FrameSummary, EveryTruncationIsReadSafely) {
  std::vector<uint8_t> arp(14 + kArpLen, 0);
  put16(&arp[12], 0x0806);
  arp_put(&arp[14], ArpMsg{});
  std::vector<uint8_t> ns(14 + kNdLen, 0);
  put16(&ns[12], 0x86DD);
  nd_put(&ns[14], NdMsg{});
  for (const auto& [frame, ib] : {std::pair{roce_v4(true), false}, std::pair{ib_local(1, 2, 0, 0, bth(4, 1, 1, 0)), true},
                                  std::pair{arp, false}, std::pair{ns, false}})
    for (size_t n = 0; n <= frame.size(); ++n) {
      // A copy exactly n bytes long, so ASan sees any read past it.
      std::vector<uint8_t> cut(frame.begin(), frame.begin() + long(n));
      EXPECT_FALSE(frame_summary(cut.data(), cut.size(), ib).empty()) << n;
    }
}

}  // namespace
}  // namespace vf::wire
