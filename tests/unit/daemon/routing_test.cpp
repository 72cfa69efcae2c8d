// Routes as the subnet manager programs them into switch LFTs/FDBs (min-hop
// and Up/Down), and the credit-loop check of a routing.
#include <gtest/gtest.h>

#include "daemon/config/config.hpp"
#include "daemon/sm/credit_loops.hpp"
#include "daemon/sm/routing.hpp"

namespace vf {
namespace {

config::Config load(const std::string& fabric_yaml) {
  return config::load_config_string("fabrics:\n" + fabric_yaml, "routing_test.yaml");
}

TEST(Routing, SingleSwitchRoutesEachHcaToItsOwnPort) {
  auto cfg = load(R"(  - name: ib
    link_layer: infiniband
    switches: [{name: sw, ports: 4}]
    hcas: [{name: a}, {name: b}]
    links:
      - {a: a, b: sw/3, width: 4x, speed: EDR, delay: 1ns, mtu: 4096}
      - {a: b, b: sw/1, width: 4x, speed: EDR, delay: 1ns, mtu: 4096}
)");
  Routes r = compute_min_hop_routes(cfg.fabrics[0]);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r["sw"]["a"], 3u);
  EXPECT_EQ(r["sw"]["b"], 1u);
}

// a - s1 = s2 - s3 - b, plus a shortcut s1 - s3: traffic for b leaves s1 on
// the shortcut (2 hops), not through s2 (3 hops).
TEST(Routing, PrefersFewestHopsAcrossSwitches) {
  auto cfg = load(R"(  - name: ib
    link_layer: infiniband
    switches: [{name: s1, ports: 8}, {name: s2, ports: 8}, {name: s3, ports: 8}]
    hcas: [{name: a}, {name: b}]
    links:
      - {a: a, b: s1/1, width: 4x, speed: EDR, delay: 1ns, mtu: 4096}
      - {a: s1/2, b: s2/2, width: 4x, speed: EDR, delay: 1ns, mtu: 4096}
      - {a: s2/3, b: s3/3, width: 4x, speed: EDR, delay: 1ns, mtu: 4096}
      - {a: s1/4, b: s3/4, width: 4x, speed: EDR, delay: 1ns, mtu: 4096}
      - {a: b, b: s3/5, width: 4x, speed: EDR, delay: 1ns, mtu: 4096}
)");
  Routes r = compute_min_hop_routes(cfg.fabrics[0]);
  EXPECT_EQ(r["s1"]["b"], 4u);  // the shortcut
  EXPECT_EQ(r["s1"]["a"], 1u);
  EXPECT_EQ(r["s2"]["b"], 3u);  // s2 -> s3 -> b
  EXPECT_EQ(r["s2"]["a"], 2u);  // s2 -> s1 -> a
  EXPECT_EQ(r["s3"]["a"], 4u);
  EXPECT_EQ(r["s3"]["b"], 5u);
}

TEST(Routing, PartitionedSwitchHasNoRouteToUnreachableHca) {
  auto cfg = load(R"(  - name: eth
    link_layer: ethernet
    switches: [{name: s1, ports: 4}, {name: s2, ports: 4}]
    hcas: [{name: a, ip: 198.18.0.1}, {name: b, ip: 198.18.0.2}]
    links:
      - {a: a, b: s1/1, speed: 100G, delay: 1ns, mtu: 1500}
      - {a: b, b: s2/1, speed: 100G, delay: 1ns, mtu: 1500}
      - {a: s1/2, b: s2/2, speed: 100G, delay: 1ns, mtu: 1500}
)");
  // The config refuses a split fabric, but routing must still cope with one.
  cfg.fabrics[0].links.pop_back();
  Routes r = compute_min_hop_routes(cfg.fabrics[0]);
  EXPECT_EQ(r["s1"].count("b"), 0u);
  EXPECT_EQ(r["s2"].count("a"), 0u);
  EXPECT_EQ(r["s1"]["a"], 1u);
}


config::Config from_file(const char* name) {
  return config::load_config(std::string(VF_SOURCE_DIR) + "/configs/" + name);
}

// Follows the tables from HCA `src` to HCA `dst`: the switches passed, or
// empty when the route is missing or loops.
std::vector<std::string> walk(const config::Fabric& f, const Routes& r, const std::string& src,
                              const std::string& dst) {
  std::vector<std::string> path;
  const config::Link* l = f.link_of(src);
  config::Endpoint at = l->a.node == src ? l->b : l->a;
  while (at.is_switch) {
    path.push_back(at.node);
    if (path.size() > f.switches.size()) return {};
    const auto t = r.find(at.node);
    if (t == r.end() || !t->second.count(dst)) return {};
    const uint32_t port = t->second.at(dst);
    bool found = false;
    for (const auto& k : f.links) {
      if (k.a.node == at.node && k.a.port == port) at = k.b, found = true;
      else if (k.b.node == at.node && k.b.port == port) at = k.a, found = true;
      if (found) break;
    }
    if (!found) return {};
  }
  if (at.node != dst) return {};
  return path;
}

// Every LFT entry of every switch leads to its HCA, without a loop.
void expect_all_pairs_delivered(const config::Fabric& f, const Routes& r) {
  for (const auto& a : f.hcas)
    for (const auto& b : f.hcas) {
      if (a.name == b.name) continue;
      EXPECT_FALSE(walk(f, r, a.name, b.name).empty()) << a.name << " -> " << b.name;
    }
  for (const auto& s : f.switches)
    for (const auto& h : f.hcas) EXPECT_TRUE(r.count(s.name) && r.at(s.name).count(h.name)) << s.name << " -> " << h.name;
}

TEST(Routing, MinHopOnTheRingHasACreditLoopAndUpDownHasNone) {
  const config::Config c = from_file("ring.yaml");
  const config::Fabric& f = c.fabrics[0];
  const Routes minhop = compute_min_hop_routes(f);
  expect_all_pairs_delivered(f, minhop);
  // vibN -> vib(N+2) goes clockwise through two ring links: the five ring
  // links wait on each other in a circle.
  EXPECT_EQ(walk(f, minhop, "vib0", "vib2"), (std::vector<std::string>{"sw0", "sw1", "sw2"}));
  const CreditLoopCheck loop = check_credit_loops(f, minhop);
  EXPECT_TRUE(loop.looping_routes.empty());
  ASSERT_EQ(loop.cycle.size(), 5u) << "the five clockwise ring links";
  for (const auto& ch : loop.cycle) EXPECT_NE(ch.find("/2->sw"), std::string::npos) << ch;

  const Routes updn = compute_updn_routes(f, {});
  EXPECT_EQ(default_updn_roots(f), std::vector<std::string>{"sw0"}) << "every switch has an HCA";
  expect_all_pairs_delivered(f, updn);
  EXPECT_TRUE(check_credit_loops(f, updn).deadlock_free());
  // The route that would close the circle goes round the other way.
  EXPECT_EQ(walk(f, updn, "vib3", "vib0"), (std::vector<std::string>{"sw3", "sw4", "sw0"}));
  EXPECT_EQ(walk(f, updn, "vib4", "vib1"), (std::vector<std::string>{"sw4", "sw0", "sw1"}));
  // What the config asks for.
  config::Fabric g = f;
  g.sm.routing = config::Routing::UpDown;
  EXPECT_EQ(compute_routes(g), updn);
  EXPECT_EQ(compute_routes(f), minhop);
}

TEST(Routing, UpDownOnTheFatTreeClimbsToASpineOnlyWhenItMust) {
  const config::Config c = from_file("fat-tree.yaml");
  const config::Fabric& f = c.fabrics[0];
  ASSERT_EQ(f.sm.routing, config::Routing::UpDown);
  EXPECT_EQ(default_updn_roots(f), (std::vector<std::string>{"spine0", "spine1"}));
  const Routes r = compute_routes(f);
  expect_all_pairs_delivered(f, r);
  EXPECT_TRUE(check_credit_loops(f, r).deadlock_free());
  EXPECT_EQ(walk(f, r, "vib0", "vib1"), std::vector<std::string>{"leaf0"}) << "same leaf: no climb";
  const auto across = walk(f, r, "vib0", "vib15");
  ASSERT_EQ(across.size(), 3u);
  EXPECT_EQ(across.front(), "leaf0");
  EXPECT_EQ(across.back(), "leaf3");
  EXPECT_EQ(across[1].rfind("spine", 0), 0u);
  // Min-hop on a tree is loop-free too: the lesson needs a cycle of switches.
  EXPECT_TRUE(check_credit_loops(f, compute_min_hop_routes(f)).deadlock_free());
}

TEST(Routing, NamedRootsAreUsed) {
  const config::Config c = from_file("ring.yaml");
  const config::Fabric& f = c.fabrics[0];
  const Routes r = compute_updn_routes(f, {"sw2"});
  expect_all_pairs_delivered(f, r);
  EXPECT_TRUE(check_credit_loops(f, r).deadlock_free());
  // Root sw2: sw0 and sw4 are equally far from it, and the link between them
  // points up towards sw0 (earlier in the config): sw0 -> sw4 descends it,
  // sw4 -> sw0 climbs it. sw3 reaches sw1 over the root.
  EXPECT_EQ(walk(f, r, "vib0", "vib4"), (std::vector<std::string>{"sw0", "sw4"}));
  EXPECT_EQ(walk(f, r, "vib4", "vib0"), (std::vector<std::string>{"sw4", "sw0"}));
  EXPECT_EQ(walk(f, r, "vib3", "vib1"), (std::vector<std::string>{"sw3", "sw2", "sw1"}));
  EXPECT_NE(r, compute_updn_routes(f, {"sw0"})) << "the roots decide the tables";
}

TEST(Routing, ALoopingTableIsReported) {
  const config::Config c = from_file("ring.yaml");
  const config::Fabric& f = c.fabrics[0];
  Routes r = compute_min_hop_routes(f);
  r["sw1"]["vib3"] = 3;  // back towards sw0, which sends it to sw1 again
  r["sw0"]["vib3"] = 2;
  const CreditLoopCheck check = check_credit_loops(f, r);
  EXPECT_FALSE(check.looping_routes.empty());
  EXPECT_FALSE(check.deadlock_free());
}

// Follows switch routes from switch `src` to switch `dst`'s port 0: the
// switches passed, or empty when the route is missing or loops.
std::vector<std::string> walk_to_switch(const config::Fabric& f, const Routes& r, std::string at,
                                        const std::string& dst) {
  std::vector<std::string> path;
  for (;;) {
    path.push_back(at);
    if (path.size() > f.switches.size()) return {};
    const auto t = r.find(at);
    if (t == r.end() || !t->second.count(dst)) return {};
    const uint32_t port = t->second.at(dst);
    if (port == 0) return at == dst ? path : std::vector<std::string>{};
    std::string next;
    for (const auto& k : f.links) {
      if (k.a.node == at && k.a.port == port && k.b.is_switch) next = k.b.node;
      if (k.b.node == at && k.b.port == port && k.a.is_switch) next = k.a.node;
    }
    if (next.empty()) return {};
    at = next;
  }
}

// LID-routed MADs to a switch (SMA, PMA, the SA on the SM's switch) need
// every switch's LID in every LFT, port 0 on the switch itself.
TEST(Routing, EverySwitchHasARouteToEveryOtherSwitchsOwnPort) {
  const config::Config ring = from_file("ring.yaml");
  const Routes minhop = compute_routes(ring.fabrics[0], /*to_switches=*/true);
  for (const auto& a : ring.fabrics[0].switches)
    for (const auto& b : ring.fabrics[0].switches)
      EXPECT_FALSE(walk_to_switch(ring.fabrics[0], minhop, a.name, b.name).empty()) << a.name << " -> " << b.name;
  EXPECT_EQ(walk_to_switch(ring.fabrics[0], minhop, "sw0", "sw0"), std::vector<std::string>{"sw0"});
  EXPECT_EQ(walk_to_switch(ring.fabrics[0], minhop, "sw0", "sw2").size(), 3u);

  const config::Config tree = from_file("fat-tree.yaml");
  const config::Fabric& f = tree.fabrics[0];
  const Routes updn = compute_routes(f, true);
  for (const char* leaf : {"leaf0", "leaf1", "leaf2", "leaf3"}) {
    for (const auto& s : f.switches) EXPECT_FALSE(walk_to_switch(f, updn, leaf, s.name).empty()) << leaf << " -> " << s.name;
    EXPECT_EQ(walk_to_switch(f, updn, leaf, "spine0"), (std::vector<std::string>{leaf, "spine0"}));
  }
  EXPECT_EQ(walk_to_switch(f, updn, "leaf0", "leaf3").size(), 3u) << "up to a spine, down to leaf3";
  EXPECT_TRUE(walk_to_switch(f, updn, "spine0", "spine1").empty()) << "down then up is no Up/Down route";
  EXPECT_EQ(compute_routes(f), compute_updn_routes(f, {})) << "the HCA routes are unchanged";
}

}  // namespace
}  // namespace vf
