// How many bytes a frame occupies on a link, for serialization time. The link
// model charges these, so goodput follows from the headers.
#pragma once

#include <cstddef>

#include "dataplane/wire/eth.hpp"

namespace vf::wire {

// An IB frame in an mbuf is complete (LRH..VCRC); the link carries it as is.
// (Start/end-of-packet delimiters and idles are part of the link encoding
// efficiency folded into the configured data rate, not counted per packet.)
constexpr size_t ib_wire_bytes(size_t frame_len) { return frame_len; }

// Ethernet frames sit in mbufs without FCS and unpadded. On the wire they gain
// the FCS, padding to the 64-byte minimum, preamble+SFD and the inter-frame gap.
constexpr size_t eth_wire_bytes(size_t frame_len) {
  size_t f = frame_len + kEthFcsLen;
  if (f < kEthMinFrameLen) f = kEthMinFrameLen;
  return f + kEthPreambleSfdLen + kEthIfgLen;
}

}  // namespace vf::wire
