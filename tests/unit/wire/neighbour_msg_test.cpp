// ARP and IPv6 Neighbour Discovery messages: bytes where RFC 826 / RFC 4861
// put them, round trips, hostile input refused, and Wireshark's dissectors
// reading our frames the same way.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "dataplane/wire/arp.hpp"
#include "dataplane/wire/bytes.hpp"
#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/ndp.hpp"
#include "tests/unit/wire/tshark.hpp"

namespace vf::wire {
namespace {

const MacAddr kMacA{0x02, 0, 0, 0, 0, 0x0A};
const MacAddr kMacB{0x02, 0, 0, 0, 0, 0x0B};
const Ipv6Addr kIpA{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0A};
const Ipv6Addr kIpB{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x0B};

ArpMsg request() {
  ArpMsg a;
  a.sha = kMacA;
  a.spa = 0xC6120001;  // 198.18.0.1
  a.tpa = 0xC6120002;
  return a;
}

TEST(Arp, RequestBytesAreRfc826) {
  std::array<uint8_t, kArpLen> p{};
  arp_put(p.data(), request());
  const std::array<uint8_t, kArpLen> want{0, 1, 0x08, 0, 6, 4, 0, 1,       0x02, 0, 0, 0, 0,    0x0A,
                                          198, 18, 0, 1, 0, 0, 0, 0, 0, 0, 198, 18, 0, 2};
  EXPECT_EQ(p, want);
  const auto back = arp_parse(p.data(), p.size());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->op, kArpRequest);
  EXPECT_EQ(back->sha, kMacA);
  EXPECT_EQ(back->spa, 0xC6120001u);
  EXPECT_EQ(back->tpa, 0xC6120002u);
}

TEST(Arp, ParseRefusesWhatIsNotEthernetIpv4ArpOrIsShort) {
  std::array<uint8_t, kArpLen> p{};
  arp_put(p.data(), request());
  EXPECT_FALSE(arp_parse(p.data(), kArpLen - 1));
  auto bad = p;
  bad[1] = 6;  // IEEE 802 hardware type
  EXPECT_FALSE(arp_parse(bad.data(), bad.size()));
  bad = p;
  bad[5] = 16;  // protocol length of IPv6
  EXPECT_FALSE(arp_parse(bad.data(), bad.size()));
  bad = p;
  bad[7] = 3;  // RARP request
  EXPECT_FALSE(arp_parse(bad.data(), bad.size()));
}

NdMsg solicit() {
  NdMsg m;
  m.type = kNdSolicit;
  m.src = kIpA;
  m.target = kIpB;
  m.dst = solicited_node(kIpB);
  m.has_lla = true;
  m.lla = kMacA;
  return m;
}

TEST(Ndp, SolicitedNodeAddressAndItsMac) {
  const Ipv6Addr sn = solicited_node(kIpB);
  const Ipv6Addr want{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0x34, 0x56, 0x0B};
  EXPECT_EQ(sn, want);
  EXPECT_EQ(ipv6_multicast_mac(sn), (MacAddr{0x33, 0x33, 0xff, 0x34, 0x56, 0x0B}));
}

TEST(Ndp, SolicitationRoundTripsWithAValidChecksum) {
  std::array<uint8_t, kNdLen> p{};
  nd_put(p.data(), solicit());
  EXPECT_EQ(p[0] >> 4, 6);
  EXPECT_EQ(p[6], kIpProtoIcmpv6);
  EXPECT_EQ(p[7], 255);
  EXPECT_EQ(get16(p.data() + 4), 32u);
  EXPECT_EQ(p[40], kNdSolicit);
  EXPECT_EQ(p[64], 1);  // source link-layer address option
  EXPECT_EQ(p[65], 1);  // one 8-byte unit
  const auto back = nd_parse(p.data(), p.size());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->target, kIpB);
  EXPECT_TRUE(back->has_lla);
  EXPECT_EQ(back->lla, kMacA);
}

