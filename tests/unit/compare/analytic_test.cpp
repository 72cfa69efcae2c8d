#include "compare/analytic.hpp"

#include <gtest/gtest.h>

namespace vf::compare {
namespace {

TEST(Analytic, OnePacketCostsItsHeadersOnEachFabric) {
  // IB: LRH 8 + BTH 12 + ICRC 4 + VCRC 2.
  EXPECT_EQ(packet_wire_bytes(Encap::kInfiniBand, 64, false), 64u + 26);
  // RoCEv2/IPv4: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4,
  // preamble 8, IFG 12.
  EXPECT_EQ(packet_wire_bytes(Encap::kRoceV4, 64, false), 64u + 82);
  EXPECT_EQ(packet_wire_bytes(Encap::kRoceV6, 64, false), 64u + 102);
  EXPECT_EQ(packet_wire_bytes(Encap::kRoceV4, 64, true), 64u + 82 + 16) << "RETH on a WRITE's first packet";
}

TEST(Analytic, PayloadIsPaddedToFourBytesAndEthernetToItsMinimumFrame) {
  EXPECT_EQ(packet_wire_bytes(Encap::kInfiniBand, 1, false), 4u + 26);
  // 0-byte RoCE SEND: 14+20+8+12+4+4 = 62 < 64, padded to the minimum frame.
  EXPECT_EQ(packet_wire_bytes(Encap::kRoceV4, 0, false), 8u + 64 + 12);
}

TEST(Analytic, AMessageSplitsIntoPathMtuPacketsAndOnlyTheFirstCarriesReth) {
  EXPECT_EQ(message_wire_bytes(Encap::kInfiniBand, Op::kWrite, 10000, 4096),
            (4096u + 26 + 16) + (4096u + 26) + (1808u + 26));
  EXPECT_EQ(message_wire_bytes(Encap::kInfiniBand, Op::kSend, 8192, 4096), 2 * (4096u + 26));
}

TEST(Analytic, GoodputIsTheLineRateTimesThePayloadShare) {
  const double g = analytic_goodput_bps(Encap::kRoceV4, Op::kSend, 1024, 1024, 100'000'000'000ULL);
  EXPECT_NEAR(g, 100e9 * 1024 / (1024 + 82), 1);
  EXPECT_LT(analytic_goodput_bps(Encap::kRoceV4, Op::kWrite, 64, 1024, 100'000'000'000ULL),
            analytic_goodput_bps(Encap::kInfiniBand, Op::kWrite, 64, 4096, 100'000'000'000ULL));
}

TEST(Analytic, RocePathMtuIsTheLargestThatFitsTheEthernetMtu) {
  EXPECT_EQ(roce_path_mtu(1500), 1024u);
  EXPECT_EQ(roce_path_mtu(9000), 4096u);
  EXPECT_EQ(roce_path_mtu(4200), 4096u);   // 4096 + 20 + 8 + 12 + 16 + 4 = 4156
  EXPECT_EQ(roce_path_mtu(4150), 2048u);
  EXPECT_EQ(roce_path_mtu(4170, Encap::kRoceV6), 2048u);  // IPv6 adds 20
}

}  // namespace
}  // namespace vf::compare
