// `fabricctl port set <hca> state down|up`: apps get PORT_ERR / PORT_ACTIVE,
// and ibv_devinfo (query_port) and sysfs follow the state.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

const std::string kProbe = VF_PROBE_PATH;

class PortState : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(default_config()); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }
  // Starts a program that waits for vib0's first async event.
  static std::unique_ptr<Process> listener() {
    auto p = std::make_unique<Process>(std::vector<std::string>{kProbe, "async", "vib0"}, daemon_->app_env());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (p->out_so_far().find("ready") == std::string::npos) {
      if (!p->running() || std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "probe never opened vib0: " << p->wait(std::chrono::seconds(1)).describe();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return p;
  }
  static std::string devinfo() {
    auto r = run({"ibv_devinfo", "-d", "vib0"}, daemon_->app_env());
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    return r.out;
  }
  static std::string sysfs(const char* attr) {
    return read_file(daemon_->runtime_dir() + "/sys/class/infiniband/vib0/ports/1/" + attr);
  }
  // ibv_rc_pingpong's client, vib0 to a server on vib1 at `tcp_port`, once
  // the server listens.
  static RunResult pingpong_client(const std::string& tcp_port) {
    RunResult client;
    for (int attempt = 0; attempt < 50; ++attempt) {
      client = run({"ibv_rc_pingpong", "-d", "vib0", "-i", "1", "-p", tcp_port, "-n", "5", "127.0.0.1"},
                   daemon_->app_env(), std::chrono::seconds(3));
      if (client.err.find("Couldn't connect") == std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return client;
  }
  static Fabricd* daemon_;
};
Fabricd* PortState::daemon_ = nullptr;

TEST_F(PortState, DownThenUpIsReportedEverywhere) {
  auto app = listener();
  auto r = daemon_->ctl({"port", "set", "vib0", "state", "down"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("vib0: port 1 DOWN"), std::string::npos) << r.describe();
  auto ev = app->wait(std::chrono::seconds(20));
  EXPECT_NE(ev.out.find("event " + std::to_string(int(IBV_EVENT_PORT_ERR)) + " port 1"), std::string::npos)
      << ev.describe();
  EXPECT_NE(devinfo().find("state:\t\t\tPORT_DOWN (1)"), std::string::npos) << devinfo();
  EXPECT_EQ(sysfs("state"), "1: DOWN\n");
  EXPECT_EQ(sysfs("phys_state"), "3: Disabled\n");
  auto list = daemon_->ctl({"--json", "hca", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.describe();
  for (const auto& h : nlohmann::json::parse(list.out)) {
    EXPECT_EQ(h["port_state"], h["name"] == "vib0" ? "DOWN" : "ACTIVE") << h.dump();
    // The PMA's LinkDownedCounter saw it (the suite's daemon is shared: at least once).
    if (h["name"] == "vib0") {
      EXPECT_GE(h["counters"]["LinkDownedCounter"].get<uint64_t>(), 1u) << h.dump();
    }
  }

  app = listener();
  r = daemon_->ctl({"port", "set", "vib0", "state", "up"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  ev = app->wait(std::chrono::seconds(20));
  EXPECT_NE(ev.out.find("event " + std::to_string(int(IBV_EVENT_PORT_ACTIVE)) + " port 1"),
            std::string::npos)
      << ev.describe();
  EXPECT_NE(devinfo().find("state:\t\t\tPORT_ACTIVE (4)"), std::string::npos) << devinfo();
  EXPECT_EQ(sysfs("state"), "4: ACTIVE\n");
}

// While down the port passes nothing: a pingpong across it cannot finish.
TEST_F(PortState, ADownPortPassesNoTraffic) {
  ASSERT_EQ(daemon_->ctl({"port", "set", "vib1", "state", "down"}).exit_code, 0);
  Process server({"ibv_rc_pingpong", "-d", "vib1", "-i", "1", "-p", "19391", "-n", "5"}, daemon_->app_env());
  RunResult client = pingpong_client("19391");
  EXPECT_NE(client.exit_code, 0) << client.describe();
  // Lost on the wire, as with a cable pulled: RC gives up after its retries.
  EXPECT_NE(client.err.find("transport retry counter exceeded"), std::string::npos) << client.describe();
  // ...and the counters say where: vib0 sent and sent again, and the switch,
  // whose subnet manager removed vib1's route, could not relay it.
  auto list = daemon_->ctl({"--json", "hca", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.describe();
  for (const auto& h : nlohmann::json::parse(list.out)) {
    const auto& c = h["counters"];
    if (h["name"] == "vib0") {
      EXPECT_GT(c["PortXmitPkts"].get<uint64_t>(), 0u) << h.dump();
      EXPECT_GT(c["retransmitted_packets"].get<uint64_t>(), 0u) << h.dump();
      EXPECT_GT(c["retransmit_timeouts"].get<uint64_t>(), 0u) << h.dump();
    }
    for (const char* k : {"PortRcvSwitchRelayErrors", "tx_no_route", "tx_stalls", "ud_no_wqe_drops"})
      EXPECT_TRUE(c.contains(k)) << k << " missing from " << h.dump();
  }
  const RunResult m = daemon_->ctl({"metrics"});
  ASSERT_EQ(m.exit_code, 0) << m.describe();
  const std::string relay = "vfabric_port_rcv_switch_relay_errors_total{fabric=\"ib\",port=\"ibsw0/1\"} ";
  const size_t at = m.out.find(relay);
  ASSERT_NE(at, std::string::npos) << m.out.substr(0, 2000);
  EXPECT_GT(std::stoull(m.out.substr(at + relay.size())), 0u) << "PortRcvSwitchRelayErrors where vib0's frames entered";
  const RunResult routes = daemon_->ctl({"routes", "ibsw0"});
  ASSERT_EQ(routes.exit_code, 0) << routes.describe();
  EXPECT_NE(routes.out.find("vib1         none"), std::string::npos) << routes.out;
  server.signal(SIGKILL);
  server.wait(std::chrono::seconds(5));
  ASSERT_EQ(daemon_->ctl({"port", "set", "vib1", "state", "up"}).exit_code, 0);
}

// The port record and the counter registry, as a running daemon shows them:
// hca list carries each IB port's VL record, sysfs the record's LID, and
// `fabricctl metrics` every table as Prometheus families.
TEST_F(PortState, RecordAndCountersReachEveryReader) {
  auto list = daemon_->ctl({"--json", "hca", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.describe();
  for (const auto& h : nlohmann::json::parse(list.out)) {
    if (h["link_layer"] == "infiniband") {
      EXPECT_EQ(h["qos"]["operational_vls"], 8) << h.dump();
      EXPECT_EQ(h["qos"]["vl_arbitration"]["low"].size(), 8u) << h.dump();
      EXPECT_TRUE(h["classes"].contains("vl15")) << h.dump();
    } else {
      EXPECT_FALSE(h.contains("qos")) << h.dump();
      EXPECT_TRUE(h["classes"].contains("prio7")) << h.dump();
    }
    if (h["name"] == "vib0") {
      std::ostringstream lid;
      lid << "0x" << std::hex << h["lid"].get<int>() << "\n";
      EXPECT_EQ(sysfs("lid"), lid.str());
    }
  }
  // The kernel's counter files, refreshed every second off the lcore: vib0
  // sent and its engine counted it.
  Process server({"ibv_rc_pingpong", "-d", "vib1", "-i", "1", "-p", "19392", "-n", "5"}, daemon_->app_env());
  const RunResult client = pingpong_client("19392");
  EXPECT_EQ(client.exit_code, 0) << client.describe();
  server.wait(std::chrono::seconds(10));
  const auto num = [](const std::string& t) { return t.empty() ? 0 : std::stoull(t); };
  for (int i = 0; i < 40 && num(sysfs("counters/port_xmit_packets")) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GT(num(sysfs("counters/port_xmit_packets")), 0u);
  EXPECT_GT(num(sysfs("counters/port_xmit_data")), 0u);
  EXPECT_GT(num(sysfs("hw_counters/sent_pkts")), 0u);
  EXPECT_EQ(sysfs("hw_counters/lifespan"), "1000\n");
  auto m = daemon_->ctl({"metrics"});
  ASSERT_EQ(m.exit_code, 0) << m.describe();
  for (const char* want : {"# TYPE vfabric_port_xmit_data_total counter\n",
                           "vfabric_port_xmit_data_total{fabric=\"ib\",port=\"vib0\"} ",
                           "vfabric_port_down_drops_total{fabric=\"ib\",hca=\"vib1\"} ",
                           "vfabric_class_depth_packets{fabric=\"roce\",port=\"vroce0\",class=\"prio0\"} ",
                           "vfabric_link_frames_sent_total{fabric=\"ib\",from=\"vib0\",to=",
                           "\nvfabric_lcore_loops_total "})
    EXPECT_NE(m.out.find(want), std::string::npos) << want << "\n---\n" << m.out.substr(0, 4000);
}

TEST_F(PortState, BadRequestsAreRefusedWithAHint) {
  auto r = daemon_->ctl({"port", "set", "nosuch", "state", "down"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no vHCA named 'nosuch'"), std::string::npos) << r.describe();
  r = daemon_->ctl({"port", "set", "vib0", "state", "sideways"});
  EXPECT_NE(r.exit_code, 0) << r.describe();
}

}  // namespace
}  // namespace vf::test
