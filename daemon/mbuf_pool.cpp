#include "daemon/mbuf_pool.hpp"

#include <algorithm>
#include <bit>

namespace vf {
namespace {
// Headers around the MTU's payload: LRH+GRH+BTH+CRCs on IB, Ethernet+IP+UDP
// +BTH+ICRC+FCS on RoCE; rounding it up only makes the estimate smaller.
constexpr uint64_t kFrameOverhead = 128;
}  // namespace

uint64_t link_flight_frames(const config::Link& l) {
  const uint64_t frame_bits = (uint64_t{l.mtu} + kFrameOverhead) * 8;
  // rate [b/s] x delay [ns] / 1e9, without overflowing: rate < 2^40, delay < 2^30.
  const long double bits = static_cast<long double>(l.rate_bps) * static_cast<long double>(l.delay_ns) / 1e9L;
  return static_cast<uint64_t>(bits / static_cast<long double>(frame_bits)) + 1;
}

uint32_t mbuf_pool_size(const config::Config& cfg) {
  uint64_t need = kMbufsReserve;
  for (const auto& f : cfg.fabrics)
    for (const auto& l : f.links) need += 2 * (kMbufsPerPort + link_flight_frames(l));
  need = std::clamp<uint64_t>(need, kMinPoolMbufs, kMaxPoolMbufs);
  return static_cast<uint32_t>(std::bit_ceil(need + 1) - 1);
}

}  // namespace vf
