// What switches read from a frame to forward it, without parsing or checking
// it: the frame may be anything, so every peek checks the data length first
// and reports "not there" instead of reading past the mbuf's data.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <optional>

#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/lrh.hpp"

namespace vf::wire {

inline const uint8_t* frame_data(const rte_mbuf* m) { return rte_pktmbuf_mtod(m, const uint8_t*); }

inline std::optional<uint16_t> ib_frame_dlid(const rte_mbuf* m) {
  if (rte_pktmbuf_data_len(m) < kLrhLen) return std::nullopt;
  return lrh_dlid(frame_data(m));
}

inline std::optional<uint8_t> ib_frame_vl(const rte_mbuf* m) {
  if (rte_pktmbuf_data_len(m) < kLrhLen) return std::nullopt;
  return lrh_vl(frame_data(m));
}

inline std::optional<uint8_t> ib_frame_sl(const rte_mbuf* m) {
  if (rte_pktmbuf_data_len(m) < kLrhLen) return std::nullopt;
  return lrh_sl(frame_data(m));
}

// nullptr when the frame is shorter than an Ethernet header.
inline const uint8_t* eth_frame_dst(const rte_mbuf* m) {
  if (rte_pktmbuf_data_len(m) < kEthHdrLen) return nullptr;
  return eth_dst(frame_data(m));
}

// The 802.1p priority: 0 for an untagged frame, nullopt if the frame is too
// short for its Ethernet header or its tag.
inline std::optional<uint8_t> eth_frame_pcp(const rte_mbuf* m) {
  const uint16_t len = rte_pktmbuf_data_len(m);
  if (len < kEthHdrLen) return std::nullopt;
  const uint8_t* f = frame_data(m);
  if (eth_type(f) != kEtherTypeVlan) return uint8_t{0};
  if (len < kEthHdrLen + kVlanLen) return std::nullopt;
  return vlan_pcp(f + kEthTypeOffset);
}

// Where an Ethernet frame's IP header starts, tagged or not, and its
// version; version 0 when the frame is not IPv4/IPv6 or too short to tell.
struct IpAt {
  unsigned offset = 0;
  uint8_t version = 0;
};

inline IpAt eth_frame_ip(const rte_mbuf* m) {
  const uint16_t len = rte_pktmbuf_data_len(m);
  if (len < kEthHdrLen) return {};
  const uint8_t* f = frame_data(m);
  unsigned l3 = kEthHdrLen;
  uint16_t type = eth_type(f);
  if (type == kEtherTypeVlan) {
    if (len < kEthHdrLen + kVlanLen) return {};
    type = get16(f + kEthTypeOffset + kVlanLen);
    l3 += kVlanLen;
  }
  if (len < l3 + 2) return {};
  const uint8_t v = f[l3] >> 4;
  if ((type == kEtherTypeIpv4 && v == 4) || (type == kEtherTypeIpv6 && v == 6)) return {l3, v};
  return {};
}

// The IP traffic class (IPv4 TOS / IPv6 traffic class: DSCP << 2 | ECN) of
// an IP frame; -1 when it is not IP.
inline int eth_frame_tclass(const rte_mbuf* m) {
  const IpAt ip = eth_frame_ip(m);
  if (!ip.version) return -1;
  const uint8_t* h = frame_data(m) + ip.offset;
  return ip.version == 4 ? h[1] : (h[0] & 0x0F) << 4 | h[1] >> 4;
}

// The IP DSCP of an IPv4 or IPv6 frame; -1 when it is not IP.
inline int eth_frame_dscp(const rte_mbuf* m) {
  const int tc = eth_frame_tclass(m);
  return tc < 0 ? -1 : tc >> 2;
}

// The IP ECN codepoint; -1 when it is not IP.
inline int eth_frame_ecn(const rte_mbuf* m) {
  const int tc = eth_frame_tclass(m);
  return tc < 0 ? -1 : tc & 0x3;
}

}  // namespace vf::wire
