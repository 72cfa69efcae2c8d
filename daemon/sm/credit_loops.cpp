#include "daemon/sm/credit_loops.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>

namespace vf {
namespace {

// A directed link end to end: (node, port) -> (node, port).
struct Channel {
  config::Endpoint from, to;
  std::string name() const { return from.text() + "->" + to.text(); }
};

}  // namespace

CreditLoopCheck check_credit_loops(const config::Fabric& f, const Routes& routes) {
  // Channels by (node, egress port), both directions of every link.
  std::vector<Channel> ch;
  std::map<std::pair<std::string, uint32_t>, std::size_t> out_of;
  for (const auto& l : f.links) {
    out_of[{l.a.node, l.a.port}] = ch.size();
    ch.push_back({l.a, l.b});
    out_of[{l.b.node, l.b.port}] = ch.size();
    ch.push_back({l.b, l.a});
  }
  std::vector<std::set<std::size_t>> dep(ch.size());
  CreditLoopCheck r;
  const std::size_t max_hops = f.switches.size() + 2;
  for (const auto& src : f.hcas) {
    const config::Link* first = f.link_of(src.name);
    if (!first) continue;
    const std::size_t start = out_of.at({src.name, first->a.node == src.name ? first->a.port : first->b.port});
    for (const auto& dst : f.hcas) {
      if (dst.name == src.name) continue;
      std::size_t cur = start;
      std::size_t hops = 0;
      while (ch[cur].to.is_switch) {
        const auto& sw = ch[cur].to.node;
        const auto table = routes.find(sw);
        if (table == routes.end() || !table->second.count(dst.name)) break;  // no route: nothing held
        const std::size_t next = out_of.at({sw, table->second.at(dst.name)});
        dep[cur].insert(next);
        cur = next;
        if (++hops > max_hops) {
          r.looping_routes.push_back(src.name + " -> " + dst.name);
          break;
        }
      }
    }
  }
  // A cycle by depth-first search (iterative: a hostile config may be large).
  enum : uint8_t { kNew, kOnPath, kDone };
  std::vector<uint8_t> state(ch.size(), kNew);
  std::vector<std::pair<std::size_t, std::set<std::size_t>::const_iterator>> stack;
  for (std::size_t s = 0; s < ch.size() && r.cycle.empty(); ++s) {
    if (state[s] != kNew) continue;
    stack.push_back({s, dep[s].begin()});
    state[s] = kOnPath;
    while (!stack.empty() && r.cycle.empty()) {
      auto& [u, it] = stack.back();
      if (it == dep[u].end()) {
        state[u] = kDone;
        stack.pop_back();
        continue;
      }
      const std::size_t v = *it++;
      if (state[v] == kNew) {
        state[v] = kOnPath;
        stack.push_back({v, dep[v].begin()});
      } else if (state[v] == kOnPath) {
        bool in = false;
        for (const auto& [w, _] : stack) {
          in |= w == v;
          if (in) r.cycle.push_back(ch[w].name());
        }
      }
    }
    stack.clear();
  }
  return r;
}

std::string credit_loop_warning(const config::Fabric& f, const Routes& routes, size_t max_hcas) {
  if (f.link_layer != config::LinkLayer::Infiniband) return {};
  if (f.hcas.size() > max_hcas)
    return f.sm.routing == config::Routing::UpDown
               ? std::string()
               : fmt::format("fabric {}: {} routing on {} HCAs was not checked for credit loops (the check walks "
                             "every pair; it runs up to {}); sm: {{routing: updn}} cannot form one",
                             f.name, config::to_string(f.sm.routing), f.hcas.size(), max_hcas);
  const CreditLoopCheck c = check_credit_loops(f, routes);
  std::string out;
  if (!c.looping_routes.empty())
    out += fmt::format("fabric {}: {} routing never delivers {} (a forwarding loop). ", f.name,
                       config::to_string(f.sm.routing), fmt::join(c.looping_routes, ", "));
  if (!c.cycle.empty())
    out += fmt::format("fabric {}: {} routing has a credit loop: {} -> (back to the first). A load that fills "
                       "these links' buffers can deadlock the fabric; sm: {{routing: updn}} avoids it",
                       f.name, config::to_string(f.sm.routing), fmt::join(c.cycle, " -> "));
  return out;
}

}  // namespace vf
