// Adding, removing and rewriting a frame's 802.1Q tag in place, as a bridge
// does when a frame leaves a port tagged or untagged. The mbuf must not be
// shared (the dataplane never shares frames: captures and duplicates are
// copies).
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>

#include "dataplane/wire/eth.hpp"

namespace vf::wire {

inline bool frame_tagged(const rte_mbuf* m) {
  return rte_pktmbuf_data_len(m) >= kEthHdrLen + kVlanLen &&
         eth_type(rte_pktmbuf_mtod(m, const uint8_t*)) == kEtherTypeVlan;
}

// Inserts a tag after the source MAC; false when the mbuf has no headroom.
inline bool frame_push_vlan(rte_mbuf* m, uint8_t pcp, uint16_t vid) {
  if (rte_pktmbuf_data_len(m) < kEthHdrLen) return false;
  auto* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, kVlanLen));
  if (!f) return false;
  std::memmove(f, f + kVlanLen, 2 * kEthAddrLen);
  uint8_t* t = f + kEthTypeOffset;
  put16(t, kEtherTypeVlan);
  put16(t + 2, uint16_t((pcp & 7u) << 13 | (vid & 0x0FFFu)));
  return true;
}

// Removes the tag of a tagged frame (frame_tagged).
inline void frame_pop_vlan(rte_mbuf* m) {
  auto* f = rte_pktmbuf_mtod(m, uint8_t*);
  std::memmove(f + kVlanLen, f, 2 * kEthAddrLen);
  rte_pktmbuf_adj(m, kVlanLen);
}

}  // namespace vf::wire
