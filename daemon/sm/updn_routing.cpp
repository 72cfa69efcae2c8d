// Up*/Down* routing (as opensm's updn): rank every switch by its hops from
// the nearest root; a link points "up" towards the lower (rank, config
// order), a total order, so "up" links form no cycle. A legal route is up
// hops followed by down hops. For each destination HCA:
//  - a switch whose down-links reach the HCA's switch routes down, by the
//    fewest down hops -- so a packet that has started descending keeps
//    descending;
//  - any other switch routes up, to the up-neighbour with the shortest
//    route, and its packets descend once they reach a switch of the first
//    kind.
// Every route therefore is up*down*, and the channel dependencies of the
// whole table are acyclic: no credit loop.
#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>

#include "daemon/sm/routing.hpp"

namespace vf {
namespace {

constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();

struct Hop {
  std::size_t to;   // switch index
  uint32_t port;    // our port towards it
};

struct SwitchGraph {
  std::vector<std::vector<Hop>> sw;                    // switch-to-switch links per switch
  std::map<std::string, std::pair<std::size_t, uint32_t>> hca_at;  // HCA -> (switch, port)
};

SwitchGraph build(const config::Fabric& f) {
  SwitchGraph g;
  g.sw.resize(f.switches.size());
  auto idx = [&](const std::string& n) { return std::size_t(f.find_switch(n) - f.switches.data()); };
  for (const auto& l : f.links) {
    if (l.a.is_switch && l.b.is_switch) {
      g.sw[idx(l.a.node)].push_back({idx(l.b.node), l.a.port});
      g.sw[idx(l.b.node)].push_back({idx(l.a.node), l.b.port});
    } else {
      const auto& s = l.a.is_switch ? l.a : l.b;
      const auto& h = l.a.is_switch ? l.b : l.a;
      g.hca_at[h.node] = {idx(s.node), s.port};
    }
  }
  return g;
}

}  // namespace

std::vector<std::string> default_updn_roots(const config::Fabric& f) {
  std::vector<std::string> roots;
  for (const auto& s : f.switches) {
    bool has_hca = false;
    for (const auto& l : f.links)
      has_hca |= (l.a.node == s.name && !l.b.is_switch) || (l.b.node == s.name && !l.a.is_switch);
    if (!has_hca) roots.push_back(s.name);
  }
  if (roots.empty() && !f.switches.empty()) roots.push_back(f.switches.front().name);
  return roots;
}

namespace {

// Every switch's up*/down* egress port towards switch `dst`, whose own way
// to the destination is `last_port`; kInf where there is none. Among equally
// short ways a switch takes the ((salt / stride[its rank]) mod n)-th by port
// number: destinations spread over a fat tree's spines and cores instead of
// all climbing through the lowest port (opensm balances its LFTs the same
// way), and each level uses other digits of the salt than the level below,
// so a spine's destinations spread over all its cores too. Any choice among
// them is up*/down*, so none can form a credit loop. `all_ties`, when given,
// receives each switch's equally short ports where there are two or more.
std::vector<uint32_t> updn_towards(const SwitchGraph& g, const std::vector<uint32_t>& rank,
                                   const std::vector<std::size_t>& order, std::size_t dst, uint32_t last_port,
                                   std::size_t salt, const std::vector<std::size_t>& stride,
                                   std::vector<std::vector<uint8_t>>* all_ties) {
  const std::size_t n = g.sw.size();
  const auto up = [&](std::size_t u, std::size_t v) { return std::pair{rank[v], v} < std::pair{rank[u], u}; };
  // Fewest down hops to dst: BFS backwards over down links.
  std::vector<uint32_t> down(n, kInf), route_len(n, kInf), port(n, kInf);
  down[dst] = 0;
  std::deque<std::size_t> q{dst};
  while (!q.empty()) {
    const std::size_t v = q.front();
    q.pop_front();
    for (const Hop& h : g.sw[v]) {  // h.to -> v is a down link when v -> h.to is up
      const std::size_t u = h.to;
      if (!up(v, u) || down[u] != kInf) continue;
      down[u] = down[v] + 1;
      q.push_back(u);
    }
  }
  // Roots first: a switch without a down route climbs to its best up-neighbour.
  std::vector<uint32_t> ties;  // the equally short ports of one switch
  for (const std::size_t u : order) {
    if (u == dst) {
      route_len[u] = 0;
      port[u] = last_port;
      continue;
    }
    ties.clear();
    for (const Hop& h : g.sw[u]) {
      const bool via_down = down[u] != kInf && !up(u, h.to) && down[h.to] == down[u] - 1;
      const bool via_up = down[u] == kInf && up(u, h.to) && route_len[h.to] != kInf;
      if (!via_down && !via_up) continue;
      const uint32_t len = via_down ? down[u] : route_len[h.to] + 1;
      if (len < route_len[u]) route_len[u] = len, ties.clear();
      if (len == route_len[u]) ties.push_back(h.port);
    }
    if (!ties.empty()) {
      std::sort(ties.begin(), ties.end());
      const std::size_t step = rank[u] < stride.size() ? stride[rank[u]] : 1;
      port[u] = ties[(salt / step) % ties.size()];
      if (all_ties && ties.size() > 1) (*all_ties)[u].assign(ties.begin(), ties.end());
    }
  }
  return port;
}

}  // namespace

Routes compute_updn_routes(const config::Fabric& f, const std::vector<std::string>& given, bool to_switches,
                           ArGroups* groups) {
  const SwitchGraph g = build(f);
  const std::size_t n = g.sw.size();
  // Rank: hops from the nearest root (multi-source BFS).
  std::vector<uint32_t> rank(n, kInf);
  std::deque<std::size_t> q;
  for (const auto& r : given.empty() ? default_updn_roots(f) : given) {
    const auto* s = f.find_switch(r);
    if (!s) continue;
    const std::size_t i = std::size_t(s - f.switches.data());
    if (rank[i] == 0) continue;
    rank[i] = 0;
    q.push_back(i);
  }
  while (!q.empty()) {
    const std::size_t u = q.front();
    q.pop_front();
    for (const Hop& h : g.sw[u])
      if (rank[h.to] == kInf) {
        rank[h.to] = rank[u] + 1;
        q.push_back(h.to);
      }
  }
  // u -> v is "up" when v comes first in (rank, config order).
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return std::pair{rank[a], a} < std::pair{rank[b], b}; });

  // A level's stride: the product of the up-degrees of the levels below it
  // (leaves deepest, stride 1), as a fat tree numbers its paths.
  uint32_t deepest = 0;
  for (std::size_t u = 0; u < n; ++u)
    if (rank[u] != kInf) deepest = std::max(deepest, rank[u]);
  std::vector<std::size_t> up_degree(deepest + 2, 1), stride(deepest + 2, 1);
  for (std::size_t u = 0; u < n; ++u) {
    if (rank[u] == kInf) continue;
    std::size_t d = 0;
    for (const Hop& h : g.sw[u]) d += std::pair{rank[h.to], h.to} < std::pair{rank[u], u};
    up_degree[rank[u]] = std::max(up_degree[rank[u]], d);
  }
  for (uint32_t r = deepest; r-- > 0;)
    stride[r] = std::min<std::size_t>(stride[r + 1] * up_degree[r + 1], std::size_t{1} << 32);

  Routes routes;
  std::vector<std::vector<uint8_t>> ties;
  const auto add = [&](const std::string& dest, std::size_t dst, uint32_t last_port, std::size_t salt,
                       ArGroups* into) {
    if (into) ties.assign(n, {});
    const std::vector<uint32_t> port = updn_towards(g, rank, order, dst, last_port, salt, stride, into ? &ties : nullptr);
    for (std::size_t u = 0; u < n; ++u) {
      if (port[u] != kInf) routes[f.switches[u].name][dest] = port[u];
      if (into && !ties[u].empty()) (*into)[f.switches[u].name][dest] = std::move(ties[u]);
    }
  };
  if (to_switches) {
    for (std::size_t t = 0; t < n; ++t) add(f.switches[t].name, t, 0, t, nullptr);  // port 0: the switch itself
    return routes;
  }
  for (std::size_t i = 0; i < f.hcas.size(); ++i)
    if (const auto at = g.hca_at.find(f.hcas[i].name); at != g.hca_at.end())
      add(f.hcas[i].name, at->second.first, at->second.second, i, groups);
  return routes;
}

}  // namespace vf
