// A fabric must be one piece: every switch and HCA reachable from every
// other over its links. An island can exist only by mistake (a forgotten
// uplink) and is not harmless — apps on either side see their QPs fail with
// RETRY_EXC_ERR much later — so it is a config error that names the smaller
// island and the link that would join it.
#include <fmt/format.h>

#include <map>
#include <numeric>
#include <set>

#include "daemon/config/config_detail.hpp"

namespace vf::config::detail {
namespace {

struct Island {
  std::vector<std::size_t> nodes;  // switches first (0..S-1), then HCAs (S..), in file order
};

std::string names(const std::vector<std::string>& v, std::string_view one, std::string_view many) {
  constexpr std::size_t kShown = 6;
  std::string out(v.size() == 1 ? one : many);
  for (std::size_t i = 0; i < v.size() && i < kShown; ++i) out += fmt::format("{}'{}'", i ? ", " : " ", v[i]);
  if (v.size() > kShown) out += fmt::format(" and {} more", v.size() - kShown);
  return out;
}

}  // namespace

void check_connected(const Reader& r, const Fabric& f, const std::vector<Pos>& switch_pos,
                     const std::vector<Pos>& hca_pos) {
  const std::size_t S = f.switches.size(), N = S + f.hcas.size();
  if (N < 2) return;
  std::map<std::string, std::size_t, std::less<>> index;
  for (std::size_t i = 0; i < S; ++i) index[f.switches[i].name] = i;
  for (std::size_t i = 0; i < f.hcas.size(); ++i) index[f.hcas[i].name] = S + i;

  std::vector<std::size_t> parent(N);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  auto root = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::map<std::string, std::set<uint32_t>, std::less<>> used_ports;
  for (const Link& l : f.links) {
    parent[root(index.at(l.a.node))] = root(index.at(l.b.node));
    for (const Endpoint* e : {&l.a, &l.b})
      if (e->is_switch) used_ports[e->node].insert(e->port);
  }

  std::map<std::size_t, Island> by_root;  // ordered by root; islands listed by first node below
  for (std::size_t i = 0; i < N; ++i) by_root[root(i)].nodes.push_back(i);
  if (by_root.size() < 2) return;
  std::vector<Island> islands;
  for (auto& [_, isl] : by_root) islands.push_back(std::move(isl));
  // The main island is the largest (the first in the file on a tie); the one
  // reported is the smallest of the rest.
  std::size_t main = 0, small = islands.size();
  for (std::size_t i = 1; i < islands.size(); ++i)
    if (islands[i].nodes.size() > islands[main].nodes.size() ||
        (islands[i].nodes.size() == islands[main].nodes.size() && islands[i].nodes[0] < islands[main].nodes[0]))
      main = i;
  for (std::size_t i = 0; i < islands.size(); ++i)
    if (i != main && (small == islands.size() || islands[i].nodes.size() < islands[small].nodes.size())) small = i;

  auto describe = [&](const Island& isl) {
    std::vector<std::string> sw, hc;
    for (std::size_t n : isl.nodes) (n < S ? sw : hc).push_back(n < S ? f.switches[n].name : f.hcas[n - S].name);
    std::string s = sw.empty() ? "" : names(sw, "switch", "switches");
    if (!hc.empty()) s += (s.empty() ? "" : " and ") + names(hc, "HCA", "HCAs");
    return s;
  };
  // An island always has a switch (an HCA links only to a switch); suggest
  // its first free port.
  auto free_end = [&](const Island& isl) {
    for (std::size_t n : isl.nodes) {
      if (n >= S) break;
      const auto& used = used_ports[f.switches[n].name];
      for (uint32_t p = 1; p <= f.switches[n].ports; ++p)
        if (!used.count(p)) return fmt::format("{}/{}", f.switches[n].name, p);
    }
    return fmt::format("{}/<port>", isl.nodes[0] < S ? f.switches[isl.nodes[0]].name : "<switch>");
  };

  const Island& a = islands[small];
  const Pos at = a.nodes[0] < S ? switch_pos[a.nodes[0]] : hca_pos[a.nodes[0] - S];
  std::string problem = fmt::format("fabric '{}' is split: {} cannot reach {}", f.name, describe(a),
                                    describe(islands[main]));
  if (islands.size() > 2) problem += fmt::format(" (it falls apart into {} islands)", islands.size());
  r.fail(at, problem + "; their QPs would fail with RETRY_EXC_ERR",
         fmt::format("add a link joining them, e.g. {{a: {}, b: {}}}", free_end(a), free_end(islands[main])));
}

}  // namespace vf::config::detail
