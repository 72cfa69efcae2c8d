// The Ethernet switch as a learning bridge through a real fabricd: unmodified
// ibv_rc_pingpong over RoCEv2 resolves with ARP on the wire and teaches the
// switches where each station is (`fabricctl routes` shows the FDB), in the
// untagged default VLAN and across a trunk in a tagged VLAN.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fabricd_fixture.hpp"
#include "rc_pingpong.hpp"

namespace vf::test {
namespace {

nlohmann::json fdb(const Fabricd& d, const std::string& sw) {
  const RunResult r = d.ctl({"--json", "routes", sw});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return nlohmann::json::parse(r.out, nullptr, false);
}

// The FDB entry of `station`, or null.
nlohmann::json entry_of(const nlohmann::json& f, const std::string& station) {
  for (const auto& e : f.value("fdb", nlohmann::json::array()))
    if (e.value("station", "") == station) return e;
  return nullptr;
}

TEST(Bridge, ARocePingpongTeachesTheSwitchBothStations) {
  Fabricd d(default_config());
  EXPECT_EQ(fdb(d, "ethsw0")["fdb"].size(), 0u);  // nothing is programmed: it learns
  const RunResult pp = rc_pingpong(d, "vroce1", "vroce0", {"-g", "1", "-n", "5"}, 19970);
  ASSERT_EQ(pp.exit_code, 0) << pp.describe();
  const nlohmann::json f = fdb(d, "ethsw0");
  const nlohmann::json a = entry_of(f, "vroce0"), b = entry_of(f, "vroce1");
  ASSERT_FALSE(a.is_null()) << f.dump();
  ASSERT_FALSE(b.is_null()) << f.dump();
  EXPECT_EQ(a["port"], 1);
  EXPECT_EQ(b["port"], 2);
  EXPECT_EQ(a["type"], "learned");
  EXPECT_EQ(a["vlan"], 1);
  EXPECT_LT(a["age_s"].get<double>(), 60.0);
  EXPECT_EQ(f["ageing_s"], 300.0);
  // Resolution was on the wire: the client's ARP request was flooded once.
  EXPECT_GE(f["counters"]["flooded"].get<int>(), 1);
  const RunResult human = d.ctl({"routes", "ethsw0"});
  EXPECT_NE(human.out.find("learning bridge, ageing 300 s): 2 FDB entries"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("vroce0"), std::string::npos) << human.out;
}

constexpr const char* kTrunk = R"(daemon:
  runtime_dir: /run/vfabric
fabrics:
  - name: roce
    link_layer: ethernet
    switches:
      - {name: sw0, ports: 4, ageing: 60s}
      - {name: sw1, ports: 4, fdb: [{mac: "02:00:00:00:00:99", port: 4, vlan: 10}]}
    hcas:
      - {name: vroce0, ip: 198.18.0.1, vlan: 10}
      - {name: vroce1, ip: 198.18.0.2, vlan: 10}
      - {name: vroce2, ip: 198.18.0.3}
    links:
      - {a: vroce0, b: sw0/1, speed: 10G}
      - {a: sw0/3, b: sw1/3, speed: 10G}
      - {a: vroce1, b: sw1/1, speed: 10G}
      - {a: vroce2, b: sw1/2, speed: 10G}
)";

TEST(Bridge, TaggedHostsTalkAcrossATrunkInTheirVlan) {
  Fabricd d(kTrunk);
  const RunResult pp = rc_pingpong(d, "vroce1", "vroce0", {"-g", "1", "-n", "5"}, 19971);
  ASSERT_EQ(pp.exit_code, 0) << pp.describe();
  const nlohmann::json f0 = fdb(d, "sw0"), f1 = fdb(d, "sw1");
  EXPECT_EQ(f0["ageing_s"], 60.0);
  const nlohmann::json a0 = entry_of(f0, "vroce0"), b0 = entry_of(f0, "vroce1"), b1 = entry_of(f1, "vroce1");
  ASSERT_FALSE(a0.is_null()) << f0.dump();
  ASSERT_FALSE(b0.is_null()) << f0.dump();
  ASSERT_FALSE(b1.is_null()) << f1.dump();
  EXPECT_EQ(a0["vlan"], 10);  // learned from tagged frames
  EXPECT_EQ(a0["port"], 1);
  EXPECT_EQ(b0["port"], 3);   // behind the trunk
  EXPECT_EQ(b1["port"], 1);
  EXPECT_TRUE(entry_of(f0, "vroce2").is_null());  // untagged VLAN 1 never spoke
  bool pinned = false;
  for (const auto& e : f1["fdb"])
    if (e["mac"] == "02:00:00:00:00:99") pinned = e["type"] == "static" && e["port"] == 4 && e["vlan"] == 10;
  EXPECT_TRUE(pinned) << f1.dump();
}

}  // namespace
}  // namespace vf::test
