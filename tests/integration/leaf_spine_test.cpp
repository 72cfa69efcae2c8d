// configs/leaf-spine.yaml on a real fabricd: a routed RoCEv2 leaf-spine.
// Unmodified ibv_rc_pingpong between hosts on different leaves (ARP for the
// gateway on the wire, TTL 64 from the QP's path), ib_write_bw with eight
// QPs spread over both spines by ECMP on the UDP source port, and an uplink
// taken down: the routes reconverge and traffic keeps flowing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fabricd_fixture.hpp"
#include "perftest_pair.hpp"
#include "rc_pingpong.hpp"

namespace vf::test {
namespace {

nlohmann::json ip_of(const Fabricd& d, const std::string& sw) {
  const RunResult r = d.ctl({"--json", "routes", sw});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  return j.is_object() ? j.value("ip", nlohmann::json::object()) : nlohmann::json::object();
}

uint64_t routed(const Fabricd& d, const std::string& sw) {
  const nlohmann::json ip = ip_of(d, sw);
  return ip["counters"].value("routed", uint64_t{0});
}

// The ports of `sw`'s route to `dst` ("198.18.0.64/26").
std::vector<int> via(const Fabricd& d, const std::string& sw, const std::string& dst) {
  std::vector<int> ports;
  const nlohmann::json ip = ip_of(d, sw);
  for (const auto& r : ip["routes"])
    if (r["dst"] == dst)
      for (const auto& h : r.value("nexthops", nlohmann::json::array())) ports.push_back(h["port"].get<int>());
  return ports;
}

Fabricd leaf_spine() { return Fabricd(read_file(Paths::source_dir() + "/configs/leaf-spine.yaml")); }

TEST(LeafSpine, HostsOnDifferentLeavesTalkThroughTheirGateways) {
  Fabricd d = leaf_spine();
  for (const char* server : {"vroce2", "vroce5"}) {
    const RunResult pp = rc_pingpong(d, server, "vroce0", {"-g", "1", "-n", "5", "-c"}, 20200 + server[5]);
    EXPECT_EQ(pp.exit_code, 0) << server << ": " << pp.describe();
  }
  const nlohmann::json leaf0 = ip_of(d, "leaf0");
  EXPECT_EQ(leaf0["gateway"], "198.18.0.1/26");
  bool resolved = false;
  for (const auto& n : leaf0["neighbours"]) resolved |= n["station"] == "vroce0";
  EXPECT_TRUE(resolved) << leaf0.dump();  // vroce0 asked for its gateway on the wire
  EXPECT_GT(routed(d, "leaf0"), 0u);
  EXPECT_GT(routed(d, "spine0") + routed(d, "spine1"), 0u);
  for (const char* sw : {"leaf0", "leaf1", "leaf2", "spine0", "spine1"}) {
    const nlohmann::json c = ip_of(d, sw)["counters"];
    for (const char* drop : {"ttl_exceeded", "no_route", "no_next_hop", "header_errors", "not_routable"})
      EXPECT_EQ(c[drop], 0) << sw << " " << drop;
  }
  const RunResult human = d.ctl({"routes", "leaf0"});
  EXPECT_NE(human.out.find("IPv4 router, MAC "), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("198.18.0.64/26   ecmp"), std::string::npos) << human.out;
  // Prometheus has the router's counters; a reset of the switch clears them.
  const RunResult m = d.ctl({"metrics"});
  const std::string family = "vfabric_routed_total{fabric=\"dc\",switch=\"leaf0\"} ";
  const size_t at = m.out.find(family);
  ASSERT_NE(at, std::string::npos) << m.out.substr(0, 2000);
  EXPECT_EQ(std::stoull(m.out.substr(at + family.size())), routed(d, "leaf0"));
  ASSERT_EQ(d.ctl({"counters", "reset", "leaf0/1"}).exit_code, 0);
  EXPECT_GT(routed(d, "leaf0"), 0u) << "one port's reset leaves the switch's own counters";
  ASSERT_EQ(d.ctl({"counters", "reset", "leaf0"}).exit_code, 0);
  EXPECT_EQ(routed(d, "leaf0"), 0u);
}

TEST(LeafSpine, EightQpsSpreadOverBothSpinesAndSurviveAnUplinkGoingDown) {
  Fabricd d = leaf_spine();
  const PerftestPair bw =
      perftest_pair(d, "ib_write_bw", "vroce2", "vroce0", {"-x", "1", "-q", "8", "-n", "2000", "-s", "4096"}, 20300);
  EXPECT_TRUE(bw.ok()) << bw.describe();
  const uint64_t s0 = routed(d, "spine0"), s1 = routed(d, "spine1");
  std::printf("ECMP over 8 QPs: spine0 routed %llu packets, spine1 %llu\n", (unsigned long long)s0,
              (unsigned long long)s1);
  // 8 flows over 2 members: both carry a real share (all 8 on one side has
  // probability 2^-7 for a fair hash; the hash is fixed, so this is stable).
  EXPECT_GT(s0, (s0 + s1) / 8) << "spine0";
  EXPECT_GT(s1, (s0 + s1) / 8) << "spine1";

  ASSERT_EQ(via(d, "leaf1", "198.18.0.0/26"), (std::vector<int>{7, 8}));
  const RunResult down = d.ctl({"link", "set", "leaf0/7", "state", "down"});
  ASSERT_EQ(down.exit_code, 0) << down.describe();
  EXPECT_EQ(via(d, "leaf1", "198.18.0.0/26"), (std::vector<int>{8}));  // reconverged
  EXPECT_EQ(via(d, "leaf0", "198.18.0.64/26"), (std::vector<int>{8}));
  const uint64_t before = routed(d, "spine1");
  const RunResult pp = rc_pingpong(d, "vroce2", "vroce0", {"-g", "1", "-n", "20", "-c"}, 20301);
  EXPECT_EQ(pp.exit_code, 0) << pp.describe();
  EXPECT_GE(routed(d, "spine1") - before, 40u) << "both directions crossed the remaining spine";
  const RunResult up = d.ctl({"link", "set", "leaf0/7", "state", "up"});
  ASSERT_EQ(up.exit_code, 0) << up.describe();
  EXPECT_EQ(via(d, "leaf1", "198.18.0.0/26"), (std::vector<int>{7, 8}));
}

}  // namespace
}  // namespace vf::test
