#include "daemon/ip/ip_route_json.hpp"

#include <fmt/format.h>

#include "daemon/config/addr.hpp"
#include "dataplane/fabric/eth_switch.hpp"

namespace vf {

IpRouteView read_ip_routes(const dp::EthSwitch& sw) {
  IpRouteView v;
  const dp::Router& r = *sw.router();
  v.routes = r.routes().routes();
  v.port_up.resize(sw.nports() + 1);
  for (unsigned p = 1; p <= sw.nports(); ++p) v.port_up[p] = sw.port(p).connected() && sw.port(p).link_up();
  v.neighbours = r.neighbours();
  v.c = r.snapshot();
  return v;
}

namespace {

// The name of whatever has `mac` in the fabric: a host, or a router.
std::string owner_of(const config::Fabric& f, const Mac& mac) {
  for (const auto& h : f.hcas)
    if (h.mac == mac) return h.name;
  for (const auto& s : f.switches)
    if (s.router && s.router->mac == mac) return s.name;
  return {};
}

}  // namespace

nlohmann::json ip_routes_json(const config::Fabric& f, const config::Switch& sw, const IpRouteView& v) {
  using json = nlohmann::json;
  json routes = json::array();
  for (const dp::Ipv4Route& r : v.routes) {
    json j{{"dst", fmt::format("{}/{}", addr::format_ipv4(r.prefix), r.len)}};
    if (r.connected) {
      j["type"] = "connected";
    } else {
      j["type"] = r.hops.size() > 1 ? "ecmp" : "via";
      json hops = json::array();
      for (const dp::NextHop& h : r.hops)
        hops.push_back({{"port", h.port},
                        {"mac", addr::format_mac(h.mac)},
                        {"router", owner_of(f, h.mac)},
                        {"link", h.port < v.port_up.size() && v.port_up[h.port] ? "up" : "down"}});
      j["nexthops"] = std::move(hops);
    }
    routes.push_back(std::move(j));
  }
  json neigh = json::array();
  for (const auto& [ip, mac] : v.neighbours)
    neigh.push_back({{"ip", addr::format_ipv4(ip)}, {"mac", addr::format_mac(mac)}, {"station", owner_of(f, mac)}});
  const auto& rt = *sw.router;
  json ports = json::array();
  for (const uint32_t p : rt.routed_ports) ports.push_back(p);
  json out{{"mac", addr::format_mac(rt.mac)},
           {"routed_ports", std::move(ports)},
           {"routes", std::move(routes)},
           {"neighbours", std::move(neigh)},
           {"counters",
            {{"routed", v.c.routed},
             {"header_errors", v.c.header_errors},
             {"ttl_exceeded", v.c.ttl_exceeded},
             {"no_route", v.c.no_route},
             {"no_next_hop", v.c.no_next_hop},
             {"to_router", v.c.to_router},
             {"not_routable", v.c.not_routable},
             {"arp_requests", v.c.arp_requests},
             {"arp_replies", v.c.arp_replies},
             {"arp_resolved", v.c.arp_resolved},
             {"arp_failed", v.c.arp_failed},
             {"unresolved_discards", v.c.unresolved_discards}}}};
  if (rt.gateway) {
    out["gateway"] = fmt::format("{}/{}", addr::format_ipv4(rt.gateway), rt.prefix_len);
    out["vlan"] = rt.vlan;
  }
  return out;
}

}  // namespace vf
