// The routes fabricd gives an Ethernet fabric's routers (ip_routing.hpp), on
// configs/leaf-spine.yaml and small fabrics: ECMP over both spines, what a
// dead uplink changes, static routes, and what hosts learn from their
// gateway.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "daemon/config/config.hpp"
#include "daemon/ip/ip_routing.hpp"

namespace vf {
namespace {

config::Config leaf_spine() {
  std::ifstream in(std::string(VF_SOURCE_DIR) + "/configs/leaf-spine.yaml");
  std::stringstream text;
  text << in.rdbuf();
  return config::load_config_string(text.str(), "leaf-spine.yaml");
}

const routing::RouterTable& table_of(const std::vector<routing::RouterTable>& t, const config::Fabric& f,
                                     const std::string& sw) {
  for (const auto& r : t)
    if (f.switches[r.sw].name == sw) return r;
  throw std::runtime_error("no table for " + sw);
}

const routing::IpRoute* route_to(const routing::RouterTable& t, uint32_t prefix) {
  for (const auto& r : t.routes)
    if (r.prefix == prefix) return &r;
  return nullptr;
}

std::vector<uint16_t> ports_of(const routing::IpRoute& r) {
  std::vector<uint16_t> p;
  for (const auto& h : r.hops) p.push_back(h.port);
  return p;
}

constexpr uint32_t kLeaf0 = 0xC6120000, kLeaf1 = 0xC6120040, kLeaf2 = 0xC6120080;

TEST(IpRouting, EveryLeafReachesEveryOtherLeafOverBothSpines) {
  const config::Config c = leaf_spine();
  const config::Fabric& f = c.fabrics[0];
  const auto t = routing::ip_routes(f, [](std::size_t) { return true; });
  ASSERT_EQ(t.size(), 5u);
  const auto& leaf0 = table_of(t, f, "leaf0");
  ASSERT_EQ(leaf0.routes.size(), 2u);  // the other two leaves; its own subnet is connected
  for (uint32_t dst : {kLeaf1, kLeaf2}) {
    const routing::IpRoute* r = route_to(leaf0, dst);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->len, 26);
    EXPECT_EQ(ports_of(*r), (std::vector<uint16_t>{7, 8}));
    EXPECT_EQ(r->hops[0].mac, f.find_switch("spine0")->router->mac);
    EXPECT_EQ(r->hops[1].mac, f.find_switch("spine1")->router->mac);
  }
  EXPECT_EQ(route_to(leaf0, kLeaf0), nullptr);
  const auto& spine1 = table_of(t, f, "spine1");
  ASSERT_EQ(spine1.routes.size(), 3u);
  EXPECT_EQ(ports_of(*route_to(spine1, kLeaf0)), (std::vector<uint16_t>{1}));
  EXPECT_EQ(ports_of(*route_to(spine1, kLeaf2)), (std::vector<uint16_t>{3}));
  EXPECT_EQ(route_to(spine1, kLeaf2)->hops[0].mac, f.find_switch("leaf2")->router->mac);
}

TEST(IpRouting, ADeadUplinkLeavesTheOtherSpineAsTheOnlyPath) {
  const config::Config c = leaf_spine();
  const config::Fabric& f = c.fabrics[0];
  std::size_t dead = f.links.size();
  for (std::size_t i = 0; i < f.links.size(); ++i)
    if (f.links[i].a.text() == "leaf0/7") dead = i;
  ASSERT_LT(dead, f.links.size());
  const auto t = routing::ip_routes(f, [dead](std::size_t i) { return i != dead; });
  EXPECT_EQ(ports_of(*route_to(table_of(t, f, "leaf0"), kLeaf1)), (std::vector<uint16_t>{8}));
  EXPECT_EQ(ports_of(*route_to(table_of(t, f, "leaf1"), kLeaf0)), (std::vector<uint16_t>{8}));
  EXPECT_EQ(ports_of(*route_to(table_of(t, f, "leaf1"), kLeaf2)), (std::vector<uint16_t>{7, 8}));
  // spine0 still reaches leaf0, the long way round (through another leaf).
  const routing::IpRoute* around = route_to(table_of(t, f, "spine0"), kLeaf0);
  ASSERT_NE(around, nullptr);
  EXPECT_EQ(ports_of(*around), (std::vector<uint16_t>{2, 3}));
}

TEST(IpRouting, HostsTakeTheirGatewayAndPrefixFromTheirLeaf) {
  const config::Config c = leaf_spine();
  const config::Fabric& f = c.fabrics[0];
  const config::Hca* h = f.find_hca("vroce3");
  EXPECT_EQ(h->prefix_len, 26);
  EXPECT_EQ(h->gateway, 0xC6120041u);
  std::set<addr::Mac> macs;
  for (const auto& s : f.switches) macs.insert(s.router->mac);
  for (const auto& hh : f.hcas) macs.insert(hh.mac);
  EXPECT_EQ(macs.size(), f.switches.size() + f.hcas.size());  // every MAC distinct
}

constexpr const char* kStatic = R"(fabrics:
  - name: eth
    link_layer: ethernet
    switches:
      - {name: a, ports: 4, router: {gateway: 10.0.0.1/24, routed_ports: [3, 4],
                                     routes: [{dst: 10.0.0.0/8, via: [4]}]}}
      - {name: b, ports: 4, router: {gateway: 10.0.1.1/24, routed_ports: [3, 4]}}
    hcas:
      - {name: h0, ip: 10.0.0.10}
      - {name: h1, ip: 10.0.1.10/24}
      - {name: h2, ip: 10.0.1.11}
    links:
      - {a: h0, b: a/1, speed: 100G}
      - {a: h1, b: b/1, speed: 100G}
      - {a: h2, b: b/2, speed: 100G}
      - {a: a/3, b: b/3, speed: 100G}
      - {a: a/4, b: b/4, speed: 100G}
)";

TEST(IpRouting, StaticRoutesReplaceComputedOnesAndParallelLinksAreEcmpMembers) {
  const config::Config c = config::load_config_string(kStatic, "static.yaml");
  const config::Fabric& f = c.fabrics[0];
  const auto t = routing::ip_routes(f, [](std::size_t) { return true; });
  const auto& a = table_of(t, f, "a");
  ASSERT_EQ(a.routes.size(), 1u);
  EXPECT_EQ(a.routes[0].prefix, 0x0A000000u);
  EXPECT_EQ(a.routes[0].len, 8);
  EXPECT_EQ(ports_of(a.routes[0]), (std::vector<uint16_t>{4}));
  const auto& b = table_of(t, f, "b");
  ASSERT_EQ(b.routes.size(), 1u);
  EXPECT_EQ(ports_of(b.routes[0]), (std::vector<uint16_t>{3, 4}));  // two cables, one neighbour
  // A static route holds whatever the links do; computed ones follow them.
  const auto down = routing::ip_routes(f, [](std::size_t i) { return i != 4; });
  EXPECT_EQ(ports_of(table_of(down, f, "a").routes[0]), (std::vector<uint16_t>{4}));
  EXPECT_EQ(ports_of(table_of(down, f, "b").routes[0]), (std::vector<uint16_t>{3}));
}

}  // namespace
}  // namespace vf
