// A link pulled and plugged back in (dp::Fabric::set_link_up), in virtual
// time: both ends go down and count it, what the egress queues held is
// discarded and the receive buffers it occupied upstream come back, the
// vHCA end shows DOWN / Polling, and after training the vHCA waits in Init
// for its subnet manager (here the test plays it) before traffic flows again.
#include <gtest/gtest.h>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

LabConfig slow_bottleneck() {
  LabConfig c;
  c.hosts = 3;
  c.link = {2'000'000'000ULL, 500, 4096};  // 2 Gb/s: frames queue at the switch
  return c;
}

TEST(LinkState, APulledLinkDiscardsItsQueuesAndFreesTheirBuffersUpstream) {
  FabricLab lab(slow_bottleneck());
  // Two senders into vhca2: its switch port queues.
  WriteFlow a(lab, 0, 2, 64 * 1024, 16), b(lab, 1, 2, 64 * 1024, 16);
  lab.run_until([] { return false; }, lab.sched.now() + 200'000);
  dp::Port& to2 = lab.switch_port_to(2);
  ASSERT_GT(to2.snapshot(0).classes[0].depth_pkts, 0u) << "the bottleneck must be queueing";

  lab.fabric.set_link_up({"vhca2", 0}, false);
  const dp::PortSnapshot s = to2.snapshot(0);
  EXPECT_EQ(s.classes[0].depth_pkts, 0u);
  EXPECT_GT(s.port_xmit_discards, 0u);
  EXPECT_EQ(s.link_downed, 1u);
  EXPECT_EQ(lab.host(2).port->port().snapshot(0).link_downed, 1u);
  EXPECT_FALSE(to2.link_up());
  EXPECT_EQ(lab.host(2).port->info().state, PortState::kDown);
  EXPECT_EQ(lab.host(2).port->info().phys_state, PhysState::kPolling);

  // What the senders keep sending towards it is discarded at once: their
  // VL buffers at the switch drain instead of holding backpressure forever.
  lab.run_until([] { return false; }, lab.sched.now() + 1'000'000);
  for (unsigned h : {0u, 1u}) {
    const dp::IbCredits* c = lab.fabric.credits(lab.switch_port_to(h));
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->snapshot().vl[0].used_blocks, 0u) << "switch port from vhca" << h;
  }
  // Nothing crosses a down link, either way.
  const uint64_t sent = lab.link_of(2).b_to_a().frames_sent.get();
  lab.run_until([] { return false; }, lab.sched.now() + 1'000'000);
  EXPECT_EQ(lab.link_of(2).b_to_a().frames_sent.get(), sent);
}

TEST(LinkState, APluggedLinkTrainsToInitAndCarriesTrafficOnceActive) {
  FabricLab lab(slow_bottleneck());
  lab.fabric.set_link_up({"sw0", 2}, false);  // named by the switch end this time
  EXPECT_EQ(lab.host(1).port->info().state, PortState::kDown);
  lab.fabric.set_link_up({"sw0", 2}, true);
  EXPECT_EQ(lab.host(1).port->info().state, PortState::kInit);
  EXPECT_EQ(lab.host(1).port->info().phys_state, PhysState::kLinkUp);
  EXPECT_FALSE(lab.host(1).port->passes_data()) << "Init passes no data until the SM activates the port";
  lab.host(1).port->set_state(PortState::kActive, PhysState::kLinkUp);  // the SM's SubnSet(PortInfo)
  WriteFlow f(lab, 0, 1, 64 * 1024, 8);
  ASSERT_TRUE(lab.run_until([&] { return f.poll(); }, lab.sched.now() + 100'000'000));
  EXPECT_EQ(f.ok, 8u);
  EXPECT_TRUE(f.delivered());
  // Flow control restarted from a clean state on both ends, and agrees.
  const dp::IbCredits* hca = lab.fabric.credits(lab.host(1).port->port());
  const dp::IbCredits* sw = lab.fabric.credits(lab.switch_port_to(1));
  EXPECT_FALSE(hca->snapshot().init);
  EXPECT_FALSE(sw->snapshot().init);
  EXPECT_EQ(sw->snapshot().vl[0].fctbs, hca->snapshot().vl[0].abr);
}

TEST(LinkState, FramesOnTheWireWhenTheLinkDiesAreLost) {
  LabConfig c;
  c.link = {100'000'000'000ULL, 1'000'000, 4096};  // 1 ms of wire: plenty in flight
  FabricLab lab(c);
  WriteFlow f(lab, 0, 1, 64 * 1024, 8);
  lab.run_until([] { return false; }, lab.sched.now() + 20'000);
  dp::LinkDirection& wire = lab.link_of(0).a_to_b();
  const uint32_t flying = wire.in_flight();
  ASSERT_GT(flying, 0u);
  lab.fabric.set_link_up({"vhca0", 0}, false);
  EXPECT_EQ(wire.in_flight(), 0u);
  EXPECT_EQ(wire.lost.get(), flying);
  EXPECT_THROW(lab.fabric.set_link_up({"sw0", 9}, false), std::invalid_argument);
}

}  // namespace
}  // namespace vf::test
