// What fabricd reports about PFC storms: a vHCA's NIC holds XOFF (injected),
// the switch port's watchdog declares the storm, and the watch reports it once
// when declared and once when over -- both when the storm came and went
// between two looks.
#include <gtest/gtest.h>

#include "dataplane/fabric/pfc_storm_watch.hpp"
#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

constexpr Nanos kMs = 1'000'000;

TEST(PfcStormWatch, ReportsAStormWhenDeclaredAndWhenOverEvenBetweenLooks) {
  LabConfig c;
  c.link_layer = LinkLayer::kEthernet;
  c.hosts = 2;
  c.link = {10'000'000'000ULL, 500, 1500};
  c.port.eth.pfc.enable = 1u << 3;
  // Longer than the XOFF refresh (half of 65535 quanta at 10 Gb/s = 1.7 ms),
  // so a held XOFF is one unbroken pause, as the watchdog needs.
  c.port.eth.pfc.watchdog_ns = 5 * kMs;
  FabricLab lab(c);
  dp::PfcStormWatch watch(lab.fabric);
  dp::Pfc& nic = *lab.fabric.pfc(lab.host(0).port->port());
  auto run_for = [&](Nanos d) { lab.sched.advance_to(lab.sched.now() + d); };

  nic.set_storm(1u << 3);
  run_for(20 * kMs);
  auto changes = watch.check();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].port, "sw0/1");
  EXPECT_EQ(changes[0].peer, "vhca0");
  EXPECT_EQ(changes[0].priority, 3u);
  EXPECT_TRUE(changes[0].started);
  run_for(20 * kMs);
  EXPECT_TRUE(watch.check().empty()) << "still the same storm";
  nic.set_storm(0);
  run_for(20 * kMs);
  changes = watch.check();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_FALSE(changes[0].started);

  nic.set_storm(1u << 3);  // a short one, between two looks
  run_for(8 * kMs);
  nic.set_storm(0);
  run_for(20 * kMs);
  changes = watch.check();
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_TRUE(changes[0].started);
  EXPECT_FALSE(changes[1].started);

  lab.fabric.pfc(lab.switch_port_to(0))->reset_counters();  // fabricctl counters reset
  nic.set_storm(1u << 3);  // the count starts again from 0 and reaches 1: still a new storm
  run_for(8 * kMs);
  nic.set_storm(0);
  run_for(20 * kMs);
  EXPECT_EQ(watch.check().size(), 2u);
}

}  // namespace
}  // namespace vf::test
