// The subnet manager at run time, on configs/fat-tree.yaml through a real
// fabricd: an unmodified ib_write_bw from vib0 (leaf0) to vib4 (leaf1) runs
// while the spine link its packets take is pulled (`fabricctl link set`).
// The SM sweeps, the new LFTs route around the link, RC retransmits what the
// dead link lost, and the run completes; the link's ports count the event.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

nlohmann::json routes(const Fabricd& d, const std::string& sw) {
  const RunResult r = d.ctl({"--json", "routes", sw});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

// The port `sw` forwards `hca`'s LID to; -1 when none.
int port_to(const nlohmann::json& rt, const std::string& hca) {
  for (const auto& e : rt.value("lft", nlohmann::json::array()))
    if (e["destination"] == hca) return e["port"].is_null() ? -1 : e["port"].get<int>();
  ADD_FAILURE() << hca << " missing from " << rt.dump();
  return -2;
}

TEST(Reroute, ASpineLinkPulledDuringWriteBwIsRoutedAround) {
  Fabricd d(read_file(Paths::source_dir() + "/configs/fat-tree.yaml"));
  const int up = port_to(routes(d, "leaf0"), "vib4");
  ASSERT_TRUE(up == 5 || up == 6) << up;
  const std::string link = "leaf0/" + std::to_string(up);

  Process server({"ib_write_bw", "-d", "vib4", "-i", "1", "-p", "19800", "-s", "65536", "-D", "3"}, d.app_env());
  std::unique_ptr<Process> client;
  for (int attempt = 0; attempt < 100 && !client; ++attempt) {
    client = std::make_unique<Process>(
        std::vector<std::string>{"ib_write_bw", "-d", "vib0", "-i", "1", "-p", "19800", "-s", "65536", "-D", "3",
                                 "127.0.0.1"},
        d.app_env());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (!client->running() && client->wait(std::chrono::seconds(1)).exit_code != 0) client.reset();
  }
  ASSERT_TRUE(client) << "the client never connected";
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // mid-run

  const RunResult pulled = d.ctl({"link", "set", link, "state", "down"});
  ASSERT_EQ(pulled.exit_code, 0) << pulled.describe();
  EXPECT_NE(pulled.out.find("DOWN (the subnet manager sweeps and reroutes)"), std::string::npos) << pulled.out;
  // The sweep follows within its delay; allow the control round trips.
  nlohmann::json rt;
  for (int i = 0; i < 50; ++i) {
    rt = routes(d, "leaf0");
    if (port_to(rt, "vib4") != up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(port_to(rt, "vib4"), up == 5 ? 6 : 5) << rt.dump();
  EXPECT_EQ(rt["sweep"]["links_up"].get<int>() + 1, rt["sweep"]["links"].get<int>()) << rt.dump();
  // No switch forwards anything over the dead link any more.
  for (const auto& e : rt["lft"]) EXPECT_NE(e["port"], up) << e.dump();
  // The SM's own account of it.
  const RunResult sm = d.ctl({"--json", "sm", "show"});
  ASSERT_EQ(sm.exit_code, 0) << sm.describe();
  const auto sms = nlohmann::json::parse(sm.out);
  ASSERT_EQ(sms.size(), 1u) << sm.out;
  EXPECT_EQ(sms[0]["routing"], "updn");
  EXPECT_EQ(sms[0]["roots"], nlohmann::json({"spine0", "spine1"})) << sm.out;
  EXPECT_EQ(sms[0]["sweeps"], 2) << sm.out;
  EXPECT_EQ(sms[0]["last_sweep"]["links_up"], 23) << sm.out;
  EXPECT_EQ(sms[0]["last_sweep"]["unrouted"], 4) << "the root that lost leaf0 reaches none of its 4 vHCAs";
  const RunResult sm_table = d.ctl({"sm", "show"});
  EXPECT_NE(sm_table.out.find("MASTER"), std::string::npos) << sm_table.out;

  const RunResult shown = d.ctl({"--json", "port", "show", link});
  ASSERT_EQ(shown.exit_code, 0) << shown.describe();
  const auto pv = nlohmann::json::parse(shown.out);
  EXPECT_EQ(pv["state"], "DOWN") << shown.out;
  EXPECT_FALSE(pv["link_up"].get<bool>()) << shown.out;
  EXPECT_EQ(pv["counters"]["LinkDownedCounter"], 1) << shown.out;
  EXPECT_FALSE(pv["classes"][0].contains("credits")) << "no credit state on a dead link: " << shown.out;

  const RunResult c = client->wait(std::chrono::seconds(60));
  EXPECT_EQ(c.exit_code, 0) << c.describe();
  const RunResult s = server.wait(std::chrono::seconds(30));
  EXPECT_EQ(s.exit_code, 0) << s.describe();

  const RunResult m = d.ctl({"metrics"});
  ASSERT_EQ(m.exit_code, 0) << m.describe();
  const std::string downed = "vfabric_link_downed_total{fabric=\"ib\",port=\"" + link + "\"} 1\n";
  EXPECT_NE(m.out.find(downed), std::string::npos) << downed;

  // Back up: the next sweep may use it again.
  ASSERT_EQ(d.ctl({"link", "set", link, "state", "up"}).exit_code, 0);
  for (int i = 0; i < 50; ++i) {
    rt = routes(d, "leaf0");
    if (rt["sweep"]["links_up"] == rt["sweep"]["links"]) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(port_to(rt, "vib4"), up) << "the original routes return: " << rt.dump();
}

TEST(Reroute, BadLinkRequestsAreRefusedWithAHint) {
  Fabricd d(read_file(Paths::source_dir() + "/configs/fat-tree.yaml"));
  RunResult r = d.ctl({"link", "set", "leaf0", "state", "down"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("6 links at leaf0"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("hint: name the switch port"), std::string::npos) << r.describe();
  r = d.ctl({"link", "set", "spine0", "spine1", "state", "down"});
  EXPECT_NE(r.err.find("no link between spine0 and spine1"), std::string::npos) << r.describe();
  r = d.ctl({"link", "set", "leaf0/5", "state", "sideways"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  r = d.ctl({"port", "show", "leaf0/9"});
  EXPECT_NE(r.err.find("switch leaf0 has ports 1..6"), std::string::npos) << r.describe();
  r = d.ctl({"port", "show", "vib0/1"});
  EXPECT_NE(r.err.find("a vHCA has one port"), std::string::npos) << r.describe();
  r = d.ctl({"port", "show", "nosuch"});
  EXPECT_NE(r.err.find("no port named 'nosuch'"), std::string::npos) << r.describe();
  r = d.ctl({"routes", "nosuch"});
  EXPECT_NE(r.err.find("no switch named 'nosuch'"), std::string::npos) << r.describe();
  // Nothing was taken down by any of it.
  const auto rt = routes(d, "leaf0");
  EXPECT_EQ(rt["sweep"]["number"], 1) << rt.dump();
}

}  // namespace
}  // namespace vf::test
