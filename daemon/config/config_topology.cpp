// A fabric's `topology:` key: reads the generator's numbers (with positions
// for every error) and writes what it generates as the switches, hcas and
// links a hand-written config would hold, so the fabric reader checks and
// fills them in exactly as it does those.
#include <fmt/format.h>

#include "daemon/config/config_detail.hpp"
#include "daemon/config/topology_gen.hpp"
#include "daemon/config/units.hpp"

namespace vf::config::detail {
namespace {

constexpr const char* kExample = "topology: {fat_tree: {k: 4, levels: 2}}";

uint32_t read_count(const Reader& r, const YAML::Node& map, const char* key, uint32_t dflt, std::string_view what) {
  const YAML::Node v = map[key];
  if (!v) return dflt;
  const std::string t = r.scalar(v, key, fmt::format("{}: 4", key));
  const auto n = units::parse_uint(t, 1u << 20);
  if (!n) r.fail(v, fmt::format("{} {} of {} is not a count", key, quote(t), what), "write a whole number, e.g. 4");
  return uint32_t(*n);
}

gen::Spec read_kind(const Reader& r, const YAML::Node& t, const std::string& what, YAML::Node& kind_node) {
  gen::Spec s;
  int kinds = 0;
  for (const char* k : {"fat_tree", "leaf_spine", "rail_optimized"})
    if (t[k]) ++kinds, kind_node = t[k];
  if (kinds != 1)
    r.fail(t, fmt::format("{} needs exactly one of fat_tree, leaf_spine, rail_optimized", what),
           fmt::format("e.g. {}", kExample));
  const std::string w = what + " " + (t["fat_tree"] ? "fat_tree" : t["leaf_spine"] ? "leaf_spine" : "rail_optimized");
  const YAML::Node& v = kind_node;
  if (t["fat_tree"]) {
    r.expect_map(v, w, {"k", "levels", "oversubscription"});
    s.kind = gen::Kind::FatTree;
    r.required(v, "k", w, "k: 16");
    s.k = read_count(r, v, "k", 0, w);
    s.levels = read_count(r, v, "levels", 2, w);
    s.oversubscription = read_count(r, v, "oversubscription", 1, w);
  } else if (t["leaf_spine"]) {
    r.expect_map(v, w, {"leaves", "spines", "hosts_per_leaf", "parallel_links"});
    s.kind = gen::Kind::LeafSpine;
    r.required(v, "leaves", w, "leaves: 4");
    r.required(v, "hosts_per_leaf", w, "hosts_per_leaf: 8");
    s.leaves = read_count(r, v, "leaves", 0, w);
    s.spines = read_count(r, v, "spines", 0, w);
    s.hosts_per_leaf = read_count(r, v, "hosts_per_leaf", 0, w);
    s.parallel_links = read_count(r, v, "parallel_links", 1, w);
  } else {
    r.expect_map(v, w, {"servers", "rails", "servers_per_leaf", "spines", "parallel_links"});
    s.kind = gen::Kind::RailOptimized;
    r.required(v, "servers", w, "servers: 16");
    r.required(v, "rails", w, "rails: 8");
    s.servers = read_count(r, v, "servers", 0, w);
    s.rails = read_count(r, v, "rails", 0, w);
    s.servers_per_leaf = read_count(r, v, "servers_per_leaf", 0, w);
    s.spines = read_count(r, v, "spines", 0, w);
    s.parallel_links = read_count(r, v, "parallel_links", 1, w);
  }
  return s;
}

// The keys of `tmpl` (a topology's `switch:`/`hca:`/`*_links:` map), copied
// into every generated node; `forbidden` are the generator's own.
void apply_template(const Reader& r, const YAML::Node& tmpl, YAML::Node& into, std::string_view what,
                    std::initializer_list<std::string_view> forbidden) {
  if (!tmpl) return;
  if (!tmpl.IsMap()) r.fail(tmpl, fmt::format("{} must be a mapping", what), "e.g. {latency: 100ns}");
  for (auto it = tmpl.begin(); it != tmpl.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    for (auto f : forbidden)
      if (key == f)
        r.fail(it->first, fmt::format("{} cannot set '{}': the topology generates it", what, key),
               "remove it, or write the fabric's switches, hcas and links by hand");
    // A clone: assigning the document's own node would merge the whole
    // document's memory into every generated node (quadratic in yaml-cpp).
    into[key] = YAML::Clone(it->second);
  }
}

struct AddressPlan {
  uint32_t base = 0;
  uint8_t len = 0;
  bool given = false;
};

AddressPlan read_addresses(const Reader& r, const YAML::Node& v, bool ib) {
  AddressPlan a;
  if (!v) {
    if (ib) return a;  // IB hosts address each other by LID; rdma_cm needs `addresses`
    a.base = *addr::parse_ipv4("198.18.0.0");
    a.len = 16;
    a.given = true;
    return a;
  }
  const std::string t = r.scalar(v, "addresses", "addresses: 198.18.0.0/16");
  const auto slash = t.find('/');
  const auto ip = addr::parse_ipv4(std::string_view(t).substr(0, slash));
  const auto len = slash == std::string::npos ? std::nullopt : units::parse_uint(std::string_view(t).substr(slash + 1), 30);
  if (!ip || !len || *len < 8)
    r.fail(v, fmt::format("addresses {} is not a network", quote(t)),
           "write the hosts' network with its prefix length (/8 to /30), e.g. 198.18.0.0/16");
  a.len = uint8_t(*len);
  a.base = *ip & addr::ipv4_mask(a.len);
  a.given = true;
  return a;
}

uint32_t pow2_at_least(uint32_t n) {
  uint32_t p = 4;
  while (p < n) p <<= 1;
  return p;
}

class Writer {
 public:
  Writer(const Reader& r, const YAML::Node& t, const gen::Topology& g, bool ib, const std::string& what)
      : r_(r), t_(t), g_(g), ib_(ib), what_(what) {}