TEST(Ndp, ParseRefusesForgedOrBrokenMessages) {
  std::array<uint8_t, kNdLen> p{};
  nd_put(p.data(), solicit());
  auto bad = p;
  bad[7] = 254;  // crossed a router: RFC 4861 §7.1.1
  EXPECT_FALSE(nd_parse(bad.data(), bad.size()));
  bad = p;
  bad[60] ^= 1;  // target changed, checksum not
  EXPECT_FALSE(nd_parse(bad.data(), bad.size()));
  bad = p;
  bad[65] = 0;  // an option of length 0 would loop forever
  put16(bad.data() + 42, 0);
  EXPECT_FALSE(nd_parse(bad.data(), bad.size()));
  bad = p;
  bad[41] = 1;  // code must be 0
  EXPECT_FALSE(nd_parse(bad.data(), bad.size()));
  EXPECT_FALSE(nd_parse(p.data(), kNdLen - 9));  // shorter than its payload length
  bad = p;
  put16(bad.data() + 4, 0xFFFF);  // payload length beyond the frame
  EXPECT_FALSE(nd_parse(bad.data(), bad.size()));
}

TEST(Ndp, AdvertisementCarriesFlagsAndTheTargetsAddress) {
  NdMsg na;
  na.type = kNdAdvert;
  na.src = na.target = kIpB;
  na.dst = kIpA;
  na.flags = kNdSolicited | kNdOverride;
  na.has_lla = true;
  na.lla = kMacB;
  std::array<uint8_t, kNdLen> p{};
  nd_put(p.data(), na);
  EXPECT_EQ(p[44], 0x60);  // S and O
  EXPECT_EQ(p[64], 2);     // target link-layer address option
  const auto back = nd_parse(p.data(), p.size());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->flags, kNdSolicited | kNdOverride);
  EXPECT_EQ(back->lla, kMacB);
}

std::vector<uint8_t> eth_frame(const MacAddr& dst, uint16_t type, const uint8_t* body, size_t n) {
  std::vector<uint8_t> f(dst.begin(), dst.end());
  f.insert(f.end(), kMacA.begin(), kMacA.end());
  f.push_back(uint8_t(type >> 8));
  f.push_back(uint8_t(type));
  f.insert(f.end(), body, body + n);
  if (f.size() < 60) f.resize(60);
  return f;
}

TEST(Arp, WiresharkDecodesTheRequest) {
  std::array<uint8_t, kArpLen> p{};
  arp_put(p.data(), request());
  const auto f = eth_frame({0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, kEtherTypeArp, p.data(), p.size());
  const test::TsharkResult r = test::tshark_fields(
      f.data(), f.size(), "-e arp.opcode -e arp.src.hw_mac -e arp.src.proto_ipv4 -e arp.dst.proto_ipv4 -e _ws.malformed");
  ASSERT_EQ(r.status, 0) << "tshark is part of the test set-up (scripts/setup.sh): " << r.out;
  EXPECT_EQ(r.out, "1,02:00:00:00:00:0a,198.18.0.1,198.18.0.2,\n");
}

TEST(Ndp, WiresharkDecodesTheSolicitationAndAgreesOnItsChecksum) {
  std::array<uint8_t, kNdLen> p{};
  const NdMsg ns = solicit();
  nd_put(p.data(), ns);
  const auto f = eth_frame(ipv6_multicast_mac(ns.dst), kEtherTypeIpv6, p.data(), p.size());
  const test::TsharkResult r = test::tshark_fields(
      f.data(), f.size(),
      "-e icmpv6.type -e icmpv6.nd.ns.target_address -e icmpv6.opt.linkaddr -e icmpv6.checksum.status "
      "-e _ws.malformed");
  ASSERT_EQ(r.status, 0) << "tshark is part of the test set-up (scripts/setup.sh): " << r.out;
  EXPECT_EQ(r.out, "135,2001:db8::1234:560b,02:00:00:00:00:0a,1,\n");
}

}  // namespace
}  // namespace vf::wire
