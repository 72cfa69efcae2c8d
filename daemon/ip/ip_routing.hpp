// The IPv4 routes of an Ethernet fabric's routers: what a leaf-spine's
// routing protocol (BGP or OSPF there) converges to, computed by fabricd
// from the config and the links that are up. Every gateway's subnet is a
// destination; a router's next hops towards it are its routed links to
// neighbours one hop closer (shortest paths, every equal one an ECMP
// member, parallel links included). A router with static routes gets those
// instead, whatever the links do (its hardware still skips dead members).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"

namespace vf::routing {

struct NextHop {
  uint16_t port = 0;  // a routed port of the router
  addr::Mac mac{};    // the neighbouring router's
  friend bool operator==(const NextHop&, const NextHop&) = default;
};

struct IpRoute {
  uint32_t prefix = 0;
  uint8_t len = 0;
  std::vector<NextHop> hops;  // the ECMP group
  friend bool operator==(const IpRoute&, const IpRoute&) = default;
};

struct RouterTable {
  std::size_t sw = 0;  // index into the fabric's switches
  std::vector<IpRoute> routes;  // without the gateway's connected route
};

// One table per router of `f`, in switch order; `link_up(i)`: whether link i
// of f.links is up now.
std::vector<RouterTable> ip_routes(const config::Fabric& f, const std::function<bool(std::size_t)>& link_up);

}  // namespace vf::routing
