// Link and network header accessors: every field against the bit layout drawn
// in the standards (IBA Vol. 1 §7.7 LRH, §8.3 GRH; RFC 791, 8200, 768; IEEE
// 802.3 / 802.1Q), written here independently of the accessors.
#include <gtest/gtest.h>

#include <cstring>

#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/grh.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "dataplane/wire/ipv6.hpp"
#include "dataplane/wire/lrh.hpp"
#include "dataplane/wire/udp.hpp"
#include "field_test_util.hpp"

namespace vf::wire {
namespace {

using test::check_fields;

TEST(Lrh, Constants) {
  EXPECT_EQ(kLrhLen, 8u);
  EXPECT_EQ(kVcrcLen, 2u);
  EXPECT_EQ(kLnhIbaLocal, 2);
  EXPECT_EQ(kLnhIbaGlobal, 3);
  EXPECT_EQ(kLrhPktLenMax, 2047);
}

TEST(Lrh, EveryField) {
  check_fields({
      VF_FIELD(8, 0, 4, lrh_vl, lrh_set_vl, uint8_t),
      VF_FIELD(8, 4, 4, lrh_lver, lrh_set_lver, uint8_t),
      VF_FIELD(8, 8, 4, lrh_sl, lrh_set_sl, uint8_t),
      VF_FIELD(8, 14, 2, lrh_lnh, lrh_set_lnh, uint8_t),
      VF_FIELD(8, 16, 16, lrh_dlid, lrh_set_dlid, uint16_t),
      VF_FIELD(8, 37, 11, lrh_pktlen, lrh_set_pktlen, uint16_t),
      VF_FIELD(8, 48, 16, lrh_slid, lrh_set_slid, uint16_t),
  });
}

TEST(Lrh, KnownBytes) {
  // VL 7, LVer 0, SL 1, LNH local, DLID 0x375C, PktLen 14, SLID 0x17D2: the
  // first bytes of a packet in Mellanox's MPGA sources.
  const uint8_t h[8] = {0x70, 0x12, 0x37, 0x5C, 0x00, 0x0E, 0x17, 0xD2};
  EXPECT_EQ(lrh_vl(h), 7);
  EXPECT_EQ(lrh_lver(h), 0);
  EXPECT_EQ(lrh_sl(h), 1);
  EXPECT_EQ(lrh_lnh(h), kLnhIbaLocal);
  EXPECT_EQ(lrh_dlid(h), 0x375C);
  EXPECT_EQ(lrh_pktlen(h), 14);
  EXPECT_EQ(lrh_slid(h), 0x17D2);
}

template <const uint8_t* (*Get)(const uint8_t*), void (*Set)(uint8_t*, const uint8_t*)>
void check_gid(unsigned off, unsigned hdr_len) {
  std::vector<uint8_t> buf(hdr_len + 32, 0x5A);
  uint8_t* h = buf.data() + 16;
  EXPECT_EQ(Get(h), h + off);
  uint8_t gid[16];
  for (int i = 0; i < 16; ++i) gid[i] = uint8_t(0xF0 + i);
  Set(h, gid);
  for (unsigned i = 0; i < buf.size(); ++i) {
    const bool in = i >= 16 + off && i < 16 + off + 16;
    EXPECT_EQ(buf[i], in ? gid[i - 16 - off] : 0x5A) << "byte " << i;
  }
}

TEST(Grh, EveryField) {
  EXPECT_EQ(kGrhLen, 40u);
  EXPECT_EQ(kGrhNxtHdrIba, 0x1B);
  check_fields({
      VF_FIELD(40, 0, 4, grh_ipver, grh_set_ipver, uint8_t),
      VF_FIELD(40, 4, 8, grh_tclass, grh_set_tclass, uint8_t),
      VF_FIELD(40, 12, 20, grh_flow_label, grh_set_flow_label, uint32_t),
      VF_FIELD(40, 32, 16, grh_paylen, grh_set_paylen, uint16_t),
      VF_FIELD(40, 48, 8, grh_nxthdr, grh_set_nxthdr, uint8_t),
      VF_FIELD(40, 56, 8, grh_hoplmt, grh_set_hoplmt, uint8_t),
  });
  check_gid<grh_sgid, grh_set_sgid>(8, 40);
  check_gid<grh_dgid, grh_set_dgid>(24, 40);
}

TEST(Ipv6, EveryField) {
  check_fields({
      VF_FIELD(40, 0, 4, ipv6_version, ipv6_set_version, uint8_t),
      VF_FIELD(40, 4, 8, ipv6_tclass, ipv6_set_tclass, uint8_t),
      VF_FIELD(40, 12, 20, ipv6_flow_label, ipv6_set_flow_label, uint32_t),
      VF_FIELD(40, 32, 16, ipv6_payload_len, ipv6_set_payload_len, uint16_t),
      VF_FIELD(40, 48, 8, ipv6_next_header, ipv6_set_next_header, uint8_t),
      VF_FIELD(40, 56, 8, ipv6_hop_limit, ipv6_set_hop_limit, uint8_t),
  });
  check_gid<ipv6_src, ipv6_set_src>(8, 40);
  check_gid<ipv6_dst, ipv6_set_dst>(24, 40);
}

TEST(Ipv4, EveryField) {
  check_fields({
      VF_FIELD(20, 0, 4, ipv4_version, ipv4_set_version, uint8_t),
      VF_FIELD(20, 4, 4, ipv4_ihl, ipv4_set_ihl, uint8_t),
      VF_FIELD(20, 8, 8, ipv4_tos, ipv4_set_tos, uint8_t),
      VF_FIELD(20, 8, 6, ipv4_dscp, ipv4_set_dscp, uint8_t),
      VF_FIELD(20, 14, 2, ipv4_ecn, ipv4_set_ecn, uint8_t),
      VF_FIELD(20, 16, 16, ipv4_total_len, ipv4_set_total_len, uint16_t),
      VF_FIELD(20, 32, 16, ipv4_id, ipv4_set_id, uint16_t),
      VF_FIELD(20, 48, 3, ipv4_flags, ipv4_set_flags, uint8_t),
      VF_FIELD(20, 51, 13, ipv4_frag_offset, ipv4_set_frag_offset, uint16_t),
      VF_FIELD(20, 64, 8, ipv4_ttl, ipv4_set_ttl, uint8_t),
      VF_FIELD(20, 72, 8, ipv4_proto, ipv4_set_proto, uint8_t),
      VF_FIELD(20, 80, 16, ipv4_checksum, ipv4_set_checksum, uint16_t),
      VF_FIELD(20, 96, 32, ipv4_src, ipv4_set_src, uint32_t),
      VF_FIELD(20, 128, 32, ipv4_dst, ipv4_set_dst, uint32_t),
  });
}

// The worked example of RFC 1071-style checksums used in many texts: the
// header 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7 has checksum 0xB861.
TEST(Ipv4, HeaderChecksumKnownAnswer) {
  uint8_t h[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                   0x00, 0x00, 0xC0, 0xA8, 0x00, 0x01, 0xC0, 0xA8, 0x00, 0xC7};
  EXPECT_FALSE(ipv4_checksum_ok(h));
  EXPECT_EQ(ipv4_compute_checksum(h), 0xB861);
  h[10] = 0x12;  // the stored value must not influence the computation
  EXPECT_EQ(ipv4_compute_checksum(h), 0xB861);
  ipv4_fill_checksum(h);
  EXPECT_EQ(h[10], 0xB8);
  EXPECT_EQ(h[11], 0x61);
  EXPECT_TRUE(ipv4_checksum_ok(h));
  h[15] ^= 0x04;
  EXPECT_FALSE(ipv4_checksum_ok(h));
}

TEST(Ipv4, HeaderChecksumCoversOptions) {
  uint8_t h[24] = {0x46, 0x00, 0x00, 0x18, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
                   0x0A, 0x00, 0x00, 0x01, 0x0A, 0x00, 0x00, 0x02, 0x94, 0x04, 0x00, 0x00};
  ipv4_fill_checksum(h);
  EXPECT_TRUE(ipv4_checksum_ok(h));
  h[22] = 1;  // inside the option
  EXPECT_FALSE(ipv4_checksum_ok(h));
}

TEST(Udp, EveryField) {
  EXPECT_EQ(kRoceV2Port, 4791);
  EXPECT_EQ(kUdpHdrLen, 8u);
  check_fields({
      VF_FIELD(8, 0, 16, udp_sport, udp_set_sport, uint16_t),
      VF_FIELD(8, 16, 16, udp_dport, udp_set_dport, uint16_t),
      VF_FIELD(8, 32, 16, udp_len, udp_set_len, uint16_t),
      VF_FIELD(8, 48, 16, udp_checksum, udp_set_checksum, uint16_t),
  });
}

uint64_t mac48(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 6; ++i) v = v << 8 | p[i];
  return v;
}
void put_mac48(uint8_t* mac, uint64_t v) {
  for (int i = 5; i >= 0; --i, v >>= 8) mac[i] = uint8_t(v);
}
uint64_t get_dst(const uint8_t* f) { return mac48(eth_dst(f)); }
uint64_t get_src(const uint8_t* f) { return mac48(eth_src(f)); }
void set_dst(uint8_t* f, uint64_t v) {
  uint8_t mac[6];
  put_mac48(mac, v);
  eth_set_dst(f, mac);
}
void set_src(uint8_t* f, uint64_t v) {
  uint8_t mac[6];
  put_mac48(mac, v);
  eth_set_src(f, mac);
}

TEST(Eth, EveryField) {
  check_fields({
      VF_FIELD(14, 0, 48, get_dst, set_dst, uint64_t),
      VF_FIELD(14, 48, 48, get_src, set_src, uint64_t),
      VF_FIELD(14, 96, 16, eth_type, eth_set_type, uint16_t),
  });
  uint8_t f[14];
  EXPECT_EQ(eth_dst(f), f);
  EXPECT_EQ(eth_src(f), f + 6);
  const uint8_t* cf = f;
  EXPECT_EQ(eth_dst(cf), cf);
  EXPECT_EQ(eth_src(cf), cf + 6);
}

TEST(Eth, Constants) {
  EXPECT_EQ(kEthHdrLen, 14u);
  EXPECT_EQ(kVlanLen, 4u);
  EXPECT_EQ(kEtherTypeIpv4, 0x0800);
  EXPECT_EQ(kEtherTypeIpv6, 0x86DD);
  EXPECT_EQ(kEtherTypeVlan, 0x8100);
  EXPECT_EQ(kEtherTypeMacControl, 0x8808);
  EXPECT_EQ(kEthPreambleSfdLen, 8u);
  EXPECT_EQ(kEthIfgLen, 12u);
  EXPECT_EQ(kEthFcsLen, 4u);
  EXPECT_EQ(kEthMinFrameLen, 64u);
}

TEST(Vlan, EveryField) {
  check_fields({
      VF_FIELD(4, 0, 16, vlan_tpid, vlan_set_tpid, uint16_t),
      VF_FIELD(4, 16, 3, vlan_pcp, vlan_set_pcp, uint8_t),
      VF_FLAG(4, 19, vlan_dei, vlan_set_dei),
      VF_FIELD(4, 20, 12, vlan_vid, vlan_set_vid, uint16_t),
  });
  // PCP 5, DEI 0, VID 0x123: TCI 0xA123.
  const uint8_t tag[4] = {0x81, 0x00, 0xA1, 0x23};
  EXPECT_EQ(vlan_pcp(tag), 5);
  EXPECT_FALSE(vlan_dei(tag));
  EXPECT_EQ(vlan_vid(tag), 0x123);
}

}  // namespace
}  // namespace vf::wire
