#include "dataplane/fabric/ipv4_routes.hpp"

#include <rte_hash_crc.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "dataplane/wire/ipv4.hpp"

namespace vf::dp {

void Ipv4Routes::set(std::vector<Ipv4Route> routes) {
  if (routes.size() > kMaxRoutes) throw std::invalid_argument("more than " + std::to_string(kMaxRoutes) + " routes");
  for (const Ipv4Route& r : routes) {
    if (r.len > 32) throw std::invalid_argument("a prefix length over 32");
    if (r.prefix & ~prefix_mask(r.len)) throw std::invalid_argument("a prefix with host bits set");
    if (!r.connected && (r.hops.empty() || r.hops.size() > kMaxHops))
      throw std::invalid_argument("an ECMP group needs 1.." + std::to_string(kMaxHops) + " next hops");
  }
  std::stable_sort(routes.begin(), routes.end(), [](const Ipv4Route& a, const Ipv4Route& b) { return a.len > b.len; });
  for (size_t i = 1; i < routes.size(); ++i)
    if (routes[i].len == routes[i - 1].len && routes[i].prefix == routes[i - 1].prefix)
      throw std::invalid_argument("a prefix routed twice");
  routes_ = std::move(routes);
}

uint32_t ecmp_hash(const uint8_t* ip, unsigned len, uint32_t seed) {
  uint32_t h = rte_hash_crc_4byte(wire::ipv4_src(ip), seed);
  h = rte_hash_crc_4byte(wire::ipv4_dst(ip), h);
  const uint8_t proto = wire::ipv4_proto(ip);
  h = rte_hash_crc_1byte(proto, h);
  const unsigned l4 = wire::ipv4_ihl(ip) * 4u;
  constexpr uint8_t kTcp = 6;
  if ((proto == wire::kIpProtoUdp || proto == kTcp) && len >= l4 + 4 && wire::ipv4_frag_offset(ip) == 0)
    h = rte_hash_crc_4byte(wire::get32(ip + l4), h);  // source and destination port
  return h;
}

}  // namespace vf::dp
