// The product's counter tables: every row names a distinct counter, reads
// the field it claims, and carries what the formats need.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "dataplane/fabric/hca_port.hpp"
#include "dataplane/fabric/port_counters.hpp"
#include "device/engine/hca.hpp"

namespace vf {
namespace {

void expect_well_formed(CounterTable t, const char* which) {
  std::set<std::string_view> names, files;
  for (const CounterDef& d : t) {
    EXPECT_TRUE(names.insert(d.name).second) << which << ": duplicate name " << d.name;
    EXPECT_TRUE(files.insert(d.sysfs).second) << which << ": duplicate sysfs name " << d.sysfs;
    EXPECT_FALSE(d.help.empty()) << which << ": " << d.name << " has no help";
    // Letters, digits and '_': a file name and a Prometheus metric name
    // both. Upper case only where the kernel's sysfs has it (VL15_dropped).
    for (char c : d.sysfs)
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                  (c >= 'A' && c <= 'Z' && d.sysfs == "VL15_dropped"))
          << which << ": " << d.sysfs << " is not a file/metric name";
  }
}

TEST(CounterTables, AreWellFormed) {
  expect_well_formed(dp::kPortCounters, "port");
  expect_well_formed(dp::kHcaPortCounters, "hca port");
  expect_well_formed(engine::kEngineCounters, "engine");
}

uint64_t by_name(CounterTable t, std::string_view name, const void* snap) {
  for (const CounterDef& d : t)
    if (d.name == name) return read_counter(d, snap);
  ADD_FAILURE() << "no counter " << name;
  return ~0ull;
}

TEST(CounterTables, ReadTheFieldsTheyName) {
  dp::PortSnapshot p{};
  p.port_xmit_data = 11;
  p.port_xmit_discards = 22;
  p.port_xmit_wait_ns = 33;
  p.port_rcv_discards = 34;
  EXPECT_EQ(by_name(dp::kPortCounters, "PortXmitData", &p), 11u);
  EXPECT_EQ(by_name(dp::kPortCounters, "PortXmitDiscards", &p), 22u);
  EXPECT_EQ(by_name(dp::kPortCounters, "PortXmitWait", &p), 33u);
  EXPECT_EQ(by_name(dp::kPortCounters, "PortRcvDiscards", &p), 34u);
  engine::Counters c{};
  c.retransmitted_packets = 44;
  c.ud_no_wqe_drops = 55;
  EXPECT_EQ(by_name(engine::kEngineCounters, "retransmitted_packets", &c), 44u);
  EXPECT_EQ(by_name(engine::kEngineCounters, "ud_no_wqe_drops", &c), 55u);
  dp::HcaPortSnapshot h{};
  h.port_down_drops = 66;
  EXPECT_EQ(by_name(dp::kHcaPortCounters, "port_down_drops", &h), 66u);
}

}  // namespace
}  // namespace vf
