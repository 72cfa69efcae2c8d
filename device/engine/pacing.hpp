// When a QP may send its next packet: IBA static rate control (Vol. 1 9.11)
// -- a requester injects on a path no faster than the path's static rate
// (ibv_ah_attr.static_rate; IBV_RATE_MAX = the port's own rate, no pacing).
// Each QP has an eligible-at time; the requester sends only once it has
// passed, and each packet moves it on by the packet's time at that rate.
// This is also where a congestion-control rate limiter (DCQCN) paces a QP.
// Packets are paced on the bytes the engine emits (BTH to pad); link-layer
// headers are the port's.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "core/scheduler.hpp"

namespace vf::engine {

// Mb/s of an ibv_rate (libibverbs' ibv_rate_to_mbps table); 0 for
// IBV_RATE_MAX, and for a value that is no ibv_rate (kBadRate).
inline constexpr uint32_t kBadRate = UINT32_MAX;
inline constexpr uint32_t static_rate_mbps(uint8_t rate) {
  constexpr uint32_t kMbps[] = {0,      kBadRate, 2500,   10000,  30000,  5000,   20000,  40000,
                                60000,  80000,    120000, 14062,  56250,  112500, 168750, 25781,
                                103125, 206250,   309375, 28125,  53125,  425000, 637500};
  return rate < sizeof(kMbps) / sizeof(kMbps[0]) ? kMbps[rate] : kBadRate;
}

// A packet of `bytes` at `mbps` occupies this long (0 = not paced).
inline constexpr Nanos packet_time_ns(uint64_t bytes, uint32_t mbps) {
  return mbps == 0 ? 0 : Nanos(bytes * 8000 / mbps);
}

}  // namespace vf::engine
