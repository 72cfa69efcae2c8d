// configs/fat-tree.yaml on a real fabricd: 16 vHCAs under 4 leaves and 2
// spines, Up/Down routing. Unmodified ibv_rc_pingpong from vib0 to every
// other vHCA (same leaf, and across a spine to every other leaf) and from
// each vHCA to its mirror on the far side, so every leaf sends to and
// receives from every other. (Every LFT entry of every switch is walked in
// tests/unit/daemon/routing_test.cpp; this proves the daemon programs them.)
#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "fabricd_fixture.hpp"
#include "rc_pingpong.hpp"
#include "ud_helpers.hpp"

#include <nlohmann/json.hpp>

namespace vf::test {
namespace {

RunResult pingpong(const Fabricd& d, unsigned server, unsigned client, int port) {
  Process srv({"ibv_rc_pingpong", "-d", "vib" + std::to_string(server), "-i", "1", "-p", std::to_string(port),
               "-n", "3", "-s", "4096"},
              d.app_env());
  RunResult c;
  for (int attempt = 0; attempt < 50; ++attempt) {
    c = run({"ibv_rc_pingpong", "-d", "vib" + std::to_string(client), "-i", "1", "-p", std::to_string(port), "-n",
             "3", "-s", "4096", "127.0.0.1"},
            d.app_env(), std::chrono::seconds(20));
    if (c.err.find("Couldn't connect") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const RunResult s = srv.wait(std::chrono::seconds(20));
  if (s.exit_code != 0) return s;
  return c;
}

TEST(FatTree, EveryLeafReachesEveryOtherThroughTheSpines) {
  Fabricd d(read_file(Paths::source_dir() + "/configs/fat-tree.yaml"));
  int port = 19700;
  std::vector<std::pair<unsigned, unsigned>> pairs;
  for (unsigned to = 1; to < 16; ++to) pairs.push_back({to, 0});
  for (unsigned from = 1; from < 8; ++from) pairs.push_back({15 - from, from});
  for (const auto& [server, client] : pairs) {
    const RunResult r = pingpong(d, server, client, port++);
    EXPECT_EQ(r.exit_code, 0) << "vib" << client << " -> vib" << server << ": " << r.describe();
  }
  // Nothing was lost or misrouted on the way.
  const RunResult m = d.ctl({"metrics"});
  ASSERT_EQ(m.exit_code, 0);
  for (const char* bad : {"vfabric_port_rcv_switch_relay_errors_total", "vfabric_port_xmit_discards_total",
                          "vfabric_retransmitted_packets_total"}) {
    std::istringstream in(m.out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(bad, 0) != 0) continue;
      EXPECT_EQ(line.substr(line.rfind(' ') + 1), "0") << line;
    }
  }
}

// configs/generated.yaml: fabrics written as a few numbers (`topology:`)
// run on fabricd as written ones do. Each pair crosses the top level: IB
// vib0 (leaf0) to vib7 (leaf3) through a spine; RoCE server 0's rail 0 HCA
// to server 1's rail 1 HCA, routed leaf -> spine -> leaf across subnets.
TEST(FatTree, AGeneratedTopologyRunsAsWritten) {
  const std::string path = Paths::source_dir() + "/configs/generated.yaml";
  const RunResult check = run({Paths::fabricctl(), "config", "check", path}, {}, std::chrono::seconds(20));
  ASSERT_EQ(check.exit_code, 0) << check.describe();
  EXPECT_NE(check.out.find("generated: fabric 'ib': 2-level fat tree, k=4 (1:1): 8 hosts"), std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("generated: fabric 'roce': rail-optimized: 2 servers x 2 rails = 4 hosts"),
            std::string::npos)
      << check.out;

  Fabricd d(read_file(path));
  EXPECT_EQ(rc_pingpong(d, "vib7", "vib0", {"-n", "5", "-s", "4096"}, 19710).exit_code, 0);
  EXPECT_EQ(rc_pingpong(d, "vroce3", "vroce0", {"-g", "1", "-n", "5", "-s", "4096"}, 19711).exit_code, 0);
  const RunResult trace = d.ctl({"exec", "--", "ibtracert", "1", "8"});
  ASSERT_EQ(trace.exit_code, 0) << trace.describe();
  EXPECT_NE(trace.out.find("\"spine"), std::string::npos) << trace.out;
  const RunResult routes = d.ctl({"routes", "eth_spine0"});
  EXPECT_NE(routes.out.find("198.18.0.8/29"), std::string::npos) << routes.out;
}

// UD multicast across the fat tree: the subnet manager's tree carries one
// datagram to members under three leaves, from a member and from a port that
// never joined, and survives a spine link going down (the sweep moves the
// tree to the other spine).
TEST(FatTree, MulticastReachesMembersUnderEveryLeafAndFollowsASweep) {
  Fabricd d(read_file(Paths::source_dir() + "/configs/fat-tree.yaml"));
  for (auto& [k, v] : d.app_env(/*preload=*/false)) setenv(k.c_str(), v.c_str(), 1);  // before libibverbs looks
  constexpr uint16_t kMlid = 0xC100;
  const ibv_gid g = group_gid(false, 9);
  std::vector<std::unique_ptr<VerbsSide>> members;
  for (const char* dev : {"vib0", "vib5", "vib10", "vib11"}) {
    members.push_back(open_ud_side(dev, 0));
    ASSERT_EQ(ibv_attach_mcast(members.back()->qp, &g, kMlid), 0) << dev;
  }
  auto outsider = open_ud_side("vib15", 0);  // sends without joining
  auto send_from = [&](VerbsSide& s, const char* text) {
    for (auto& m : members) ASSERT_EQ(post_recv(*m, 1, {sge(*m, 1024, 40 + 256)}), 0);
    ibv_ah* ah = multicast_ah(s, g, kMlid, 0);
    ASSERT_NE(ah, nullptr);
    std::strcpy(s.buf.data(), text);
    ASSERT_EQ(post_ud(s, ah, kGroupQpn, kUdQkey, sge(s, 0, uint32_t(std::strlen(text) + 1))), 0);
    for (size_t i = 0; i < members.size(); ++i) {
      const auto got = receives(drain(members[i]->cq, 0, 1));
      ASSERT_EQ(got.size(), 1u) << "member " << i << " gets '" << text << "' once";
      EXPECT_EQ(got[0].status, IBV_WC_SUCCESS);
      EXPECT_STREQ(members[i]->buf.data() + 1024 + 40, text);
    }
    drain(s.cq, 50);  // the send completion
    ibv_destroy_ah(ah);
  };
  send_from(*outsider, "from a non-member on leaf3");
  send_from(*members[1], "from a member on leaf1");  // its own QP gets the loopback copy

  // leaf1's link to spine0 goes down: the sweep rebuilds the tree through spine1.
  ASSERT_EQ(d.ctl({"link", "set", "leaf1/5", "state", "down"}).exit_code, 0);
  const auto leaf1_ports = [&] {
    const auto r = nlohmann::json::parse(d.ctl({"--json", "routes", "leaf1"}).out, nullptr, false);
    for (const auto& e : r.value("mft", nlohmann::json::array()))
      if (e.value("mlid", 0) == kMlid) return e["ports"];
    return nlohmann::json();
  };
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (leaf1_ports() != nlohmann::json::array({2, 6}) && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(leaf1_ports(), nlohmann::json::array({2, 6})) << "vib5's port and the link to spine1";
  send_from(*members[0], "after the sweep");

  // Every copy went where a tree sent it: no switch met the group without an entry.
  const RunResult m = d.ctl({"metrics"});
  std::istringstream in(m.out);
  int ports_seen = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("vfabric_port_rcv_switch_relay_errors_total", 0) == 0) {
      ++ports_seen;
      EXPECT_EQ(line.substr(line.rfind(' ') + 1), "0") << line;
    }
  }
  EXPECT_GT(ports_seen, 0) << "the relay-error counters are in the metrics";
  for (auto& mem : members) EXPECT_EQ(ibv_detach_mcast(mem->qp, &g, kMlid), 0);
}

}  // namespace
}  // namespace vf::test
