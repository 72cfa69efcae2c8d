// RoCEv2 framing on real mbufs: layout against a scapy-built packet, round
// trips over IPv4/IPv6 with and without 802.1Q, and every way a received
// frame can be wrong.
#include <gtest/gtest.h>

#include <cstring>

#include "crc_reference.hpp"
#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/framing.hpp"
#include "dataplane/wire/icrc.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "dataplane/wire/ipv6.hpp"
#include "dataplane/wire/transport.hpp"
#include "dataplane/wire/udp.hpp"
#include "framing_test_util.hpp"
#include "sample_frames.hpp"

namespace vf::wire {
namespace {

using test::Bytes;
using test::flip_bit;
using vf::wire::RxMeta;

const uint8_t kMacA[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0A};
const uint8_t kMacB[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0B};

// The route that reproduces samples::kRoceV4 behind an Ethernet header.
RoceRoute v4_route(bool vlan = false) {
  RoceRoute r;
  std::memcpy(r.src_mac, kMacA, 6);
  std::memcpy(r.dst_mac, kMacB, 6);
  r.vlan = vlan;
  r.vid = 0x123;
  r.pcp = 5;
  const uint8_t s[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1};
  const uint8_t d[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 2};
  std::memcpy(r.sgid, s, 16);
  std::memcpy(r.dgid, d, 16);
  r.traffic_class = 0x6A;
  r.hop_limit = 64;
  r.udp_sport = 0xC123;
  return r;
}

RoceRoute v6_route(bool vlan = false) {
  RoceRoute r = v4_route(vlan);
  const uint8_t s[16] = {0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const uint8_t d[16] = {0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  std::memcpy(r.sgid, s, 16);
  std::memcpy(r.dgid, d, 16);
  return r;
}

const Bytes kTransport = test::samples::transport_of(test::samples::kRoceV4, 28);  // 28 bytes

Bytes transport_packet(size_t payload) {
  Bytes t(kBthLen + payload + (4 - payload % 4) % 4);
  bth_set_opcode(t.data(), 0x0A);
  bth_set_padcnt(t.data(), unsigned((4 - payload % 4) % 4));
  bth_set_pkey(t.data(), 0xFFFF);
  bth_set_dqpn(t.data(), 0xABCDE);
  bth_set_psn(t.data(), 0xFFFFFF);
  for (size_t i = 0; i < payload; ++i) t[kBthLen + i] = uint8_t(i * 13 + 5);
  return t;
}

Bytes encap(const Bytes& transport, const RoceRoute& r) {
  rte_mbuf* m = test::mbuf_from(transport);
  EXPECT_TRUE(roce_encapsulate(m, r));
  Bytes f = test::mbuf_bytes(m);
  rte_pktmbuf_free(m);
  return f;
}

RxError decap(const Bytes& frame, RxMeta* meta = nullptr, Bytes* out = nullptr) {
  rte_mbuf* m = test::guarded_mbuf(frame);
  const RxError e = roce_decapsulate(m, meta);
  if (out) *out = test::mbuf_bytes(m);
  if (e != RxError::kOk) {
    EXPECT_EQ(test::mbuf_bytes(m), frame) << "a refused frame was modified";
  }
  rte_pktmbuf_free(m);
  return e;
}

TEST(RoceFraming, Ipv4KnownAnswer) {
  const Bytes f = encap(kTransport, v4_route());
  ASSERT_EQ(f.size(), 14 + 60u);
  const Bytes eth = {0x02, 0, 0, 0, 0, 0x0B, 0x02, 0, 0, 0, 0, 0x0A, 0x08, 0x00};
  EXPECT_EQ(Bytes(f.begin(), f.begin() + 14), eth);
  // scapy's packet, ICRC included (bytes 9b 82 ba f0).
  Bytes scapy = test::samples::kRoceV4;
  scapy.insert(scapy.end(), {0x9B, 0x82, 0xBA, 0xF0});
  EXPECT_EQ(Bytes(f.begin() + 14, f.end()), scapy);
}

TEST(RoceFraming, VlanTag) {
  const Bytes f = encap(kTransport, v4_route(true));
  ASSERT_EQ(f.size(), 18 + 60u);
  // TPID 0x8100, PCP 5 DEI 0 VID 0x123, then the IPv4 EtherType.
  const Bytes tag = {0x81, 0x00, 0xA1, 0x23, 0x08, 0x00};
  EXPECT_EQ(Bytes(f.begin() + 12, f.begin() + 18), tag);
  Bytes scapy = test::samples::kRoceV4;
  scapy.insert(scapy.end(), {0x9B, 0x82, 0xBA, 0xF0});
  EXPECT_EQ(Bytes(f.begin() + 18, f.end()), scapy);
}

TEST(RoceFraming, Ipv6Layout) {
  const Bytes f = encap(kTransport, v6_route());
  ASSERT_EQ(f.size(), 14 + 40 + 8 + 28 + 4u);
  EXPECT_EQ(f[12], 0x86);
  EXPECT_EQ(f[13], 0xDD);
  const uint8_t* ip = f.data() + 14;
  // Version 6, TClass 0x6A, FlowLabel 0, PayLen 40, NextHdr 17, HopLimit 64.
  const Bytes fixed = {0x66, 0xA0, 0x00, 0x00, 0x00, 0x28, 0x11, 0x40};
  EXPECT_EQ(Bytes(ip, ip + 8), fixed);
  EXPECT_EQ(std::memcmp(ip + 8, v6_route().sgid, 16), 0);
  EXPECT_EQ(std::memcmp(ip + 24, v6_route().dgid, 16), 0);
  const uint8_t* u = ip + 40;
  EXPECT_EQ(udp_sport(u), 0xC123);
  EXPECT_EQ(udp_dport(u), 4791);
  EXPECT_EQ(udp_len(u), 8 + 28 + 4);
  EXPECT_NE(udp_checksum(u), 0);
  EXPECT_TRUE(udp_checksum_ok_ipv6(ip, u, 40));
  EXPECT_EQ(Bytes(u + 8, u + 36), kTransport);
  // ICRC by the reference over a copy masked here.
  Bytes masked(8, 0xFF);
  masked.insert(masked.end(), ip, ip + 40 + 8 + 28);
  masked[8 + 0] |= 0x0F;
  masked[8 + 1] = masked[8 + 2] = masked[8 + 3] = 0xFF;
  masked[8 + 7] = 0xFF;
  masked[8 + 46] = masked[8 + 47] = 0xFF;
  masked[8 + 52] = 0xFF;
  const uint32_t icrc = test::reference_crc32(masked.data(), masked.size());
  EXPECT_EQ(get_le32(u + 36), icrc);
}

TEST(RoceFraming, MixedGidsUseIpv6) {
  RoceRoute r = v4_route();
  r.dgid[10] = 0;  // not IPv4-mapped any more
  const Bytes f = encap(kTransport, r);
  EXPECT_EQ(eth_type(f.data()), kEtherTypeIpv6);
  EXPECT_EQ(decap(f), RxError::kOk);
}

TEST(RoceFraming, RoundTrips) {
  for (bool v6 : {false, true}) {
    for (bool vlan : {false, true}) {
      for (size_t payload : {0u, 3u, 64u, 1024u, 4096u}) {
        SCOPED_TRACE(testing::Message() << "v6 " << v6 << " vlan " << vlan << " payload " << payload);
        const RoceRoute r = v6 ? v6_route(vlan) : v4_route(vlan);
        const Bytes t = transport_packet(payload);
        rte_mbuf* m = test::mbuf_from(t);
        ASSERT_TRUE(roce_encapsulate(m, r));
        const uint8_t* ip = rte_pktmbuf_mtod(m, uint8_t*) + (vlan ? 18 : 14);
        EXPECT_TRUE(v6 || ipv4_checksum_ok(ip));
        // A UD receive's GRH area: the IPv6 header, or 20 zeros and the IPv4 one.
        uint8_t want_grh[40] = {};
        if (v6)
          std::memcpy(want_grh, ip, 40);
        else
          std::memcpy(want_grh + 20, ip, 20);
        RxMeta meta;
        ASSERT_EQ(roce_decapsulate(m, &meta), RxError::kOk);
        EXPECT_EQ(std::memcmp(meta.grh, want_grh, 40), 0);
        EXPECT_EQ(test::mbuf_bytes(m), t);
        EXPECT_TRUE(meta.has_grh);
        EXPECT_EQ(std::memcmp(meta.sgid, r.sgid, 16), 0);
        EXPECT_EQ(std::memcmp(meta.dgid, r.dgid, 16), 0);
        EXPECT_EQ(meta.traffic_class, 0x6A);
        // What mlx5 reports as a RoCE completion's sl (UCX relies on it):
        // UDP-encapsulated, IPv6 (0x9) or IPv4 (0xA); never the PCP.
        EXPECT_EQ(meta.sl, v6 ? 0x9 : 0xA);
        EXPECT_EQ(meta.slid, 0);
        EXPECT_EQ(meta.dlid, 0);
        rte_pktmbuf_free(m);
      }
    }
  }
}

TEST(RoceFraming, EncapsulateRefusesWithoutSideEffects) {
  const Bytes t = transport_packet(16);
  auto refused = [](rte_mbuf* m, const RoceRoute& r) {
    const uint16_t off = m->data_off, len = rte_pktmbuf_data_len(m);
    EXPECT_FALSE(roce_encapsulate(m, r));
    EXPECT_EQ(m->data_off, off);
    EXPECT_EQ(rte_pktmbuf_data_len(m), len);
    rte_pktmbuf_free(m);
  };
  refused(test::mbuf_from(t, 14 + 20 + 8 - 1), v4_route());
  refused(test::mbuf_from(t, 18 + 40 + 8 - 1), v6_route(true));
  {
    rte_mbuf* m = test::mbuf_from(t);
    m->data_off = uint16_t(m->buf_len - t.size() - 3);
    refused(m, v4_route());
  }
  refused(test::chained_mbuf(t, 12), v4_route());
  refused(test::mbuf_from(Bytes(11, 0)), v4_route());
  // Exactly enough room is enough.
  rte_mbuf* m = test::mbuf_from(t, 18 + 40 + 8);
  m->data_off = 18 + 40 + 8;
  EXPECT_TRUE(roce_encapsulate(m, v6_route(true)));
  rte_pktmbuf_free(m);
}

TEST(RoceFraming, EveryTruncationIsRefusedWithoutOverreading) {
  for (bool v6 : {false, true}) {
    for (bool vlan : {false, true}) {
      const Bytes f = encap(transport_packet(37), v6 ? v6_route(vlan) : v4_route(vlan));
      for (size_t len = 0; len < f.size(); ++len)
        ASSERT_EQ(decap(Bytes(f.begin(), f.begin() + long(len))), RxError::kTruncated)
            << "v6 " << v6 << " vlan " << vlan << " len " << len;
      EXPECT_EQ(decap(f), RxError::kOk);
    }
  }
}

TEST(RoceFraming, EthernetPaddingIsIgnored) {
  // Short frames arrive padded to 60 bytes (64 with the FCS we never hold).
  Bytes f = encap(Bytes(kTransport.begin(), kTransport.begin() + 12), v4_route());
  ASSERT_EQ(f.size(), 14 + 20 + 8 + 12 + 4u);
  f.resize(60, 0);
  Bytes out;
  EXPECT_EQ(decap(f, nullptr, &out), RxError::kOk);
  EXPECT_EQ(out, Bytes(kTransport.begin(), kTransport.begin() + 12));
}

TEST(RoceFraming, EveryFlippedBitIsCaughtOrHarmless) {
  for (bool v6 : {false, true}) {
    const Bytes f = encap(transport_packet(21), v6 ? v6_route() : v4_route());
    for (size_t bit = 0; bit < f.size() * 8; ++bit) {
      Bytes g = f;
      flip_bit(g, bit);
      const RxError e = decap(g);
      const size_t ip_bit = bit - 14 * 8;
      // MACs: no FCS in mbufs, so nothing covers them here.
      const bool mac = bit < 96;
      // IPv6 TClass, FlowLabel, HopLimit: variant, outside the UDP pseudo-header.
      const bool v6_variant = v6 && bit >= 14 * 8 && ((ip_bit >= 4 && ip_bit < 32) || (ip_bit >= 56 && ip_bit < 64));
      // BTH byte 4 (FECN, BECN, resv6): variant for the ICRC; a v6 UDP checksum
      // still covers it.
      const size_t bth = 14 + (v6 ? 40 : 20) + 8;
      const bool resv8a = !v6 && bit / 8 == bth + 4;
      if (mac || v6_variant || resv8a) {
        EXPECT_EQ(e, RxError::kOk) << "v6 " << v6 << " bit " << bit;
      } else {
        EXPECT_NE(e, RxError::kOk) << "v6 " << v6 << " bit " << bit;
      }
    }
  }
}

// Applies `change` to the frame's IP header, then fixes the IPv4 checksum.
template <class F>
Bytes changed(const Bytes& f, F change, bool fix_ip_checksum = true) {
  Bytes g = f;
  uint8_t* ip = g.data() + 14;
  change(ip);
  if (fix_ip_checksum && ipv4_version(ip) == 4) ipv4_fill_checksum(ip);
  return g;
}

TEST(RoceFraming, HeaderErrors) {
  const Bytes f4 = encap(kTransport, v4_route());
  const Bytes f6 = encap(kTransport, v6_route());
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { ip[1] = 0x02; }, false)), RxError::kBadIpChecksum);
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { ipv4_set_version(ip, 5); })), RxError::kBadVersion);
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { ipv4_set_ihl(ip, 4); })), RxError::kBadLength);
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { ipv4_set_total_len(ip, 61); })), RxError::kTruncated);
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { ipv4_set_total_len(ip, 19); })), RxError::kBadLength);
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { ipv4_set_total_len(ip, 27); })), RxError::kBadLength);
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { ipv4_set_proto(ip, 6); })), RxError::kNotRoce);
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { ipv4_set_flags(ip, kIpv4FlagMf); })), RxError::kFragmented);
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { ipv4_set_frag_offset(ip, 1); })), RxError::kFragmented);
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { udp_set_dport(ip + 20, 4790); })), RxError::kNotRoce);
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { udp_set_len(ip + 20, 39); })), RxError::kBadLength);
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { udp_set_checksum(ip + 20, 1); })), RxError::kBadUdpChecksum);
  // A correct non-zero UDP checksum over IPv4 is accepted.
  EXPECT_EQ(decap(changed(f4, [](uint8_t* ip) { udp_set_checksum(ip + 20, udp_checksum_ipv4(ip, ip + 20, 40)); })),
            RxError::kOk);
  // The IPv4 payload must hold UDP + BTH + ICRC.
  {
    Bytes g = encap(Bytes(kTransport.begin(), kTransport.begin() + 12), v4_route());
    uint8_t* ip = g.data() + 14;
    ipv4_set_total_len(ip, 20 + 8 + 12);
    ipv4_fill_checksum(ip);
    udp_set_len(ip + 20, 8 + 12);
    EXPECT_EQ(decap(g), RxError::kBadLength);
  }

  EXPECT_EQ(decap(changed(f6, [](uint8_t* ip) { ipv6_set_version(ip, 4); }, false)), RxError::kBadVersion);
  EXPECT_EQ(decap(changed(f6, [](uint8_t* ip) { ipv6_set_version(ip, 7); }, false)), RxError::kBadVersion);
  EXPECT_EQ(decap(changed(f6, [](uint8_t* ip) { ipv6_set_next_header(ip, 0); })), RxError::kNotRoce);
  EXPECT_EQ(decap(changed(f6, [](uint8_t* ip) { ipv6_set_payload_len(ip, 41); })), RxError::kTruncated);
  EXPECT_EQ(decap(changed(f6, [](uint8_t* ip) { ipv6_set_payload_len(ip, 7); })), RxError::kBadLength);
  EXPECT_EQ(decap(changed(f6, [](uint8_t* ip) { udp_set_dport(ip + 40, 4792); })), RxError::kNotRoce);
  EXPECT_EQ(decap(changed(f6, [](uint8_t* ip) { ip[70] ^= 1; })), RxError::kBadUdpChecksum);
  // A zero UDP checksum means "not computed" and leaves the ICRC in charge.
  EXPECT_EQ(decap(changed(f6, [](uint8_t* ip) { udp_set_checksum(ip + 40, 0); })), RxError::kOk);
  EXPECT_EQ(decap(changed(f6, [](uint8_t* ip) {
              ip[70] ^= 1;
              udp_set_checksum(ip + 40, 0);
            })),
            RxError::kBadIcrc);

  for (uint16_t type : {uint16_t(0x88A8), uint16_t(0x8808), uint16_t(0x0806), uint16_t(0x8915)}) {
    Bytes g = f4;
    put16(g.data() + 12, type);
    EXPECT_EQ(decap(g), RxError::kBadEtherType) << type;
  }
  Bytes tagged = encap(kTransport, v4_route(true));
  put16(tagged.data() + 16, 0x8100);  // a second tag
  EXPECT_EQ(decap(tagged), RxError::kBadEtherType);

  rte_mbuf* chained = test::chained_mbuf(f4, 30);
  EXPECT_EQ(roce_decapsulate(chained, nullptr), RxError::kNonContiguous);
  rte_pktmbuf_free(chained);
}

