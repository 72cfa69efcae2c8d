// `routes SWITCH` on a routing Ethernet switch: its IPv4 forwarding table
// (`ip route` words: connected, or via next hops with their ports), the
// hosts its gateway resolved (`ip neigh`), and what the router counted.
// Read on the lcore into plain values, formatted on the control thread.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "daemon/config/config.hpp"
#include "dataplane/fabric/router.hpp"

namespace vf {

struct IpRouteView {
  std::vector<dp::Ipv4Route> routes;
  std::vector<bool> port_up;  // by switch port number (index 0 unused)
  std::vector<std::pair<uint32_t, Mac>> neighbours;
  dp::RouterSnapshot c{};
};

// Lcore only.
IpRouteView read_ip_routes(const dp::EthSwitch& sw);
// Any thread. `sw`: the switch's config (its router's gateway and MAC).
nlohmann::json ip_routes_json(const config::Fabric& f, const config::Switch& sw, const IpRouteView& v);

}  // namespace vf
