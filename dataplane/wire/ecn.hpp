// The IP ECN field of an Ethernet frame (RFC 3168): what a switch reads to
// decide whether a frame may be marked, and the CE mark itself. An IPv4
// header's checksum follows the changed TOS byte incrementally (RFC 1624),
// so the frame stays valid for every receiver; RoCEv2's ICRC masks the TOS
// and traffic class, so it needs no change.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/frame_peek.hpp"
#include "dataplane/wire/ipv4.hpp"

namespace vf::wire {

// Where the IP header starts and which version it is; 0 when the frame is
// not IPv4/IPv6 or too short for the field.
struct IpAt {
  unsigned offset = 0;
  uint8_t version = 0;
};

inline IpAt frame_ip(const rte_mbuf* m) {
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
  if (type == kEtherTypeIpv4 && len >= l3 + kIpv4HdrLen && f[l3] >> 4 == 4) return {l3, 4};
  if (type == kEtherTypeIpv6 && len >= l3 + 2 && f[l3] >> 4 == 6) return {l3, 6};
  return {};
}

// The frame's ECN codepoint, or -1 when it is not IP.
inline int frame_ecn(const rte_mbuf* m) {
  const IpAt ip = frame_ip(m);
  if (!ip.version) return -1;
  const uint8_t* h = frame_data(m) + ip.offset;
  return ip.version == 4 ? ipv4_ecn(h) : (h[1] >> 4) & 0x3;
}

// Sets CE on an ECN-capable (ECT(0)/ECT(1)) IP frame; false, and the frame
// untouched, when it is not ECT (or already CE).
inline bool frame_mark_ce(rte_mbuf* m) {
  const IpAt ip = frame_ip(m);
  const int ecn = frame_ecn(m);
  if (ecn != kEcnEct0 && ecn != kEcnEct1) return false;
  uint8_t* h = rte_pktmbuf_mtod(m, uint8_t*) + ip.offset;
  if (ip.version == 6) {
    h[1] = uint8_t(h[1] | kEcnCe << 4);
    return true;
  }
  // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') over the 16-bit word holding the TOS.
  const uint16_t old_word = get16(h);
  ipv4_set_ecn(h, kEcnCe);
  const uint16_t new_word = get16(h);
  uint32_t sum = uint16_t(~get16(h + 10)) + uint32_t(uint16_t(~old_word)) + new_word;
  sum = (sum & 0xFFFF) + (sum >> 16);
  sum = (sum & 0xFFFF) + (sum >> 16);
  put16(h + 10, uint16_t(~sum));
  return true;
}

}  // namespace vf::wire
