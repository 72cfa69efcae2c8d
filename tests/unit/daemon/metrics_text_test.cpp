// The daemon's counter tables together: each well formed against its
// snapshot struct, names that stay distinct where tables share one JSON
// object or one exposition, and a known snapshot rendered as Prometheus text.
#include "daemon/telemetry/metrics_text.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "daemon/telemetry/counter_format.hpp"
#include "dataplane/wire/rx_error.hpp"
#include "tests/support/prom_exposition.hpp"

namespace vf {
namespace {

struct Table {
  const char* which;
  CounterTable t;
  size_t snapshot_size;
};

std::vector<Table> all_tables() {
  return {{"port", dp::kPortCounters, sizeof(dp::PortSnapshot)},
          {"class", dp::kClassCounters, sizeof(dp::ClassSnapshot)},
          {"hca port", dp::kHcaPortCounters, sizeof(dp::HcaPortSnapshot)},
          {"rx errors", dp::kRxErrorCounters, sizeof(dp::HcaPortSnapshot)},
          {"link", dp::kLinkDirectionCounters, sizeof(dp::LinkDirectionSnapshot)},
          {"engine", engine::kEngineCounters, sizeof(engine::Counters)},
          {"event sink", kEventSinkCounters, sizeof(EventSinkStats)},
          {"umad", kUmadCounters, sizeof(UmadStats)},
          {"cm", cm::kCmCounters, sizeof(cm::CmStats)},
          {"lcore", kLcoreCounters, sizeof(LcoreSnapshot)},
          {"vl credits", dp::kVlCreditCounters, sizeof(dp::VlCreditGauges)},
          {"pfc priority", dp::kPfcPriorityCounters, sizeof(dp::PfcPrioritySnapshot)},
          {"ecn priority", dp::kEcnPriorityCounters, sizeof(dp::EcnPrioritySnapshot)},
          {"bridge", dp::kBridgeCounters, sizeof(dp::BridgeSnapshot)},
          {"router", dp::kRouterCounters, sizeof(dp::RouterSnapshot)},
          {"ib switch", dp::kIbSwitchCounters, sizeof(dp::IbSwitchSnapshot)},
          {"fabric", kFabricCounters, sizeof(FabricFlowSnapshot)}};
}

TEST(CounterRegistry, EveryRowReadsAFieldInsideItsSnapshot) {
  for (const Table& t : all_tables()) {
    EXPECT_FALSE(t.t.empty()) << t.which;
    for (const CounterDef& d : t.t) {
      EXPECT_LE(d.offset + sizeof(uint64_t), t.snapshot_size) << t.which << ": " << d.name;
      EXPECT_EQ(d.offset % sizeof(uint64_t), 0u) << t.which << ": " << d.name;
      EXPECT_FALSE(d.help.empty()) << t.which << ": " << d.name;
    }
  }
}

// One exposition holds every table: two families with one name would be
// invalid Prometheus text.
TEST(CounterRegistry, MetricNamesAreUniqueAcrossTables) {
  std::set<std::string_view> metrics;
  for (const Table& t : all_tables())
    for (const CounterDef& d : t.t) EXPECT_TRUE(metrics.insert(d.sysfs).second) << t.which << ": " << d.sysfs;
}

// hca list puts these tables into one "counters" object.
TEST(CounterRegistry, HcaJsonNamesAreUnique) {
  std::set<std::string_view> names;
  for (CounterTable t : {dp::kPortCounters, dp::kHcaPortCounters, dp::kRxErrorCounters, engine::kEngineCounters,
                         kEventSinkCounters})
    for (const CounterDef& d : t) EXPECT_TRUE(names.insert(d.name).second) << d.name;
}

TEST(CounterRegistry, RxErrorRowsFollowTheWireReasons) {
  ASSERT_EQ(dp::kRxErrorCounters.size(), wire::kRxErrorCount - 1);
  dp::HcaPortSnapshot s{};
  for (unsigned e = 0; e < wire::kRxErrorCount; ++e) s.rx_errors[e] = 100 + e;
  for (unsigned e = 1; e < wire::kRxErrorCount; ++e) {
    const CounterDef& d = dp::kRxErrorCounters[e - 1];
    EXPECT_EQ(d.name, "rx_" + std::string(wire::rx_error_name(wire::RxError(e))));
    EXPECT_EQ(read_counter(d, &s), 100u + e) << d.name;
  }
}

TEST(CounterRegistry, LcoreJsonKeepsTheStatusKeys) {
  const LcoreSnapshot l{1, 2, 3, 4, 5, 6, 7, 8, 9};
  nlohmann::json j = nlohmann::json::object();
  put_counters(j, kLcoreCounters, &l);
  EXPECT_EQ(j, (nlohmann::json{{"loops", 1},
                               {"sleeps", 2},
                               {"wakeups", 3},
                               {"tasks", 4},
                               {"emulated_time_ns", 5},
                               {"stalls", 6},
                               {"stalled_ns", 7},
                               {"max_stall_ns", 8},
                               {"drift_ns", 9}}));
}

MetricsSnapshot known() {
  MetricsSnapshot m{};
  m.lcore = {8, 0, 0, 0, 1'500'000, 0, 0, 0, 0};
  MetricsSnapshot::Vhca v{};
  v.fabric = "ib";
  v.name = "vib0";
  v.link_layer = LinkLayer::kInfiniBand;
  v.port.port.port_xmit_data = 11;
  v.port.port.classes[dp::kMgmtClass].depth_pkts = 3;
  v.port.rx_errors[unsigned(wire::RxError::kBadIcrc)] = 4;
  v.port.port_down_drops = 9;
  v.engine.tx_packets = 5;
  v.events.dropped = 6;
  m.vhcas.push_back(v);
  MetricsSnapshot::SwitchPort p{};
  p.fabric = "roce";
  p.name = "ethsw0/1";
  p.link_layer = LinkLayer::kEthernet;
  p.port.port_xmit_data = 22;
  p.port.classes[3].xmit_pkts = 12;
  m.switch_ports.push_back(p);
  m.links.push_back({"ib", "vib0", "ibsw0/1", {1, 2, 0, 7, 3, 0, 0}});
  m.vl_credits.push_back({"ib", "ibsw0/1", 0, {13, 512, 40, 99}});
  dp::PfcPrioritySnapshot pfc{};
  pfc.rx_pause = 5;
  pfc.headroom_bytes = 1500;
  m.pfc.push_back({"roce", "ethsw0/1", 3, pfc});
  m.ecn.push_back({"roce", "ethsw0/1", 3, {17, 0, 0}});
  dp::BridgeSnapshot b{};
  b.flooded = 23;
  m.bridges.push_back({"roce", "ethsw0", b});
  dp::RouterSnapshot r{};
  r.routed = 29;
  r.no_route = 2;
  m.routers.push_back({"roce", "ethsw0", r});
  m.fabrics.push_back({"ib", {2}});
  return m;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(MetricsText, AKnownSnapshotGivesItsSamples) {
  const std::string t = prometheus_text(known());
  for (const char* line : {
           "vfabric_lcore_loops_total 8",
           "vfabric_emulated_time_ns 1500000",
           "vfabric_port_xmit_data_total{fabric=\"ib\",port=\"vib0\"} 11",
           "vfabric_port_xmit_data_total{fabric=\"roce\",port=\"ethsw0/1\"} 22",
           "vfabric_class_depth_packets{fabric=\"ib\",port=\"vib0\",class=\"vl15\"} 3",
           "vfabric_class_xmit_packets_total{fabric=\"roce\",port=\"ethsw0/1\",class=\"prio3\"} 12",
           "vfabric_port_down_drops_total{fabric=\"ib\",hca=\"vib0\"} 9",
           "vfabric_rx_bad_icrc_total{fabric=\"ib\",hca=\"vib0\"} 4",
           "vfabric_sent_pkts_total{fabric=\"ib\",hca=\"vib0\"} 5",
           "vfabric_events_dropped_total{fabric=\"ib\",hca=\"vib0\"} 6",
           "vfabric_link_lost_frames_total{fabric=\"ib\",from=\"vib0\",to=\"ibsw0/1\"} 7",
           "vfabric_vl_credits_blocks{fabric=\"ib\",port=\"ibsw0/1\",vl=\"0\"} 13",
           "vfabric_vl_buffer_used_blocks{fabric=\"ib\",port=\"ibsw0/1\",vl=\"0\"} 40",
           "vfabric_credit_loop_deadlocks_total{fabric=\"ib\"} 2",
           "vfabric_rx_pause_frames_total{fabric=\"roce\",port=\"ethsw0/1\",priority=\"3\"} 5",
           "vfabric_ecn_marked_packets_total{fabric=\"roce\",port=\"ethsw0/1\",priority=\"3\"} 17",
           "vfabric_flooded_total{fabric=\"roce\",switch=\"ethsw0\"} 23",
           "vfabric_routed_total{fabric=\"roce\",switch=\"ethsw0\"} 29",
           "vfabric_no_route_total{fabric=\"roce\",switch=\"ethsw0\"} 2",
           "vfabric_headroom_bytes{fabric=\"roce\",port=\"ethsw0/1\",priority=\"3\"} 1500",
           "# TYPE vfabric_class_depth_packets gauge",
           "# TYPE vfabric_port_xmit_data_total counter",
       })
    EXPECT_TRUE(has_line(t, line)) << line << "\n---\n" << t;
  // Classes follow the link layer: no VLs on Ethernet, no priorities on IB.
  EXPECT_EQ(t.find("port=\"ethsw0/1\",class=\"vl"), std::string::npos);
  EXPECT_EQ(t.find("port=\"vib0\",class=\"prio"), std::string::npos);
}

// Each family is announced once, however many ports and tables feed it.
TEST(MetricsText, EveryFamilyHasOneTypeLine) {
  const std::string t = prometheus_text(known());
  std::set<std::string> families;
  size_t pos = 0;
  while ((pos = t.find("# TYPE ", pos)) != std::string::npos) {
    pos += 7;
    const std::string name = t.substr(pos, t.find(' ', pos) - pos);
    EXPECT_TRUE(families.insert(name).second) << name;
  }
  size_t rows = 0;
  for (const Table& tab : all_tables()) rows += tab.t.size();
  EXPECT_EQ(families.size(), rows);
}

// What Prometheus' own parser would accept (the reader stands in for promtool).
TEST(MetricsText, PassesAStrictExpositionReader) {
  const auto problems = test::exposition_problems(prometheus_text(known()));
  EXPECT_TRUE(problems.empty()) << problems.front();
}

// The reader itself: each rule it checks catches a text that breaks it.
TEST(ExpositionReader, RefusesWhatPrometheusRefuses) {
  EXPECT_TRUE(test::exposition_problems("# HELP a_total x\n# TYPE a_total counter\na_total{x=\"1\"} 2\n").empty());
  for (const char* bad : {
           "a 1",                                           // no final newline
           "1a 1\n",                                        // metric name
           "a{1x=\"y\"} 1\n",                               // label name
           "a{__x=\"y\"} 1\n",                              // reserved label name
           "a{x=y} 1\n",                                     // unquoted value
           "a{x=\"\\q\"} 1\n",                              // bad escape
           "a{x=\"1\",x=\"2\"} 1\n",                          // label twice
           "a{x=\"1\"} 1\na{x=\"1\"} 2\n",                    // series twice
           "a one\n",                                        // value
           "a 1 1.5\n",                                      // timestamp
           "# TYPE a counter\n# TYPE a gauge\na 1\n",        // TYPE twice
           "# TYPE a countr\na 1\n",                         // type
           "a 1\n# TYPE a counter\n",                        // TYPE after samples
           "a 1\nb 1\na{x=\"1\"} 1\n",                       // family split
           "# HELP a bad \\x escape\na 1\n",                 // HELP escape
       })
    EXPECT_FALSE(test::exposition_problems(bad).empty()) << bad;
}

}  // namespace
}  // namespace vf
