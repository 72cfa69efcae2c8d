// A vHCA's snapshots as the kernel's ports/1/counters/ and hw_counters/ files.
#include "daemon/runtime/sysfs_counters.hpp"

#include <gtest/gtest.h>

#include "dataplane/wire/rx_error.hpp"

namespace vf {
namespace {

TEST(SysfsCounters, PmaCountersInCountersAndDriverCountersInHwCounters) {
  dp::HcaPortSnapshot port{};
  port.port.port_xmit_data = 250;  // words, as the snapshot already holds them
  port.port.port_rcv_pkts = 7;
  port.port.port_xmit_discards = 2;
  port.port_down_drops = 3;
  port.rx_errors[unsigned(wire::RxError::kBadIcrc)] = 4;
  engine::Counters engine{};
  engine.tx_packets = 5;
  engine.retransmitted_packets = 6;
  const runtime::PortFiles f = sysfs_counter_files(port, engine);
  EXPECT_EQ(f.at("counters/port_xmit_data"), "250\n");
  EXPECT_EQ(f.at("counters/port_rcv_packets"), "7\n");
  EXPECT_EQ(f.at("counters/port_xmit_discards"), "2\n");
  EXPECT_EQ(f.at("counters/port_rcv_errors"), "0\n");
  EXPECT_EQ(f.at("hw_counters/sent_pkts"), "5\n");  // rxe's name
  EXPECT_EQ(f.at("hw_counters/retransmitted_packets"), "6\n");
  EXPECT_EQ(f.at("hw_counters/port_down_drops"), "3\n");
  EXPECT_EQ(f.at("hw_counters/rx_bad_icrc"), "4\n");
  EXPECT_EQ(f.at("hw_counters/lifespan"), "1000\n");
  // Every row of each table is there, nothing else.
  EXPECT_EQ(f.size(), dp::kPortCounters.size() + engine::kEngineCounters.size() + dp::kHcaPortCounters.size() +
                          dp::kRxErrorCounters.size() + 1);
  for (const auto& [name, content] : f) {
    EXPECT_TRUE(name.rfind("counters/", 0) == 0 || name.rfind("hw_counters/", 0) == 0) << name;
    EXPECT_EQ(content.back(), '\n') << name;
  }
}

}  // namespace
}  // namespace vf
