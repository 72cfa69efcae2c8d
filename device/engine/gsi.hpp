// QP1, the General Services Interface (IBA 13.5.1): where a port's CM
// agent -- fabricd's connection manager -- sends and receives its MADs.
// No app owns QP1; a datagram to it (UD SEND Only, Q_Key 0x80010000, one
// 256-byte MAD) goes to the hook the daemon set, on the lcore, and the
// daemon's MADs leave from it as any UD datagram would, so captures, link
// counters, loss and congestion treat them as the fabric treats traffic.
#pragma once

#include <cstdint>
#include <functional>

namespace vf::engine {

inline constexpr uint32_t kGsiQpn = 1;
inline constexpr uint32_t kGsiQkey = 0x80010000;
inline constexpr unsigned kMadLen = 256;

// Who sent a MAD that arrived on QP1.
struct GsiSource {
  uint16_t slid = 0;
  bool has_grh = false;
  uint8_t sgid[16] = {};
};

// Called on the lcore with the 256 bytes of a MAD for QP1.
using GsiFn = std::function<void(const uint8_t* mad, const GsiSource& from)>;

}  // namespace vf::engine
