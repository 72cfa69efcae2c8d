#include "daemon/ip/ip_routing.hpp"

#include <algorithm>
#include <deque>
#include <limits>

namespace vf::routing {
namespace {

constexpr unsigned kUnreached = std::numeric_limits<unsigned>::max();

struct Adjacency {
  uint16_t port;       // this router's routed port
  std::size_t peer;    // the switch at the far end
};

bool routed(const config::Switch& s, uint32_t port) {
  return s.router && std::find(s.router->routed_ports.begin(), s.router->routed_ports.end(), port) !=
                         s.router->routed_ports.end();
}

std::size_t index_of(const config::Fabric& f, const std::string& name) {
  return std::size_t(f.find_switch(name) - f.switches.data());
}

// Routed links, each both ways; `only_up`: those link_up says are up.
std::vector<std::vector<Adjacency>> adjacencies(const config::Fabric& f, const std::function<bool(std::size_t)>& up,
                                                bool only_up) {
  std::vector<std::vector<Adjacency>> adj(f.switches.size());
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    const config::Link& l = f.links[i];
    if (!l.a.is_switch || !l.b.is_switch) continue;
    const std::size_t a = index_of(f, l.a.node), b = index_of(f, l.b.node);
    if (!routed(f.switches[a], l.a.port) || !routed(f.switches[b], l.b.port)) continue;
    if (only_up && !up(i)) continue;
    adj[a].push_back({uint16_t(l.a.port), b});
    adj[b].push_back({uint16_t(l.b.port), a});
  }
  return adj;
}

std::vector<unsigned> hops_to(std::size_t dst, const std::vector<std::vector<Adjacency>>& adj) {
  std::vector<unsigned> dist(adj.size(), kUnreached);
  std::deque<std::size_t> frontier{dst};
  dist[dst] = 0;
  while (!frontier.empty()) {
    const std::size_t n = frontier.front();
    frontier.pop_front();
    for (const Adjacency& a : adj[n])
      if (dist[a.peer] == kUnreached) {
        dist[a.peer] = dist[n] + 1;
        frontier.push_back(a.peer);
      }
  }
  return dist;
}

IpRoute subnet_route(const config::Switch::Router& gw) {
  IpRoute r;
  r.len = gw.prefix_len;
  r.prefix = gw.gateway & (gw.prefix_len ? ~0u << (32 - gw.prefix_len) : 0u);
  return r;
}

std::vector<IpRoute> static_routes(const config::Fabric& f, std::size_t self,
                                         const std::vector<std::vector<Adjacency>>& all) {
  std::vector<IpRoute> out;
  for (const auto& sr : *f.switches[self].router->routes) {
    IpRoute r;
    r.prefix = sr.prefix;
    r.len = sr.len;
    for (const uint32_t port : sr.via)
      for (const Adjacency& a : all[self])
        if (a.port == port) r.hops.push_back({a.port, f.switches[a.peer].router->mac});
    if (!r.hops.empty()) out.push_back(std::move(r));  // a group of unlinked ports routes nothing
  }
  return out;
}

}  // namespace

std::vector<RouterTable> ip_routes(const config::Fabric& f, const std::function<bool(std::size_t)>& link_up) {
  const auto live = adjacencies(f, link_up, true);
  const auto all = adjacencies(f, link_up, false);
  std::vector<RouterTable> tables;
  for (std::size_t i = 0; i < f.switches.size(); ++i)
    if (f.switches[i].router) tables.push_back({i, f.switches[i].router->routes ? static_routes(f, i, all)
                                                                                : std::vector<IpRoute>{}});
  for (std::size_t dst = 0; dst < f.switches.size(); ++dst) {
    const auto& gw = f.switches[dst].router;
    if (!gw || !gw->gateway) continue;
    const std::vector<unsigned> dist = hops_to(dst, live);
    for (RouterTable& t : tables) {
      if (t.sw == dst || f.switches[t.sw].router->routes || dist[t.sw] == kUnreached) continue;
      IpRoute r = subnet_route(*gw);
      for (const Adjacency& a : live[t.sw])
        if (dist[a.peer] + 1 == dist[t.sw]) r.hops.push_back({a.port, f.switches[a.peer].router->mac});
      t.routes.push_back(std::move(r));
    }
  }
  return tables;
}

}  // namespace vf::routing
