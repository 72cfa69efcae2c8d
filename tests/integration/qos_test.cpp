// A fabric's qos: section on a real fabricd: every port runs the configured
// operational VLs, SL→VL map and VL arbitration, ibv_devinfo and fabricctl
// show them, and traffic on an SL travels on the VL the map gives it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "fabricd_fixture.hpp"
#include "perftest_pair.hpp"

namespace vf::test {
namespace {

const char* kConfig = R"(daemon:
  runtime_dir: /run/vfabric
fabrics:
  - name: ib
    link_layer: infiniband
    qos:
      data_vls: 2
      sl2vl: [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]
      vlarb_high: [{vl: 1, weight: 16}]
      vlarb_low: [{vl: 0, weight: 255}]
      high_limit: 2
    switches: [{name: sw, ports: 4}]
    hcas: [{name: vib0}, {name: vib1}]
    links:
      - {a: vib0, b: sw/1, speed: EDR}
      - {a: vib1, b: sw/2, speed: EDR}
)";

uint64_t metric(const std::string& text, const std::string& sample) {
  const auto at = text.find(sample + " ");
  return at == std::string::npos ? ~0ull : std::stoull(text.substr(at + sample.size() + 1));
}

TEST(Qos, TheSectionReachesEveryPortAndTheWire) {
  Fabricd d(kConfig);
  const RunResult list = d.ctl({"--json", "hca", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.describe();
  for (const auto& h : nlohmann::json::parse(list.out)) {
    EXPECT_EQ(h["qos"]["operational_vls"], 2) << h.dump();
    EXPECT_EQ(h["qos"]["vl_arbitration"]["high"].size(), 1u) << h.dump();
  }
  const RunResult info = run({"ibv_devinfo", "-v", "-d", "vib0"}, d.app_env());
  ASSERT_EQ(info.exit_code, 0) << info.describe();
  EXPECT_TRUE(std::regex_search(info.out, std::regex(R"(max_vl_num:\s+2\b)"))) << info.out;

  // A pingpong on SL 3: VL 1 by the map, on every hop.
  Process server({"ibv_rc_pingpong", "-d", "vib1", "-i", "1", "-p", "19801", "-l", "3", "-n", "20"}, d.app_env());
  RunResult client;
  for (int attempt = 0; attempt < 50; ++attempt) {
    client = run({"ibv_rc_pingpong", "-d", "vib0", "-i", "1", "-p", "19801", "-l", "3", "-n", "20", "127.0.0.1"},
                 d.app_env(), std::chrono::seconds(20));
    if (client.err.find("Couldn't connect") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(client.exit_code, 0) << client.describe();
  EXPECT_EQ(server.wait(std::chrono::seconds(20)).exit_code, 0);
  const RunResult m = d.ctl({"metrics"});
  ASSERT_EQ(m.exit_code, 0);
  EXPECT_GE(metric(m.out, R"(vfabric_class_xmit_packets_total{fabric="ib",port="vib0",class="vl1"})"), 20u) << m.out;
  EXPECT_GE(metric(m.out, R"(vfabric_class_xmit_packets_total{fabric="ib",port="sw/2",class="vl1"})"), 20u);
  EXPECT_EQ(metric(m.out, R"(vfabric_class_xmit_packets_total{fabric="ib",port="sw/2",class="vl3"})"), 0u)
      << "VL3 is not operational";
}

RunResult pingpong_on_sl(const Fabricd& d, const std::string& sl, int port) {
  Process server({"ibv_rc_pingpong", "-d", "vib1", "-i", "1", "-p", std::to_string(port), "-l", sl, "-n", "20"},
                 d.app_env());
  RunResult client;
  for (int attempt = 0; attempt < 50; ++attempt) {
    client = run({"ibv_rc_pingpong", "-d", "vib0", "-i", "1", "-p", std::to_string(port), "-l", sl, "-n", "20",
                  "127.0.0.1"},
                 d.app_env(), std::chrono::seconds(20));
    if (client.err.find("Couldn't connect") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  server.wait(std::chrono::seconds(20));
  return client;
}

// fabricctl qos show/set: the port's record as programmed, changed live, the
// traffic following it, and what is not operational refused.
TEST(Qos, ShowAndSetAPortsVlRecordLive) {
  Fabricd d(kConfig);
  RunResult r = d.ctl({"--json", "qos", "show", "sw/2"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  auto q = nlohmann::json::parse(r.out);
  EXPECT_EQ(q["operational_vls"], 2);
  EXPECT_EQ(q["sl2vl"][3], 1);
  EXPECT_EQ(q["vl_arbitration"]["high_limit"], 2);
  r = d.ctl({"qos", "show", "vib0"});
  EXPECT_NE(r.out.find("vib0 (fabric ib): 2 operational data VLs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vlarb_high VL1:16  (high_limit 2)"), std::string::npos) << r.out;

  // SL 3 onto VL 0 at vib0 and at the switch port towards vib1: the next
  // pingpong on SL 3 leaves both on VL 0.
  r = d.ctl({"qos", "set", "vib0", "sl2vl", "3:0", "vlarb_low", "0:128,1:128"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("vlarb_low  VL0:128 VL1:128"), std::string::npos) << r.out;
  ASSERT_EQ(d.ctl({"qos", "set", "sw/2", "sl2vl", "3:0"}).exit_code, 0);
  const auto before = d.ctl({"metrics"}).out;
  ASSERT_EQ(pingpong_on_sl(d, "3", 19802).exit_code, 0);
  const auto after = d.ctl({"metrics"}).out;
  const auto moved = [&](const char* sample) { return metric(after, sample) - metric(before, sample); };
  EXPECT_GE(moved(R"(vfabric_class_xmit_packets_total{fabric="ib",port="vib0",class="vl0"})"), 20u);
  EXPECT_EQ(moved(R"(vfabric_class_xmit_packets_total{fabric="ib",port="vib0",class="vl1"})"), 0u);
  EXPECT_GE(moved(R"(vfabric_class_xmit_packets_total{fabric="ib",port="sw/2",class="vl0"})"), 20u);
  EXPECT_EQ(moved(R"(vfabric_class_xmit_packets_total{fabric="ib",port="sw/2",class="vl1"})"), 0u);

  // A VL that is not operational, a bad shape, an Ethernet-less fabric's switch name: refused.
  r = d.ctl({"qos", "set", "vib0", "sl2vl", "2:3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("SL 2 -> VL 3: VL 3 is not operational on vib0 (data VLs 0..1)"), std::string::npos) << r.err;
  r = d.ctl({"qos", "set", "vib0", "vlarb_low", "5:300"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("vlarb_low: each entry is a data VL 0..14 and a weight 0..255"), std::string::npos) << r.err;
  EXPECT_EQ(d.ctl({"qos", "set", "vib0", "sl2vl", "x"}).exit_code, 2);
  EXPECT_EQ(d.ctl({"qos", "show", "sw"}).exit_code, 1) << "a switch has several ports";
  // The refused requests changed nothing.
  q = nlohmann::json::parse(d.ctl({"--json", "qos", "show", "vib0"}).out);
  EXPECT_EQ(q["sl2vl"][2], 0);
  EXPECT_EQ(q["sl2vl"][3], 0);
}

// An Ethernet port's QoS in mlnx_qos's words, with the PFC thresholds and the
// 802.1Qbb model behind the headroom; a headroom below the model is allowed
// (labs reproduce drops with it), shown and logged.
TEST(Qos, AnEthernetPortShowsTrustPfcAndItsHeadroomModel) {
  Fabricd d(R"(daemon:
  runtime_dir: /run/vfabric
fabrics:
  - name: roce
    link_layer: ethernet
    qos: {pfc: [3, 4], headroom: 2KiB, pfc_watchdog: 100ms}
    switches: [{name: sw, ports: 4, buffer: 1MiB}]
    hcas: [{name: vroce0, ip: 198.18.0.1}, {name: vroce1, ip: 198.18.0.2}]
    links:
      - {a: vroce0, b: sw/1, speed: 10G, rate: 2Gbps, delay: 500ns}
      - {a: vroce1, b: sw/2, speed: 10G, rate: 2Gbps, delay: 500ns}
)");
  RunResult r = d.ctl({"--json", "qos", "show", "sw/1"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto q = nlohmann::json::parse(r.out);
  EXPECT_EQ(q["trust"], "dscp");
  EXPECT_EQ(q["dscp2prio"][26], 3);
  EXPECT_EQ(q["pfc"]["enable"], nlohmann::json::array({3, 4}));
  EXPECT_EQ(q["pfc"]["priorities"][3]["headroom_bytes"], 2048);
  EXPECT_EQ(q["pfc_watchdog_ns"], 100000000);
  // 1500-byte MTU frames (1518), 2 Gb/s, 500 ns each way, 1 us response:
  // 1518 + 1542 + 84 + 250 + 0 + 250 + 1518.
  EXPECT_EQ(q["headroom_model"]["total"], 5162) << r.out;
  EXPECT_TRUE(q["headroom_below_model"].get<bool>());
  // mlnx_qos's default scheduling: 802.1Q's priority map, ETS everywhere.
  EXPECT_EQ(q["ets"]["prio_tc"], nlohmann::json::array({1, 0, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(q["ets"]["tcs"][1]["priorities"], nlohmann::json::array({0}));
  EXPECT_EQ(q["ets"]["tcs"][3]["bw"], 13);
  r = d.ctl({"qos", "show", "vroce0"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  for (const char* want : {"vroce0 (fabric roce): Ethernet, trust dscp", "\tenabled     0   0   0   1   1   0   0   0\n",
                           "\tprio:3 dscp:31,30,29,28,27,26,25,24,", "= 5162\n", "warning: the configured headroom",
                           "tc: 3 ratelimit: unlimited, tsa: ets, bw: 13%\n\t priority:  3\n",
                           "tc: 1 ratelimit: unlimited, tsa: ets, bw: 13%\n\t priority:  0\n"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  r = d.ctl({"qos", "set", "sw/1", "sl2vl", "1:1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("sw/1 is an Ethernet port: it has priorities and traffic classes, not VLs"), std::string::npos)
      << r.err;
  const RunResult stopped = d.stop();
  EXPECT_NE(stopped.err.find("PFC headroom 2048 bytes is below the 802.1Qbb model's 5162 bytes"), std::string::npos)
      << stopped.err;
}

// The classic PFC storm: a NIC whose receive pipeline is stuck holds XOFF
// for ever. The switch port's watchdog declares the storm (logged, an event,
// counted), ignores the pauses, and recovers once the NIC stops.
TEST(Qos, APfcStormTripsTheSwitchWatchdogAndEndsWhenTheNicStops) {
  Fabricd d(R"(daemon:
  runtime_dir: /run/vfabric
fabrics:
  - name: roce
    link_layer: ethernet
    qos: {pfc_watchdog: 100ms}
    switches: [{name: sw, ports: 4}]
    hcas: [{name: vroce0, ip: 198.18.0.1}, {name: vroce1, ip: 198.18.0.2}]
    links:
      - {a: vroce0, b: sw/1, speed: 10G}
      - {a: vroce1, b: sw/2, speed: 10G}
)");
  RunResult r = d.ctl({"port", "set", "vroce0", "pfc_storm", "9"});
  EXPECT_EQ(r.exit_code, 2) << "a usage error";
  EXPECT_NE(r.err.find("pfc_storm takes priorities 0 to 7"), std::string::npos) << r.err;
  r = d.ctl({"port", "set", "vroce0", "pfc_storm", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out, "vroce0: holding XOFF on priorities [3]\n");
  // The watchdog trips 100 ms into the pause; fabricd looks once a second.
  auto stormed = [&](bool want) {
    for (int i = 0; i < 50; ++i) {
      const RunResult q = d.ctl({"--json", "qos", "show", "sw/1"});
      const auto j = nlohmann::json::parse(q.out, nullptr, false);
      if (!j.is_discarded() && j["pfc"]["stormed"].empty() != want) return j;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return nlohmann::json();
  };
  const auto q = stormed(true);
  EXPECT_EQ(q["pfc"]["stormed"], nlohmann::json::array({3})) << q.dump();
  EXPECT_EQ(q["pfc"]["priorities"][3]["pause_storm_events"], 1) << q.dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // fabricd's next look sees it going on
  r = d.ctl({"port", "set", "vroce0", "pfc_storm", "off"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out, "vroce0: PFC storm off\n");
  EXPECT_TRUE(stormed(false).is_object()) << "recovered a watchdog interval after the last pause";
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // fabricd's next look
  const RunResult stopped = d.stop();
  EXPECT_NE(stopped.err.find("PFC storm: sw/1 priority 3 was paused by vroce0"), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find("PFC storm over: sw/1 priority 3 heard no pause from vroce0"), std::string::npos)
      << stopped.err;
}

// A receiving host slower than its link (rx_rate): its NIC fills and sends
// PFC to the switch, whose ports run dynamic shared-buffer thresholds.
// Unmodified ib_write_bw finishes; nothing is dropped or retransmitted.
TEST(Qos, ASlowReceiverPausesItsSwitchAndTheSwitchUsesDynamicThresholds) {
  Fabricd d(R"(daemon:
  runtime_dir: /run/vfabric
fabrics:
  - name: roce
    link_layer: ethernet
    qos: {pfc: [3], ecn: off, dcqcn: off, buffer_alpha: 1/2, reserved: 2KiB}
    switches: [{name: sw, ports: 4, buffer: 4MiB}]
    hcas: [{name: vroce0, ip: 198.18.0.1}, {name: vroce1, ip: 198.18.0.2, rx_rate: 500Mbps}]
    links:
      - {a: vroce0, b: sw/1, speed: 10G, rate: 2Gbps}
      - {a: vroce1, b: sw/2, speed: 10G, rate: 2Gbps}
)");
  RunResult r = d.ctl({"--json", "port", "show", "sw/1"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto show = nlohmann::json::parse(r.out);
  EXPECT_EQ(show["pfc"]["thresholds"]["type"], "dynamic") << r.out;
  EXPECT_EQ(show["pfc"]["thresholds"]["alpha"], 0.5) << r.out;
  EXPECT_GT(show["pfc"]["thresholds"]["limit_bytes"].get<uint64_t>(), 1'000'000u) << r.out;
  EXPECT_EQ(show["pfc"]["thresholds"]["reserved_bytes"], 2048) << r.out;
  const PerftestPair bw = perftest_pair(d, "ib_write_bw", "vroce1", "vroce0", {"-x", "1", "-n", "300", "-s", "65536"},
                                        20400, {"-u", "20"});
  EXPECT_TRUE(bw.ok()) << bw.describe();
  r = d.ctl({"--json", "counters", "vroce1"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto rx = nlohmann::json::parse(r.out)["ports"][0];
  EXPECT_GT(rx["pfc"]["tx_prio3_pause"].get<uint64_t>(), 0u) << r.out;
  EXPECT_EQ(rx["hca_port"]["rx_discards_phy"], 0) << r.out;
  r = d.ctl({"--json", "counters", "vroce0"});
  const auto tx = nlohmann::json::parse(r.out)["ports"][0];
  EXPECT_EQ(tx["hw_counters"]["retransmitted_packets"], 0) << r.out;
  r = d.ctl({"--json", "counters", "sw/2"});
  const auto sw = nlohmann::json::parse(r.out)["ports"][0];
  EXPECT_GT(sw["pfc"]["rx_prio3_pause"].get<uint64_t>(), 0u) << r.out;
}

// ETS and DCQCN retuned while fabricd runs, as mlnx_qos and mlx5's ecn
// knobs do; DCQCN's line rate follows `link set rate`.
TEST(Qos, EthernetEtsAndDcqcnAreSetAtRunTime) {
  Fabricd d(R"(daemon:
  runtime_dir: /run/vfabric
fabrics:
  - name: roce
    link_layer: ethernet
    switches: [{name: sw, ports: 4}]
    hcas: [{name: vroce0, ip: 198.18.0.1}, {name: vroce1, ip: 198.18.0.2, dcqcn: {rpg_ai_rate: 20Mbps}}]
    links:
      - {a: vroce0, b: sw/1, speed: 10G}
      - {a: vroce1, b: sw/2, speed: 10G}
)");
  const auto own = nlohmann::json::parse(d.ctl({"--json", "qos", "show", "vroce1"}).out);
  EXPECT_EQ(own["dcqcn"]["rpg_ai_rate_mbps"], 20) << "the vHCA's own setting";
  EXPECT_EQ(own["dcqcn"]["rpg_hai_rate_mbps"], 50) << "the fabric's";
  RunResult r = d.ctl({"--json", "qos", "set", "sw/2", "tsa", "ets,ets,ets,ets,ets,ets,strict,ets", "tc_bw",
                       "13,13,13,13,24,12,0,12"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  auto q = nlohmann::json::parse(r.out);
  EXPECT_EQ(q["ets"]["tcs"][6]["tsa"], "strict");
  EXPECT_EQ(q["ets"]["tcs"][4]["bw"], 24);
  r = d.ctl({"qos", "set", "sw/2", "tc_bw", "20,20,20,20,10,0,0,0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the ets classes' tc_bw sum to 90"), std::string::npos) << r.err;
  r = d.ctl({"qos", "set", "sw/2", "dcqcn", "off"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("DCQCN runs at the vHCAs"), std::string::npos) << r.err;
  r = d.ctl({"qos", "show", "sw/2"});
  EXPECT_NE(r.out.find("tc: 6 ratelimit: unlimited, tsa: strict\n\t priority:  6\n"), std::string::npos) << r.out;

  r = d.ctl({"--json", "qos", "show", "vroce0"});
  q = nlohmann::json::parse(r.out);
  EXPECT_EQ(q["dcqcn"]["enabled"], true);  // the fabric default
  EXPECT_EQ(q["dcqcn"]["line_rate_mbps"], 10000);
  r = d.ctl({"qos", "set", "vroce0", "dcqcn", "off", "rpg_ai_rate", "10Mbps", "min_time_between_cnps", "20us"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("DCQCN off: line rate 10000 Mb/s, min_time_between_cnps 20 us, rpg_time_reset 55 us, "
                       "rpg_ai_rate 10 Mb/s"),
            std::string::npos)
      << r.out;
  ASSERT_EQ(d.ctl({"link", "set", "vroce0", "rate", "1G"}).exit_code, 0);
  q = nlohmann::json::parse(d.ctl({"--json", "qos", "show", "vroce0"}).out);
  EXPECT_EQ(q["dcqcn"]["line_rate_mbps"], 1000) << "DCQCN recovers flows to the link's new rate";
  EXPECT_EQ(q["dcqcn"]["rpg_ai_rate_mbps"], 10);
}

}  // namespace
}  // namespace vf::test