TEST(RoceFraming, IcrcCoversPayloadAndInvariantHeaders) {
  const Bytes f4 = encap(transport_packet(40), v4_route());
  Bytes g = f4;
  g[g.size() - 10] ^= 0x40;
  EXPECT_EQ(decap(g), RxError::kBadIcrc);
  g = changed(f4, [](uint8_t* ip) { ipv4_set_id(ip, 5); });
  EXPECT_EQ(decap(g), RxError::kBadIcrc);
  g = changed(f4, [](uint8_t* ip) { udp_set_sport(ip + 20, 1); });
  EXPECT_EQ(decap(g), RxError::kBadIcrc);
  // TOS and TTL may change in flight.
  g = changed(f4, [](uint8_t* ip) {
    ipv4_set_tos(ip, 0x03);
    ipv4_set_ttl(ip, 3);
  });
  RxMeta meta;
  EXPECT_EQ(decap(g, &meta), RxError::kOk);
  EXPECT_EQ(meta.traffic_class, 0x03);
}

TEST(RoceFraming, RefusedFrameLeavesMetaAlone) {
  Bytes f = encap(kTransport, v4_route());
  f[f.size() - 1] ^= 1;
  RxMeta meta;
  meta.traffic_class = 0x77;
  EXPECT_EQ(decap(f, &meta), RxError::kBadIcrc);
  EXPECT_EQ(meta.traffic_class, 0x77);
  EXPECT_FALSE(meta.has_grh);
}