  GeneratedLists write() {
    const AddressPlan a = read_addresses(r_, t_["addresses"], ib_);
    // Ethernet: every leaf routes its own subnet (gateway .1), uplinks are
    // routed ports, as an L3 Clos is built; hosts fill their leaf's subnet.
    const uint32_t per_leaf = max_hosts_per_leaf();
    const uint32_t block = ib_ ? 0 : pow2_at_least(per_leaf + 3);
    const uint64_t need = ib_ ? uint64_t(g_.hcas.size()) + 2 : uint64_t(block) * leaves();
    if (a.given && need > (uint64_t{1} << (32 - a.len)))
      r_.fail(t_["addresses"] ? t_["addresses"] : t_,
              fmt::format("{} hosts do not fit in {}", g_.hcas.size(), addr::format_prefix(a.base, a.len)),
              fmt::format("give addresses a network of at least {} addresses", need));
    GeneratedLists out;
    write_switches(out, block, a);
    write_hcas(out, block, a);
    write_links(out);
    for (const auto& root : g_.roots) out.roots.push_back(root);
    out.summary = g_.summary;
    return out;
  }

 private:
  uint32_t leaves() const {
    uint32_t n = 0;
    for (const auto& s : g_.switches) n += s.level == 0;
    return n;
  }
  uint32_t max_hosts_per_leaf() const {
    std::vector<uint32_t> n(g_.switches.size());
    uint32_t m = 0;
    for (const auto& h : g_.hcas) m = std::max(m, ++n[h.leaf]);
    return m;
  }
  std::vector<uint32_t> uplinks(uint32_t sw) const {
    std::vector<uint32_t> ports;
    const std::string& name = g_.switches[sw].name;
    for (const auto& l : g_.links)
      if (!l.host && (l.a.node == name || l.b.node == name)) ports.push_back(l.a.node == name ? l.a.port : l.b.port);
    return ports;
  }

  void write_switches(GeneratedLists& out, uint32_t block, const AddressPlan& a) {
    for (uint32_t i = 0; i < g_.switches.size(); ++i) {
      const gen::Switch& s = g_.switches[i];
      YAML::Node n;
      n["name"] = s.name;
      n["ports"] = s.ports;
      apply_template(r_, t_["switch"], n, "topology switch", {"name", "ports", "router", "node_guid"});
      if (!ib_) {
        YAML::Node router;
        if (s.level == 0)
          router["gateway"] = addr::format_prefix(a.base + i * block + 1, uint8_t(32 - __builtin_ctz(block)));
        YAML::Node routed(YAML::NodeType::Sequence);
        for (uint32_t p : uplinks(i)) routed.push_back(p);
        if (routed.size()) router["routed_ports"] = routed;
        n["router"] = router;
      }
      out.switches.push_back(n);
    }
  }

  void write_hcas(GeneratedLists& out, uint32_t block, const AddressPlan& a) {
    std::vector<uint32_t> on_leaf(g_.switches.size());
    for (uint32_t i = 0; i < g_.hcas.size(); ++i) {
      const gen::Hca& h = g_.hcas[i];
      YAML::Node n;
      n["name"] = h.name;
      apply_template(r_, t_["hca"], n, "topology hca", {"name", "ip", "mac", "node_guid", "netdev"});
      if (a.given)
        n["ip"] = addr::format_ipv4(ib_ ? a.base + 1 + i : a.base + h.leaf * block + 2 + on_leaf[h.leaf]++);
      out.hcas.push_back(n);
    }
  }

  void write_links(GeneratedLists& out) {
    for (const auto& l : g_.links) {
      YAML::Node n;
      n["a"] = l.a.port ? fmt::format("{}/{}", l.a.node, l.a.port) : l.a.node;
      n["b"] = fmt::format("{}/{}", l.b.node, l.b.port);
      apply_template(r_, t_[l.host ? "host_links" : "switch_links"], n,
                     l.host ? "topology host_links" : "topology switch_links", {"a", "b"});
      // What a cluster of today is cabled with, unless the config says.
      if (!n["speed"]) n["speed"] = ib_ ? "EDR" : "100G";
      if (ib_ && !n["width"]) n["width"] = "4x";
      out.links.push_back(n);
    }
  }

  const Reader& r_;
  const YAML::Node& t_;
  const gen::Topology& g_;
  bool ib_;
  std::string what_;
};

}  // namespace

GeneratedLists read_topology(const Reader& r, const YAML::Node& t, LinkLayer ll, const std::string& what) {
  const std::string w = what + " topology";
  r.expect_map(t, w,
               {"fat_tree", "leaf_spine", "rail_optimized", "hca_prefix", "switch_prefix", "addresses", "host_links",
                "switch_links", "switch", "hca"});
  YAML::Node kind_node;
  gen::Spec s = read_kind(r, t, w, kind_node);
  const bool ib = ll == LinkLayer::Infiniband;
  s.hca_prefix = t["hca_prefix"] ? r.scalar(t["hca_prefix"], "hca_prefix", "hca_prefix: vib") : ib ? "vib" : "vroce";
  if (t["switch_prefix"]) s.switch_prefix = r.scalar(t["switch_prefix"], "switch_prefix", "switch_prefix: ib_");
  if (auto p = gen::problem(s)) {
    const YAML::Node at = kind_node[p->key] ? kind_node[p->key] : t[p->key] ? t[p->key] : kind_node;
    r.fail(at, fmt::format("{}: {}", w, p->what), p->fix);
  }
  const gen::Topology g = gen::generate(s);
  return Writer(r, t, g, ib, what).write();
}

}  // namespace vf::config::detail
