#include "daemon/lcore/mbuf_pool.hpp"

#include <algorithm>
#include <bit>

#include "daemon/config/link_attrs.hpp"

namespace vf {

uint64_t link_flight_frames(config::LinkLayer ll, const config::Link& l) {
  // Counted in frames of the path MTU's payload alone (RoCE: 1024 bytes on a
  // 1500-byte IP MTU): leaving the headers out errs towards more frames.
  const uint64_t frame_bits = uint64_t{std::max(config::active_mtu_bytes(ll, l), 256u)} * 8;
  // rate [b/s] x delay [ns] / 1e9 in long double: rates reach 1.2 Tb/s
  // (12X NDR) and delays 1 s, beyond 64-bit integer products.
  const long double bits = static_cast<long double>(l.rate_bps) * static_cast<long double>(l.delay_ns) / 1e9L;
  return static_cast<uint64_t>(bits / static_cast<long double>(frame_bits)) + 1;
}

uint32_t mbuf_pool_size(const config::Config& cfg) {
  uint64_t need = kMbufsReserve;
  for (const auto& f : cfg.fabrics)
    for (const auto& l : f.links) need += 2 * (kMbufsPerPort + link_flight_frames(f.link_layer, l));
  need = std::clamp<uint64_t>(need, kMinPoolMbufs, kMaxPoolMbufs);
  return static_cast<uint32_t>(std::bit_ceil(need + 1) - 1);
}

}  // namespace vf