TEST(RoceFraming, EcnMarking) {
  for (bool v6 : {false, true}) {
    for (bool vlan : {false, true}) {
      RoceRoute r = v6 ? v6_route(vlan) : v4_route(vlan);
      r.traffic_class = uint8_t(26 << 2 | kEcnEct0);
      rte_mbuf* m = test::mbuf_from(encap(kTransport, r));
      EXPECT_TRUE(roce_frame_mark_ce(m));
      EXPECT_TRUE(roce_frame_mark_ce(m));  // already CE
      RxMeta meta;
      ASSERT_EQ(roce_decapsulate(m, &meta), RxError::kOk);  // IPv4 checksum still right
      EXPECT_EQ(meta.traffic_class, 26 << 2 | kEcnCe);
      rte_pktmbuf_free(m);

      r.traffic_class = uint8_t(26 << 2 | kEcnNotEct);
      const Bytes f = encap(kTransport, r);
      m = test::mbuf_from(f);
      EXPECT_FALSE(roce_frame_mark_ce(m));
      EXPECT_EQ(test::mbuf_bytes(m), f);
      rte_pktmbuf_free(m);
    }
  }
  // A header that was corrupt stays corrupt.
  RoceRoute r = v4_route();
  r.traffic_class = kEcnEct1;
  Bytes f = encap(kTransport, r);
  f[14 + 12] ^= 0x01;
  rte_mbuf* m = test::mbuf_from(f);
  EXPECT_TRUE(roce_frame_mark_ce(m));
  EXPECT_EQ(roce_decapsulate(m, nullptr), RxError::kBadIpChecksum);
  rte_pktmbuf_free(m);
  for (size_t len = 0; len < 14 + 20; ++len) {
    m = test::guarded_mbuf(Bytes(f.begin(), f.begin() + long(len)));
    EXPECT_FALSE(roce_frame_mark_ce(m)) << len;
    rte_pktmbuf_free(m);
  }
}

}  // namespace
}  // namespace vf::wire
