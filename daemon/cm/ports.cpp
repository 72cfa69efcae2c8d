#include "daemon/cm/ports.hpp"

namespace vf::cm {

const Port* port_by_ip(const std::vector<Port>& ports, uint32_t ip) {
  for (const Port& p : ports)
    if (p.ipv4 && *p.ipv4 == ip) return &p;
  return nullptr;
}

bool reachable(const Port& from, const Port& to) {
  if (from.fabric != to.fabric || !from.ipv4 || !to.ipv4) return false;
  if (from.prefix_len == 0) return true;
  const uint32_t mask = ~uint32_t(0) << (32 - from.prefix_len);
  return (*from.ipv4 & mask) == (*to.ipv4 & mask) || from.gateway != 0;
}

}  // namespace vf::cm
