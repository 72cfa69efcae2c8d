#include "daemon/sm/mcast_tree.hpp"

#include <algorithm>
#include <deque>
#include <optional>

namespace vf::sm {
namespace {

struct Hop {
  size_t to;
  uint32_t port;      // ours towards `to`
  uint32_t to_port;   // `to`'s towards us
};

struct Graph {
  std::vector<std::vector<Hop>> adj;  // switch-to-switch links, config order
  std::vector<std::vector<uint32_t>> member_ports;  // per switch: ports facing member HCAs
};

Graph build(const config::Fabric& f, const std::set<std::string>& members) {
  Graph g;
  g.adj.resize(f.switches.size());
  g.member_ports.resize(f.switches.size());
  auto idx = [&](const std::string& n) { return size_t(f.find_switch(n) - f.switches.data()); };
  for (const config::Link& l : f.links) {
    if (l.a.is_switch && l.b.is_switch) {
      if (l.a.node == l.b.node) continue;  // a loopback cable carries no tree
      g.adj[idx(l.a.node)].push_back({idx(l.b.node), l.a.port, l.b.port});
      g.adj[idx(l.b.node)].push_back({idx(l.a.node), l.b.port, l.a.port});
      continue;
    }
    const config::Endpoint& s = l.a.is_switch ? l.a : l.b;
    const config::Endpoint& h = l.a.is_switch ? l.b : l.a;
    if (s.is_switch && members.count(h.node)) g.member_ports[idx(s.node)].push_back(s.port);
  }
  return g;
}

}  // namespace

McastTree compute_mcast_tree(const config::Fabric& f, const std::vector<std::string>& roots,
                             const std::set<std::string>& members) {
  const size_t n = f.switches.size();
  const Graph g = build(f, members);
  std::vector<McastPorts> mask(n);
  std::vector<std::optional<Hop>> parent(n);  // the hop towards the part's root
  std::vector<bool> seen(n, false), on_tree(n, false);
  std::vector<size_t> starts;
  for (const std::string& r : roots)
    if (const config::Switch* s = f.find_switch(r)) starts.push_back(size_t(s - f.switches.data()));
  for (size_t i = 0; i < n; ++i) starts.push_back(i);

  for (size_t start : starts) {
    if (seen[start]) continue;
    // One connected part: its spanning tree, breadth first.
    std::vector<size_t> part{start};
    seen[start] = true;
    for (size_t k = 0; k < part.size(); ++k)
      for (const Hop& h : g.adj[part[k]])
        if (!seen[h.to]) {
          seen[h.to] = true;
          parent[h.to] = Hop{part[k], h.to_port, h.port};  // from h.to back to part[k]
          part.push_back(h.to);
        }
    // The branches that lead to members, each link marked at both ends.
    for (size_t v : part) {
      if (g.member_ports[v].empty()) continue;
      for (uint32_t p : g.member_ports[v]) mask[v].set(p);
      for (size_t u = v; !on_tree[u];) {
        on_tree[u] = true;
        if (!parent[u]) break;
        mask[u].set(parent[u]->port);
        mask[parent[u]->to].set(parent[u]->to_port);
        u = parent[u]->to;
      }
    }
    // Above the highest branch point the climb to the root serves no
    // member: trim it, so the tree is the least one joining the members.
    for (size_t top = start; on_tree[top] && mask[top].count() == 1 && g.member_ports[top].empty();) {
      const Hop* down = nullptr;
      for (const Hop& h : g.adj[top])
        if (mask[top].test(h.port) && parent[h.to] && parent[h.to]->to == top && parent[h.to]->port == h.to_port)
          down = &h;
      if (!down) break;
      mask[top].reset();
      on_tree[top] = false;
      mask[down->to].reset(down->to_port);
      top = down->to;
    }
    // Every other switch of the part: one port towards the tree, found by a
    // walk outwards from it along the spanning tree's links.
    std::deque<size_t> q;
    std::vector<bool> reached(n, false);
    for (size_t v : part)
      if (on_tree[v]) q.push_back(v), reached[v] = true;
    while (!q.empty()) {
      const size_t u = q.front();
      q.pop_front();
      for (const Hop& h : g.adj[u]) {
        const bool tree_link = (parent[h.to] && parent[h.to]->to == u && parent[h.to]->port == h.to_port) ||
                               (parent[u] && parent[u]->to == h.to && parent[u]->port == h.port);
        if (!tree_link || reached[h.to]) continue;
        reached[h.to] = true;
        mask[h.to].set(h.to_port);
        q.push_back(h.to);
      }
    }
  }
  McastTree out;
  for (size_t i = 0; i < n; ++i)
    if (mask[i].any()) out[f.switches[i].name] = mask[i];
  return out;
}

}  // namespace vf::sm
