// Min-hop routes as the subnet manager programs them into switch LFTs/FDBs.
#include <gtest/gtest.h>

#include "daemon/config.hpp"
#include "daemon/routing.hpp"

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
    hcas: [{name: a, ip: 192.0.2.1}, {name: b, ip: 192.0.2.2}]
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

}  // namespace
}  // namespace vf
