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

}  // namespace
}  // namespace vf::test
