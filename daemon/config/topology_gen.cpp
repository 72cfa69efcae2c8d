#include "daemon/config/topology_gen.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "daemon/config/config.hpp"

namespace vf::config::gen {
namespace {

constexpr uint32_t kMaxGeneratedHcas = 65536;
constexpr std::size_t kMaxPrefixLen = 40;  // leaves room for "rail255_leaf4095" within kMaxNameLen

// "1 spine", "2 spines".
std::string count(uint64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::optional<Problem> bad(std::string key, std::string what, std::string fix) {
  return Problem{std::move(key), std::move(what), std::move(fix)};
}

bool valid_prefix(const std::string& p) {
  if (p.size() > kMaxPrefixLen) return false;
  for (char c : p)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

std::optional<Problem> ports_fit(std::string key, uint64_t ports, std::string_view which) {
  if (ports <= kMaxSwitchPorts) return std::nullopt;
  return bad(std::move(key), fmt::format("{} would need {} ports", which, ports),
             fmt::format("a switch has at most {} ports: use fewer, or more switches", kMaxSwitchPorts));
}

std::optional<Problem> fat_tree_problem(const Spec& s) {
  if (s.k < 4 || s.k % 2 || s.k > kMaxSwitchPorts)
    return bad("k", fmt::format("k {} is not a fat tree's switch radix", s.k),
               fmt::format("use an even number from 4 to {}, e.g. k: 16", kMaxSwitchPorts));
  if (s.levels != 2 && s.levels != 3)
    return bad("levels", fmt::format("levels {} is not 2 or 3", s.levels),
               "use levels: 2 (leaves and spines) or 3 (leaves, spines in pods, cores)");
  if (s.oversubscription == 0 || s.k % (s.oversubscription + 1) != 0)
    return bad("oversubscription", fmt::format("oversubscription {}:1 does not split k={} ports", s.oversubscription, s.k),
               fmt::format("k must divide into down:up = {}:1 whole ports (k divisible by {})", s.oversubscription,
                           s.oversubscription + 1));
  return std::nullopt;
}

std::optional<Problem> leaf_spine_problem(const Spec& s) {
  if (s.leaves == 0) return bad("leaves", "a leaf-spine needs at least one leaf", "e.g. leaves: 4");
  if (s.hosts_per_leaf == 0) return bad("hosts_per_leaf", "a leaf needs at least one host", "e.g. hosts_per_leaf: 8");
  if (s.spines == 0 && s.leaves > 1)
    return bad("spines", "leaves without spines are not connected", "e.g. spines: 2");
  if (s.parallel_links == 0) return bad("parallel_links", "parallel_links must be at least 1", "e.g. parallel_links: 1");
  if (auto p = ports_fit("hosts_per_leaf", uint64_t(s.hosts_per_leaf) + uint64_t(s.spines) * s.parallel_links,
                         "each leaf"))
    return p;
  return ports_fit("leaves", uint64_t(s.leaves) * s.parallel_links, "each spine");
}

std::optional<Problem> rail_problem(const Spec& s) {
  if (s.servers == 0) return bad("servers", "a cluster needs at least one server", "e.g. servers: 32");
  if (s.rails == 0) return bad("rails", "a server needs at least one HCA (rail)", "e.g. rails: 8");
  const uint32_t per_leaf = s.servers_per_leaf ? s.servers_per_leaf : s.servers;
  if (s.servers % per_leaf)
    return bad("servers_per_leaf", fmt::format("{} servers do not split into leaves of {}", s.servers, per_leaf),
               "make servers a multiple of servers_per_leaf");
  const uint64_t leaves = uint64_t(s.rails) * (s.servers / per_leaf);
  if (s.spines == 0 && leaves > 1)
    return bad("spines", fmt::format("{} rail leaves without spines are not connected", leaves), "e.g. spines: 4");
  if (s.parallel_links == 0) return bad("parallel_links", "parallel_links must be at least 1", "e.g. parallel_links: 1");
  if (auto p = ports_fit("servers_per_leaf", uint64_t(per_leaf) + uint64_t(s.spines) * s.parallel_links, "each leaf"))
    return p;
  return ports_fit("spines", leaves * s.parallel_links, "each spine");
}

uint64_t hca_count(const Spec& s) {
  switch (s.kind) {
    case Kind::FatTree: {
      const uint64_t up = s.k / (s.oversubscription + 1), down = s.k - up;
      return s.levels == 2 ? s.k * down : uint64_t(s.k) * (s.k / 2) * down;
    }
    case Kind::LeafSpine: return uint64_t(s.leaves) * s.hosts_per_leaf;
    case Kind::RailOptimized: return uint64_t(s.servers) * s.rails;
  }
  return 0;
}

class Builder {
 public:
  explicit Builder(const Spec& s) : s_(s) {}

  uint32_t add_switch(std::string name, uint32_t ports, uint32_t level, uint32_t pod) {
    t_.switches.push_back({s_.switch_prefix + name, ports, level, pod});
    return uint32_t(t_.switches.size() - 1);
  }
  void add_hca(uint32_t server, uint32_t leaf, uint32_t port) {
    const std::string name = fmt::format("{}{}", s_.hca_prefix, t_.hcas.size());
    t_.hcas.push_back({name, server, leaf});
    t_.links.push_back({{name, 0}, {t_.switches[leaf].name, port}, true});
  }
  void cable(uint32_t lower, uint32_t lower_port, uint32_t upper, uint32_t upper_port) {
    t_.links.push_back({{t_.switches[lower].name, lower_port}, {t_.switches[upper].name, upper_port}, false});
  }
  Topology done(uint32_t top_level, std::string summary) {
    for (const auto& sw : t_.switches)
      if (sw.level == top_level) t_.roots.push_back(sw.name);
    t_.summary = std::move(summary);
    return std::move(t_);
  }
  Topology& t() { return t_; }

 private:
  const Spec& s_;
  Topology t_;
};

// k leaves of d hosts and u uplinks each; u spines of k ports, one per leaf.
Topology fat_tree_2(const Spec& s) {
  Builder b(s);
  const uint32_t up = s.k / (s.oversubscription + 1), down = s.k - up;
  for (uint32_t l = 0; l < s.k; ++l) b.add_switch(fmt::format("leaf{}", l), s.k, 0, 0);
  for (uint32_t j = 0; j < up; ++j) b.add_switch(fmt::format("spine{}", j), s.k, 1, 0);
  for (uint32_t l = 0; l < s.k; ++l)
    for (uint32_t h = 0; h < down; ++h) b.add_hca(l * down + h, l, h + 1);
  for (uint32_t l = 0; l < s.k; ++l)
    for (uint32_t j = 0; j < up; ++j) b.cable(l, down + 1 + j, s.k + j, l + 1);
  return b.done(1, fmt::format("2-level fat tree, k={} ({}:1): {} hosts, {} switches ({} leaves, {})", s.k,
                               s.oversubscription, s.k * down, s.k + up, s.k, count(up, "spine")));
}

// k pods of k/2 leaves (d hosts, u uplinks: one to each of the pod's u
// spines) and u spines (k/2 down, k/2 up); u * k/2 cores of k ports, one
// per pod: core (j, c) is cabled to spine j of every pod.
Topology fat_tree_3(const Spec& s) {
  Builder b(s);
  const uint32_t half = s.k / 2, up = s.k / (s.oversubscription + 1), down = s.k - up;
  const uint32_t leaves = s.k * half, spines = s.k * up, cores = up * half;
  for (uint32_t p = 0; p < s.k; ++p)
    for (uint32_t e = 0; e < half; ++e) b.add_switch(fmt::format("leaf{}", p * half + e), s.k, 0, p);
  for (uint32_t p = 0; p < s.k; ++p)
    for (uint32_t j = 0; j < up; ++j) b.add_switch(fmt::format("spine{}", p * up + j), s.k, 1, p);
  for (uint32_t c = 0; c < cores; ++c) b.add_switch(fmt::format("core{}", c), s.k, 2, 0);
  for (uint32_t l = 0; l < leaves; ++l)
    for (uint32_t h = 0; h < down; ++h) b.add_hca(l * down + h, l, h + 1);
  for (uint32_t p = 0; p < s.k; ++p)
    for (uint32_t e = 0; e < half; ++e)
      for (uint32_t j = 0; j < up; ++j) b.cable(p * half + e, down + 1 + j, leaves + p * up + j, e + 1);
  for (uint32_t p = 0; p < s.k; ++p)
    for (uint32_t j = 0; j < up; ++j)
      for (uint32_t c = 0; c < half; ++c) b.cable(leaves + p * up + j, half + 1 + c, leaves + spines + j * half + c, p + 1);
  return b.done(2, fmt::format("3-level fat tree, k={} ({}:1): {} hosts, {} switches ({} leaves, {} spines in {} "
                               "pods, {} cores)",
                               s.k, s.oversubscription, leaves * down, leaves + spines + cores, leaves, spines, s.k,
                               cores));
}

// Leaf l's uplinks: for each spine, parallel_links consecutive ports after
// its hosts; spine j's ports: leaf by leaf, parallel_links each.
void cable_spines(Builder& b, uint32_t leaves, uint32_t first_spine, uint32_t spines, uint32_t down, uint32_t par) {
  for (uint32_t l = 0; l < leaves; ++l)
    for (uint32_t j = 0; j < spines; ++j)
      for (uint32_t p = 0; p < par; ++p) b.cable(l, down + 1 + j * par + p, first_spine + j, l * par + p + 1);
}

Topology leaf_spine(const Spec& s) {
  Builder b(s);
  const uint32_t par = s.parallel_links, leaf_ports = s.hosts_per_leaf + s.spines * par;
  for (uint32_t l = 0; l < s.leaves; ++l) b.add_switch(fmt::format("leaf{}", l), leaf_ports, 0, 0);
  for (uint32_t j = 0; j < s.spines; ++j) b.add_switch(fmt::format("spine{}", j), s.leaves * par, 1, 0);
  for (uint32_t l = 0; l < s.leaves; ++l)
    for (uint32_t h = 0; h < s.hosts_per_leaf; ++h) b.add_hca(l * s.hosts_per_leaf + h, l, h + 1);
  cable_spines(b, s.leaves, s.leaves, s.spines, s.hosts_per_leaf, par);
  return b.done(s.spines ? 1 : 0,
                fmt::format("leaf-spine: {} hosts, {} switches ({} of {} hosts, {}, {} each)",
                            s.leaves * s.hosts_per_leaf, s.leaves + s.spines, fmt::format("{} {}", s.leaves, s.leaves == 1 ? "leaf" : "leaves"),
                            s.hosts_per_leaf, count(s.spines, "spine"), count(par, "link")));
}

// Rail r's leaves take HCA r of every server; spines join all rails.
Topology rail_optimized(const Spec& s) {
  Builder b(s);
  const uint32_t per_leaf = s.servers_per_leaf ? s.servers_per_leaf : s.servers;
  const uint32_t groups = s.servers / per_leaf, leaves = s.rails * groups, par = s.parallel_links;
  for (uint32_t r = 0; r < s.rails; ++r)
    for (uint32_t g = 0; g < groups; ++g)
      b.add_switch(fmt::format("rail{}_leaf{}", r, g), per_leaf + s.spines * par, 0, r);
  for (uint32_t j = 0; j < s.spines; ++j) b.add_switch(fmt::format("spine{}", j), leaves * par, 1, 0);
  for (uint32_t srv = 0; srv < s.servers; ++srv)
    for (uint32_t r = 0; r < s.rails; ++r) b.add_hca(srv, r * groups + srv / per_leaf, srv % per_leaf + 1);
  cable_spines(b, leaves, leaves, s.spines, per_leaf, par);
  b.t().hcas_per_server = s.rails;
  return b.done(s.spines ? 1 : 0,
                fmt::format("rail-optimized: {} x {} = {} hosts, {} switches ({} rail leaves of {}, {})",
                            count(s.servers, "server"), count(s.rails, "rail"), s.servers * s.rails,
                            leaves + s.spines, leaves, count(per_leaf, "server"), count(s.spines, "spine")));
}

}  // namespace

std::optional<Problem> problem(const Spec& s) {
  if (!valid_prefix(s.hca_prefix) || s.hca_prefix.empty())
    return bad("hca_prefix", fmt::format("hca_prefix '{}' cannot start a device name", s.hca_prefix),
               fmt::format("use 1-{} characters from a-z, 0-9 and _, e.g. vib", kMaxPrefixLen));
  if (!valid_prefix(s.switch_prefix))
    return bad("switch_prefix", fmt::format("switch_prefix '{}' cannot start a switch name", s.switch_prefix),
               fmt::format("use up to {} characters from a-z, 0-9 and _", kMaxPrefixLen));
  std::optional<Problem> p;
  switch (s.kind) {
    case Kind::FatTree: p = fat_tree_problem(s); break;
    case Kind::LeafSpine: p = leaf_spine_problem(s); break;
    case Kind::RailOptimized: p = rail_problem(s); break;
  }
  if (p) return p;
  if (const uint64_t n = hca_count(s); n > kMaxGeneratedHcas)
    return bad(s.kind == Kind::FatTree ? "k" : s.kind == Kind::LeafSpine ? "leaves" : "servers",
               fmt::format("the topology would have {} hosts", n),
               fmt::format("generate at most {} hosts", kMaxGeneratedHcas));
  return std::nullopt;
}

Topology generate(const Spec& s) {
  if (auto p = problem(s)) throw std::invalid_argument(p->key + ": " + p->what);
  switch (s.kind) {
    case Kind::FatTree: return s.levels == 2 ? fat_tree_2(s) : fat_tree_3(s);
    case Kind::LeafSpine: return leaf_spine(s);
    case Kind::RailOptimized: return rail_optimized(s);
  }
  throw std::invalid_argument("unknown topology kind");
}

}  // namespace vf::config::gen
