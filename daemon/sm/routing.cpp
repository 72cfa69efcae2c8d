#include "daemon/sm/routing.hpp"

#include <deque>
#include <vector>

namespace vf {
namespace {

struct Adjacent {
  std::string node;       // neighbour (switch or HCA)
  uint32_t local_port;    // our port towards it (1 for an HCA)
};

}  // namespace

Routes compute_min_hop_routes(const config::Fabric& fabric, bool to_switches) {
  std::map<std::string, std::vector<Adjacent>> adj;
  for (const auto& l : fabric.links) {
    adj[l.a.node].push_back({l.b.node, l.a.port});
    adj[l.b.node].push_back({l.a.node, l.b.port});
  }
  Routes routes;
  std::vector<std::string> dests;
  if (to_switches)
    for (const auto& s : fabric.switches) dests.push_back(s.name);
  else
    for (const auto& h : fabric.hcas) dests.push_back(h.name);
  // BFS outward from each destination: the first time a switch is reached,
  // the port it was reached through (its port towards the previous hop) is
  // its route back. A switch reaches itself through port 0.
  for (const std::string& dest : dests) {
    if (to_switches) routes[dest][dest] = 0;
    std::map<std::string, bool> seen{{dest, true}};
    std::deque<std::string> frontier{dest};
    while (!frontier.empty()) {
      std::string cur = frontier.front();
      frontier.pop_front();
      for (const auto& next : adj[cur]) {
        if (seen[next.node]) continue;
        seen[next.node] = true;
        if (!fabric.find_switch(next.node)) continue;  // HCAs do not forward
        for (const auto& back : adj[next.node])
          if (back.node == cur) {
            routes[next.node][dest] = back.local_port;
            break;
          }
        frontier.push_back(next.node);
      }
    }
  }
  return routes;
}

Routes compute_routes(const config::Fabric& fabric, bool to_switches, ArGroups* groups) {
  if (fabric.link_layer == config::LinkLayer::Infiniband && fabric.sm.routing == config::Routing::UpDown)
    return compute_updn_routes(fabric, fabric.sm.roots, to_switches, groups);
  return compute_min_hop_routes(fabric, to_switches);
}

}  // namespace vf
