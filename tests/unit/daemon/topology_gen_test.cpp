// Generated topologies: the counts each kind's formula gives, the cabling
// rules (every port used at most once, hosts on a leaf's lowest ports,
// uplinks where the docs say), and that the fabric they make through the
// config reader routes every pair without a credit loop.
#include "daemon/config/topology_gen.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "daemon/config/config.hpp"
#include "daemon/config/addr.hpp"
#include "daemon/sm/credit_loops.hpp"
#include "daemon/sm/routing.hpp"

namespace vf::config::gen {
namespace {

Spec fat_tree(uint32_t k, uint32_t levels, uint32_t over = 1) {
  Spec s;
  s.k = k, s.levels = levels, s.oversubscription = over;
  return s;
}

// Every port is cabled at most once and exists on its switch; returns the
// number of links each pair of switches shares.
std::map<std::pair<std::string, std::string>, int> check_cabling(const Topology& t) {
  std::map<std::string, uint32_t> ports;
  for (const auto& s : t.switches) EXPECT_TRUE(ports.emplace(s.name, s.ports).second) << s.name;
  std::set<std::pair<std::string, uint32_t>> used;
  std::set<std::string> hcas;
  std::map<std::pair<std::string, std::string>, int> pairs;
  for (const auto& l : t.links) {
    for (const End* e : {&l.a, &l.b}) {
      if (e->port == 0) {
        EXPECT_TRUE(hcas.insert(e->node).second) << e->node << " has two links";
        continue;
      }
      EXPECT_TRUE(ports.count(e->node)) << e->node;
      EXPECT_LE(e->port, ports[e->node]) << e->node << "/" << e->port;
      EXPECT_TRUE(used.emplace(e->node, e->port).second) << e->node << "/" << e->port << " cabled twice";
    }
    if (!l.host) ++pairs[{l.a.node, l.b.node}];
  }
  EXPECT_EQ(hcas.size(), t.hcas.size());
  return pairs;
}

uint32_t at_level(const Topology& t, uint32_t level) {
  uint32_t n = 0;
  for (const auto& s : t.switches) n += s.level == level;
  return n;
}

TEST(TopologyGen, TwoLevelFatTreeIsKLeavesOfHalfKHostsUnderHalfKSpines) {
  const Topology t = generate(fat_tree(8, 2));
  EXPECT_EQ(t.hcas.size(), 32u);  // k^2/2
  EXPECT_EQ(at_level(t, 0), 8u);
  EXPECT_EQ(at_level(t, 1), 4u);
  EXPECT_EQ(t.links.size(), 32u + 8 * 4);
  const auto pairs = check_cabling(t);
  EXPECT_EQ(pairs.size(), 8u * 4);  // every leaf to every spine, once
  for (const auto& [p, n] : pairs) EXPECT_EQ(n, 1) << p.first << "-" << p.second;
  EXPECT_EQ(t.roots, (std::vector<std::string>{"spine0", "spine1", "spine2", "spine3"}));
  // Hosts on a leaf's lowest ports, in order; uplinks after them.
  EXPECT_EQ(t.links[0].a.node, "vib0");
  EXPECT_EQ(t.links[0].b.node, "leaf0");
  EXPECT_EQ(t.links[0].b.port, 1u);
  EXPECT_EQ(t.links[5].b.node, "leaf1");
  EXPECT_EQ(t.links[5].b.port, 2u);
  EXPECT_EQ(t.links[32].a.node, "leaf0");
  EXPECT_EQ(t.links[32].a.port, 5u);
  EXPECT_EQ(t.links[32].b.node, "spine0");
  EXPECT_EQ(t.links[32].b.port, 1u);
}

TEST(TopologyGen, OversubscriptionTradesUplinksForHosts) {
  const Topology t = generate(fat_tree(8, 2, 3));  // 6 down, 2 up per leaf
  EXPECT_EQ(t.hcas.size(), 48u);
  EXPECT_EQ(at_level(t, 1), 2u);
  check_cabling(t);
  const Topology t3 = generate(fat_tree(8, 3, 3));  // 8 pods x 4 leaves x 6 hosts
  EXPECT_EQ(t3.hcas.size(), 192u);
  EXPECT_EQ(at_level(t3, 1), 16u);  // 2 spines per pod
  EXPECT_EQ(at_level(t3, 2), 8u);   // 2 groups of k/2 cores
  check_cabling(t3);
}

TEST(TopologyGen, ThreeLevelK16IsTheThousandHostFatTree) {
  const Topology t = generate(fat_tree(16, 3));
  EXPECT_EQ(t.hcas.size(), 1024u);  // k^3/4
  EXPECT_EQ(t.switches.size(), 320u);  // 5k^2/4
  EXPECT_EQ(at_level(t, 0), 128u);
  EXPECT_EQ(at_level(t, 1), 128u);
  EXPECT_EQ(at_level(t, 2), 64u);
  EXPECT_EQ(t.links.size(), 1024u * 3);
  EXPECT_EQ(t.roots.size(), 64u);
  const auto pairs = check_cabling(t);
  // A leaf reaches each spine of its pod, a core one spine in every pod.
  std::map<std::string, std::set<uint32_t>> core_pods;
  std::map<std::string, uint32_t> pod;
  for (const auto& s : t.switches) pod[s.name] = s.pod;
  for (const auto& [p, n] : pairs) {
    EXPECT_EQ(n, 1);
    if (p.first.rfind("leaf", 0) == 0) {
      EXPECT_EQ(pod[p.first], pod[p.second]) << p.first << "-" << p.second;
    }
    if (p.second.rfind("core", 0) == 0) {
      EXPECT_TRUE(core_pods[p.second].insert(pod[p.first]).second);
    }
  }
  ASSERT_EQ(core_pods.size(), 64u);
  for (const auto& [core, pods] : core_pods) EXPECT_EQ(pods.size(), 16u) << core;
}

TEST(TopologyGen, LeafSpineWithParallelLinks) {
  Spec s;
  s.kind = Kind::LeafSpine;
  s.leaves = 3, s.spines = 2, s.hosts_per_leaf = 5, s.parallel_links = 2;
  const Topology t = generate(s);
  EXPECT_EQ(t.hcas.size(), 15u);
  EXPECT_EQ(t.switches[0].ports, 5u + 2 * 2);
  EXPECT_EQ(t.switches[3].ports, 3u * 2);
  for (const auto& [p, n] : check_cabling(t)) EXPECT_EQ(n, 2) << p.first << "-" << p.second;
}

TEST(TopologyGen, RailOptimizedPutsHcaROfEveryServerOnRailR) {
  Spec s;
  s.kind = Kind::RailOptimized;
  s.servers = 8, s.rails = 4, s.servers_per_leaf = 4, s.spines = 2;
  const Topology t = generate(s);
  EXPECT_EQ(t.hcas.size(), 32u);
  EXPECT_EQ(t.hcas_per_server, 4u);
  EXPECT_EQ(at_level(t, 0), 8u);  // 4 rails x 2 groups of servers
  check_cabling(t);
  for (uint32_t i = 0; i < t.hcas.size(); ++i) {
    const Hca& h = t.hcas[i];
    EXPECT_EQ(h.server, i / 4);
    const Switch& leaf = t.switches[h.leaf];
    EXPECT_EQ(leaf.pod, i % 4) << h.name << " on " << leaf.name;  // its rail
    EXPECT_EQ(leaf.name, "rail" + std::to_string(i % 4) + "_leaf" + std::to_string(h.server / 4));
  }
}

TEST(TopologyGen, ProblemsNameTheKeyAndTheFix) {
  struct Case {
    Spec s;
    std::string key;
  };
  Spec odd = fat_tree(7, 2), deep = fat_tree(8, 4), uneven = fat_tree(6, 2, 3), huge = fat_tree(96, 3);
  Spec wide;
  wide.kind = Kind::LeafSpine, wide.leaves = 300, wide.spines = 1, wide.hosts_per_leaf = 1;
  Spec split;
  split.kind = Kind::RailOptimized, split.servers = 10, split.rails = 2, split.servers_per_leaf = 4;
  Spec bad_prefix = fat_tree(4, 2);
  bad_prefix.hca_prefix = "Vib";
  for (const Case& c : {Case{odd, "k"}, Case{deep, "levels"}, Case{uneven, "oversubscription"}, Case{huge, "k"},
                        Case{wide, "leaves"}, Case{split, "servers_per_leaf"}, Case{bad_prefix, "hca_prefix"}}) {
    const auto p = problem(c.s);
    ASSERT_TRUE(p) << c.key;
    EXPECT_EQ(p->key, c.key) << p->what;
    EXPECT_FALSE(p->fix.empty());
    EXPECT_THROW(generate(c.s), std::invalid_argument);
  }
  EXPECT_FALSE(problem(fat_tree(4, 2)));
}

// Through the config reader: the same checks a hand-written fabric gets.
Config load(const std::string& fabric, const Limits& limits = kSimLimits) {
  return load_config_string("fabrics:\n  - name: f\n" + fabric, "gen.yaml", limits);
}

TEST(TopologyConfig, AnIbFatTreeRoutesUpDownFromItsCoresWithoutACreditLoop) {
  const Config c = load("    link_layer: infiniband\n    topology: {fat_tree: {k: 4, levels: 3}}\n");
  const Fabric& f = c.fabrics[0];
  EXPECT_EQ(f.hcas.size(), 16u);
  EXPECT_EQ(f.switches.size(), 20u);
  EXPECT_EQ(f.sm.routing, Routing::UpDown);
  EXPECT_EQ(f.sm.roots, (std::vector<std::string>{"core0", "core1", "core2", "core3"}));
  EXPECT_NE(f.generated.find("3-level fat tree, k=4"), std::string::npos) << f.generated;
  EXPECT_EQ(f.links[0].speed, IbSpeed::EDR);
  const Routes r = compute_routes(f);
  for (const auto& sw : f.switches) EXPECT_EQ(r.at(sw.name).size(), 16u) << sw.name << " misses a host";
  EXPECT_TRUE(check_credit_loops(f, r).deadlock_free());
  // Min-hop on a fat tree climbs then descends too.
  EXPECT_TRUE(check_credit_loops(f, compute_min_hop_routes(f)).deadlock_free());
  // Above the check's size it is skipped: silently for Up/Down, which cannot
  // form a loop, with a warning for min-hop.
  EXPECT_EQ(credit_loop_warning(f, r, 8), "");
  Fabric minhop = f;
  minhop.sm.routing = Routing::MinHop;
  const std::string w = credit_loop_warning(minhop, compute_min_hop_routes(minhop), 8);
  EXPECT_NE(w.find("minhop routing on 16 HCAs was not checked"), std::string::npos) << w;
  EXPECT_EQ(credit_loop_warning(minhop, compute_min_hop_routes(minhop)), "");
}

// Up/Down takes one of the equally short ports per destination, in turn: a
// leaf's uplinks, and every core, carry some destinations (not all of them
// climbing through spine0 and core0).
TEST(TopologyConfig, UpDownSpreadsDestinationsOverEverySpineAndCore) {
  const Config c = load("    link_layer: infiniband\n    topology: {fat_tree: {k: 4, levels: 3}}\n");
  const Fabric& f = c.fabrics[0];
  const Routes r = compute_routes(f);
  std::set<uint32_t> leaf0_up;
  for (const auto& [dest, port] : r.at("leaf0"))
    if (port > 2) leaf0_up.insert(port);  // ports 1-2: its hosts
  EXPECT_EQ(leaf0_up, (std::set<uint32_t>{3, 4}));
  // Follow every host's route to every other host: each spine climbs to
  // each of its cores for some pair (not only the core whose index its own
  // index is), so every core carries traffic.
  std::set<std::string> cores_used;
  for (const auto& src : f.hcas)
    for (const auto& dst : f.hcas) {
      std::string at = f.link_of(src.name)->b.node;
      for (int hop = 0; hop < 8 && src.name != dst.name; ++hop) {
        const uint32_t port = r.at(at).at(dst.name);
        std::string next;
        for (const auto& l : f.links) {
          if (l.a.node == at && l.a.port == port) next = l.b.node;
          if (l.b.node == at && l.b.port == port) next = l.a.node;
        }
        if (next.rfind("core", 0) == 0) cores_used.insert(next);
        if (next == dst.name || next.empty()) break;
        at = next;
      }
    }
  EXPECT_EQ(cores_used.size(), 4u);
  EXPECT_TRUE(check_credit_loops(f, r).deadlock_free());
}

// ---- adaptive routing: the config key and the SM's AR groups

constexpr const char* kFatTree3 = "    link_layer: infiniband\n    topology: {fat_tree: {k: 4, levels: 3}}\n";

TEST(AdaptiveRoutingConfig, ModesAreReadAsAScalarOrAMap) {
  EXPECT_EQ(load(kFatTree3).fabrics[0].adaptive.mode, AdaptiveRouting::Mode::Off);
  EXPECT_EQ(load(std::string(kFatTree3) + "    adaptive_routing: per-packet\n").fabrics[0].adaptive.mode,
            AdaptiveRouting::Mode::PerPacket);
  const Config c = load(std::string(kFatTree3) + "    adaptive_routing: {mode: flowlet, flowlet_gap: 20us}\n");
  EXPECT_EQ(c.fabrics[0].adaptive.mode, AdaptiveRouting::Mode::Flowlet);
  EXPECT_EQ(c.fabrics[0].adaptive.flowlet_gap_ns, 20'000u);
  const Config e = load(
      "    link_layer: ethernet\n    adaptive_routing: flowlet\n"
      "    topology: {leaf_spine: {leaves: 2, spines: 2, hosts_per_leaf: 2}, addresses: 198.18.4.0/24}\n");
  EXPECT_EQ(e.fabrics[0].adaptive.mode, AdaptiveRouting::Mode::Flowlet);
  EXPECT_EQ(e.fabrics[0].adaptive.flowlet_gap_ns, 10'000u);
}

TEST(AdaptiveRoutingConfig, ModesThatCannotWorkAreRefusedWithTheFix) {
  auto error = [](const std::string& fabric) {
    try {
      load(fabric);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string hint = error(std::string(kFatTree3) + "    adaptive_routing: per-pakcet\n");
  EXPECT_NE(hint.find("gen.yaml:5:"), std::string::npos) << hint;
  EXPECT_NE(hint.find("did you mean 'per-packet'"), std::string::npos) << hint;
  EXPECT_NE(error(std::string(kFatTree3) + "    adaptive_routing: {mode: per-packet, flowlet_gap: 5us}\n")
                .find("flowlet_gap is for mode: flowlet"),
            std::string::npos);
  EXPECT_NE(error(std::string(kFatTree3) + "    adaptive_routing: {mode: flowlet, flowlet_gap: soon}\n")
                .find("is not a time"),
            std::string::npos);
  const std::string minhop =
      error(std::string(kFatTree3) + "    sm: {routing: minhop}\n    adaptive_routing: per-packet\n");
  EXPECT_NE(minhop.find("needs Up/Down routing"), std::string::npos) << minhop;
  EXPECT_NE(minhop.find("routing: updn"), std::string::npos) << minhop;
  const std::string l2 = error(
      "    link_layer: ethernet\n    adaptive_routing: per-packet\n"
      "    switches: [{name: s0, ports: 2}]\n"
      "    hcas: [{name: r0, ip: 198.18.0.1}, {name: r1, ip: 198.18.0.2}]\n"
      "    links: [{a: r0, b: s0/1, speed: 25G}, {a: r1, b: s0/2, speed: 25G}]\n");
  EXPECT_NE(l2.find("none of its switches routes"), std::string::npos) << l2;
}

// Replaces every routed port that has an AR group by the group's (j mod n)-th.
Routes choose(const Routes& r, const ArGroups& g, size_t j) {
  Routes out = r;
  for (const auto& [sw, table] : g)
    for (const auto& [dest, ports] : table) out[sw][dest] = ports[j % ports.size()];
  return out;
}

TEST(AdaptiveRoutingGroups, AreTheUpDownEqualCostPortsAndEveryChoiceIsDeadlockFree) {
  const Config c = load(std::string(kFatTree3) + "    adaptive_routing: per-packet\n");
  const Fabric& f = c.fabrics[0];
  ArGroups g;
  const Routes r = compute_routes(f, false, &g);
  EXPECT_EQ(r, compute_routes(f)) << "asking for the groups leaves the routes as they were";
  // leaf0 (hosts on ports 1-2): both uplinks for every host of another leaf,
  // none for its own hosts; a core descends by one port only.
  ASSERT_TRUE(g.count("leaf0"));
  EXPECT_EQ(g.at("leaf0").size(), 14u);
  for (const auto& [dest, ports] : g.at("leaf0")) {
    EXPECT_EQ(ports, (std::vector<uint8_t>{3, 4})) << dest;
    EXPECT_NE(std::find(ports.begin(), ports.end(), r.at("leaf0").at(dest)), ports.end()) << "the LFT's port is one";
  }
  EXPECT_FALSE(g.count("core0"));
  // Any mix of choices is still up*/down*: every pair delivered, no credit loop.
  for (size_t j = 0; j < 4; ++j) {
    const Routes alt = choose(r, g, j);
    EXPECT_TRUE(check_credit_loops(f, alt).deadlock_free()) << j;
    for (const auto& h : f.hcas)
      for (const auto& [sw, table] : alt) EXPECT_TRUE(table.count(h.name)) << sw << " -> " << h.name;
  }
  // Min-hop fabrics get no groups.
  Fabric minhop = f;
  minhop.sm.routing = Routing::MinHop;
  ArGroups none;
  compute_routes(minhop, false, &none);
  EXPECT_TRUE(none.empty());
}

TEST(TopologyConfig, AnEthernetLeafSpineIsAnL3ClosWithASubnetPerLeaf) {
  const Config c = load(
      "    link_layer: ethernet\n"
      "    topology:\n"
      "      leaf_spine: {leaves: 3, spines: 2, hosts_per_leaf: 5}\n"
      "      addresses: 198.18.4.0/22\n"
      "      host_links: {speed: 25G, delay: 100ns}\n"
      "      hca: {rx_rate: 20Gbps}\n");
  const Fabric& f = c.fabrics[0];
  ASSERT_EQ(f.hcas.size(), 15u);
  for (const auto& h : f.hcas) {
    ASSERT_TRUE(h.ipv4);
    EXPECT_EQ(h.prefix_len, 29) << h.name;  // 5 hosts + network, gateway, broadcast: 8 addresses
    EXPECT_EQ(*h.ipv4 & addr::ipv4_mask(29), h.gateway & addr::ipv4_mask(29)) << h.name;
    EXPECT_EQ(h.rx_rate_bps, 20'000'000'000u);
  }
  EXPECT_EQ(addr::format_ipv4(*f.hcas[0].ipv4), "198.18.4.2");
  EXPECT_EQ(addr::format_ipv4(f.hcas[5].gateway), "198.18.4.9");
  EXPECT_EQ(f.link_of("vroce0")->eth_speed_gbps, 25u);
  for (const auto& s : f.switches) ASSERT_TRUE(s.router) << s.name;
}

TEST(TopologyConfig, BadTopologiesAreRefusedWithWhereAndWhy) {
  auto error = [](const std::string& fabric, const Limits& limits = kSimLimits) {
    try {
      load(fabric, limits);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error("    link_layer: infiniband\n    topology: {fat_tree: {k: 5}}\n").find("gen.yaml:4:"),
            std::string::npos);
  EXPECT_NE(error("    link_layer: infiniband\n    topology: {fat_tree: {k: 4}}\n    switches: []\n")
                .find("both a topology and switches"),
            std::string::npos);
  EXPECT_NE(error("    link_layer: infiniband\n    topology: {fat_tree: {k: 4}, switch: {ports: 9}}\n")
                .find("cannot set 'ports'"),
            std::string::npos);
  EXPECT_NE(error("    link_layer: infiniband\n    topology: {fat_tree: {k: 4}, leaf_spine: {leaves: 1}}\n")
                .find("exactly one of"),
            std::string::npos);
  const std::string limit = error("    link_layer: infiniband\n    topology: {fat_tree: {k: 12}}\n", Limits{});
  EXPECT_NE(limit.find("more than 64 HCAs"), std::string::npos) << limit;
  EXPECT_NE(limit.find("vfabric-sim"), std::string::npos) << limit;
  EXPECT_NE(error("    link_layer: ethernet\n    topology: {fat_tree: {k: 8}, addresses: 198.18.0.0/28}\n")
                .find("do not fit"),
            std::string::npos);
}

}  // namespace
}  // namespace vf::config::gen
