// Counter tables rendered as fabricctl JSON, Prometheus text and sysfs files.
#include "daemon/telemetry/counter_format.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace vf {
namespace {

struct Snap {
  uint64_t sent;
  uint64_t waited;
};
constexpr CounterDef kDefs[] = {
    VF_COUNTER(Snap, sent, "PortXmitPkts", "port_xmit_packets", kPackets, "packets sent"),
    VF_COUNTER(Snap, waited, "PortXmitWait", "port_xmit_wait", kNanoseconds, "time waited"),
};
constexpr CounterTable kTable{kDefs};

TEST(CounterFormat, JsonUsesTheDisplayNames) {
  const Snap s{7, 1234};
  nlohmann::json j = nlohmann::json::object();
  put_counters(j, kTable, &s);
  EXPECT_EQ(j, (nlohmann::json{{"PortXmitPkts", 7}, {"PortXmitWait", 1234}}));
}

TEST(CounterFormat, PrometheusHasOneFamilyPerCounterAndOneSamplePerRow) {
  const Snap a{1, 2}, b{30, 40};
  const PromRow rows[] = {{prom_labels({{"hca", "vib0"}}), &a}, {prom_labels({{"hca", "vib1"}}), &b}};
  std::string out;
  append_prometheus(out, "vfabric", kTable, rows);
  EXPECT_EQ(out,
            "# HELP vfabric_port_xmit_packets_total packets sent (packets)\n"
            "# TYPE vfabric_port_xmit_packets_total counter\n"
            "vfabric_port_xmit_packets_total{hca=\"vib0\"} 1\n"
            "vfabric_port_xmit_packets_total{hca=\"vib1\"} 30\n"
            "# HELP vfabric_port_xmit_wait_total time waited (nanoseconds)\n"
            "# TYPE vfabric_port_xmit_wait_total counter\n"
            "vfabric_port_xmit_wait_total{hca=\"vib0\"} 2\n"
            "vfabric_port_xmit_wait_total{hca=\"vib1\"} 40\n");
}

TEST(CounterFormat, AGaugeIsTypedGaugeWithoutTotal) {
  struct Level {
    uint64_t depth;
  };
  constexpr CounterDef kLevel[] = {
      VF_GAUGE(Level, depth, "depth_pkts", "class_depth_packets", kPackets, "frames queued now")};
  static_assert(valid_counter_table<Level>(kLevel));
  const Level l{9};
  const PromRow rows[] = {{"", &l}};
  std::string out;
  append_prometheus(out, "vfabric", kLevel, rows);
  EXPECT_EQ(out,
            "# HELP vfabric_class_depth_packets frames queued now (packets)\n"
            "# TYPE vfabric_class_depth_packets gauge\n"
            "vfabric_class_depth_packets 9\n");
}

// The checks tables static_assert on: a row outside its struct, or two rows
// with one name, are caught.
TEST(CounterFormat, TableChecksCatchStrayOffsetsAndDuplicateNames) {
  static_assert(valid_counter_table<Snap>(kTable));
  constexpr CounterDef kStray[] = {{"a", "a", CounterUnit::kEvents, "h", sizeof(Snap)}};
  static_assert(!counters_fit(kStray, sizeof(Snap)));
  constexpr CounterDef kOdd[] = {{"a", "a", CounterUnit::kEvents, "h", 4}};
  static_assert(!counters_fit(kOdd, sizeof(Snap)));
  constexpr CounterDef kTwice[] = {kDefs[0], {"Other", kDefs[0].sysfs, CounterUnit::kEvents, "h", 8}};
  static_assert(!counter_names_unique(kTwice));
  EXPECT_TRUE(counters_fit(kTable, sizeof(Snap)));
  EXPECT_FALSE(counters_fit(kTable, sizeof(Snap) - 1));
}

TEST(CounterFormat, LabelValuesAreEscaped) {
  EXPECT_EQ(prom_labels({{"a", "x\"y\\z\nw"}, {"b", ""}}), "a=\"x\\\"y\\\\z\\nw\",b=\"\"");
}

TEST(CounterFormat, SysfsFilesHoldOneValueEach) {
  const auto dir = std::filesystem::temp_directory_path() / ("vf_counters_" + std::to_string(getpid()));
  const Snap s{5, 6};
  write_counter_files(dir, kTable, &s);
  auto read = [&](const char* f) {
    std::ifstream in(dir / f);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  EXPECT_EQ(read("port_xmit_packets"), "5\n");
  EXPECT_EQ(read("port_xmit_wait"), "6\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vf
