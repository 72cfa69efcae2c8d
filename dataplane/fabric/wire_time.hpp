// How long a frame occupies a wire, computed exactly.
//
// Time on a wire is kept as a rational number of nanoseconds, ns + rem/rate_bps,
// with 0 <= rem < rate_bps: serializing b bits takes b*1e9/rate ns, whose
// remainder is carried into the next frame instead of being rounded away. A
// link at 3 Gb/s therefore sends its millionth 1000-byte frame exactly at
// 1e6*8000/3 ns, not a rounding error per frame later. Only the instant handed
// to the Scheduler (whole ns) is rounded: up, because a frame has arrived only
// once its last bit has (see LinkDirection).
//
// Bytes counted on the wire:
//  - InfiniBand: the packet as stored, LRH through VCRC. The start/end
//    delimiters and idles between packets are not modelled; the rate is the data
//    rate after 8b/10b or 64b/66b coding, so coding overhead is in the rate.
//  - Ethernet: the mbuf holds the frame without FCS (as DPDK does). On the wire
//    it gains FCS 4, is padded to the 64-byte minimum (FCS included), and is
//    preceded by preamble+SFD 8 and followed by the inter-frame gap 12. A
//    minimum 64-byte frame (60 bytes in the mbuf) thus occupies 84 bytes, 67.2 ns
//    at 10 Gb/s.
#pragma once

#include <cstdint>

#include "dataplane/fabric/types.hpp"
#include "dataplane/wire/wire_bytes.hpp"

namespace vf::dp {

inline constexpr uint64_t wire_bytes(LinkLayer ll, uint32_t frame_len) {
  return ll == LinkLayer::kInfiniBand ? wire::ib_wire_bytes(frame_len) : wire::eth_wire_bytes(frame_len);
}

struct WireTime {
  Nanos ns = 0;
  uint64_t rem = 0;  // numerator over the link's rate_bps, always < rate_bps

  // The first whole nanosecond at or after this instant.
  Nanos ceil_ns() const { return ns + (rem != 0); }
  friend bool operator<(const WireTime& a, const WireTime& b) {
    return a.ns < b.ns || (a.ns == b.ns && a.rem < b.rem);
  }
};

// t + bits/rate seconds, exactly. bits*1e9 fits 64 bits for any frame below
// 2 GB; ports refuse frames larger than their MTU long before that.
inline WireTime add_bits(WireTime t, uint64_t bits, uint64_t rate_bps) {
  const uint64_t scaled = bits * 1'000'000'000ULL;
  t.ns += scaled / rate_bps;
  t.rem += scaled % rate_bps;
  if (t.rem >= rate_bps) {
    t.rem -= rate_bps;
    ++t.ns;
  }
  return t;
}

}  // namespace vf::dp
