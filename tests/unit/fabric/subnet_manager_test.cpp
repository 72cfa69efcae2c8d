// fabricd's subnet manager on configs/fat-tree.yaml, in virtual time: the
// first sweep programs every LFT entry; a spine link taken down under an RC
// WRITE flow is routed around by the next sweep and the flow completes; a
// vHCA's link going down leaves its LID unrouted and its port DOWN, and once
// it trains again the sweep activates the port.
#include "daemon/sm/subnet_manager.hpp"

#include <gtest/gtest.h>

#include "tests/support/config_lab.hpp"

namespace vf::test {
namespace {

constexpr Nanos kSweepDelay = 1'000'000;

config::Fabric fat_tree() {
  const config::Config c = config::load_config(std::string(VF_SOURCE_DIR) + "/configs/fat-tree.yaml");
  return as_lab_names(c.fabrics[0]);
}

uint8_t lft(FabricLab& lab, const std::string& sw, uint16_t lid) {
  return static_cast<dp::IbSwitch*>(lab.fabric.find_switch(sw))->lft(lid);
}

// Every LFT entry leaves through a port whose link is up.
void expect_lfts_use_live_links(const config::Fabric& f, FabricLab& lab) {
  for (const auto& s : f.switches)
    for (unsigned h = 0; h < lab.size(); ++h) {
      const uint8_t port = lft(lab, s.name, lab.host(h).lid);
      if (port == dp::IbSwitch::kNoRoute) continue;
      const dp::LinkInfo* l = lab.fabric.find_link({s.name, port});
      ASSERT_NE(l, nullptr) << s.name << "/" << int(port);
      EXPECT_TRUE(l->up()) << s.name << " routes " << lab.host(h).name << " over the down link at port " << int(port);
    }
}

TEST(SubnetManager, TheFirstSweepProgramsEveryLftEntryFromTheRouting) {
  const config::Fabric f = fat_tree();
  FabricLab lab(lab_topology(f));  // no LFTs: the SM's job
  sm::SubnetManager sm(f, lab.fabric, lab.sched, kSweepDelay);
  const sm::SweepReport r = sm.sweep();
  EXPECT_EQ(r.number, 1u);
  // Every switch's entry for each of the 16 vHCAs and for each of the 6
  // switches' own LIDs, but the two spine-to-spine ones Up/Down has no route for.
  EXPECT_EQ(r.lft_changes, 6u * 16u + 6u * 6u - 2u);
  EXPECT_EQ(r.unrouted, 0u);
  EXPECT_EQ(r.links_up, r.links);
  const Routes want = compute_routes(f);
  for (const auto& [sw, table] : want)
    for (const auto& [hca, port] : table)
      EXPECT_EQ(lft(lab, sw, sm.lids().lid(hca)), port) << sw << " -> " << hca;
  for (const auto& [sw, table] : compute_routes(f, /*to_switches=*/true))
    for (const auto& [dest, port] : table)
      EXPECT_EQ(lft(lab, sw, sm.lids().lid(dest)), port) << sw << " -> " << dest << (sw == dest ? " (port 0: itself)" : "");
  EXPECT_EQ(lft(lab, "spine0", sm.lids().lid("spine1")), dp::IbSwitch::kNoRoute);
  EXPECT_EQ(sm.sweep().lft_changes, 0u) << "nothing changed, nothing reprogrammed";
}

// The qos: section reaches every port through the SM: SL→VL on every switch
// port pair and vHCA port, VL arbitration everywhere -- and again on a vHCA
// port that trains anew.
TEST(SubnetManager, TheSweepProgramsSlToVlAndVlArbitrationIntoEveryPort) {
  config::Fabric f = fat_tree();
  std::array<uint8_t, kNumSls> sl2vl{};
  for (uint8_t sl = 0; sl < kNumSls; ++sl) sl2vl[sl] = uint8_t((sl + 3) % 8);
  f.qos.sl2vl = sl2vl;
  VlArbTable low{};
  low.size = 2;
  low.entries[0] = {0, 192};
  low.entries[1] = {1, 64};
  f.qos.vlarb_low = low;
  FabricLab lab(lab_topology(f));
  // Power-on tables until the SM speaks. (The lab's hosts start Active; the
  // SM programs a vHCA port when it activates it, so make one train.)
  lab.fabric.set_link_up({"vhca3", 0}, false);
  lab.fabric.set_link_up({"vhca3", 0}, true);
  auto& leaf = *static_cast<dp::IbSwitch*>(lab.fabric.find_switch("leaf1"));
  EXPECT_EQ(leaf.sl2vl(5, 1, 2), 2);
  sm::SubnetManager sm(f, lab.fabric, lab.sched, kSweepDelay);
  sm.sweep();
  for (const auto& s : f.switches) {
    auto& sw = *static_cast<dp::IbSwitch*>(lab.fabric.find_switch(s.name));
    for (unsigned out = 1; out <= s.ports; ++out) {
      for (unsigned in = 0; in <= s.ports; ++in) ASSERT_EQ(sw.sl2vl(in, out, 2), 5) << s.name << " " << in << "->" << out;
      EXPECT_EQ(sw.qos(out).vlarb_low, low) << s.name << "/" << out;
    }
  }
  const PortQos& q = lab.host(3).port->info().qos;
  EXPECT_EQ(q.sl2vl, sl2vl);
  EXPECT_EQ(q.vlarb_low, low);
  EXPECT_EQ(lab.host(3).port->info().state, PortState::kActive);
}

TEST(SubnetManager, ASpineLinkDownUnderLoadIsRoutedAroundAndTheFlowCompletes) {
  const config::Fabric f = fat_tree();
  FabricLab lab(lab_topology(f));
  sm::SubnetManager sm(f, lab.fabric, lab.sched, kSweepDelay);
  sm.sweep();
  // vhca0 on leaf0 writes 8 MiB to vhca4 on leaf1 through one spine: ~0.7 ms
  // at EDR 4x; the link goes down after 0.2 ms.
  WriteFlow flow(lab, 0, 4, 256 * 1024, 32);
  lab.run_until([&] { return flow.poll(); }, lab.sched.now() + 200'000);
  ASSERT_LT(flow.ok, 32u) << "the flow must still be running when the link goes down";
  const uint8_t up_port = lft(lab, "leaf0", lab.host(4).lid);
  ASSERT_TRUE(up_port == 5 || up_port == 6) << int(up_port);
  const std::string spine = up_port == 5 ? "spine0" : "spine1";

  lab.fabric.set_link_up({"leaf0", up_port}, false);
  sm.request_sweep();
  EXPECT_EQ(lft(lab, "leaf0", lab.host(4).lid), up_port) << "nothing moves before the sweep";
  lab.run_until([&] { return sm.last().number == 2; }, lab.sched.now() + 2 * kSweepDelay);
  ASSERT_EQ(sm.last().number, 2u);
  EXPECT_EQ(sm.last().links_up, sm.last().links - 1);
  EXPECT_GT(sm.last().lft_changes, 0u);
  // Up/Down: the spine that lost leaf0 cannot reach leaf0's four vHCAs (that
  // would go down, up and down again), so every other switch climbs to the
  // other spine for them.
  EXPECT_EQ(sm.last().unrouted, 4u);
  for (unsigned h = 0; h < 4; ++h) EXPECT_EQ(lft(lab, spine, lab.host(h).lid), dp::IbSwitch::kNoRoute);
  EXPECT_EQ(lft(lab, "leaf0", lab.host(4).lid), up_port == 5 ? 6 : 5);
  expect_lfts_use_live_links(f, lab);
  EXPECT_EQ(lab.fabric.port({"leaf0", up_port}).snapshot(0).link_downed, 1u);
  EXPECT_EQ(lab.fabric.port({spine, 1}).snapshot(0).link_downed, 1u);

  // RC retransmits what the dead link lost; every byte arrives.
  const bool done = lab.run_until([&] { return flow.poll(); }, lab.sched.now() + 2'000'000'000);
  ASSERT_TRUE(done);
  EXPECT_EQ(flow.ok, 32u);
  EXPECT_EQ(flow.failed, 0u);
  EXPECT_TRUE(flow.delivered());
  // The vHCAs' own links never changed state.
  for (unsigned h = 0; h < lab.size(); ++h) EXPECT_EQ(lab.host(h).port->info().state, PortState::kActive);

  // Back up: the next sweep may use the link again, and nothing else moved.
  lab.fabric.set_link_up({"leaf0", up_port}, true);
  sm.request_sweep();
  lab.run_until([&] { return sm.last().number == 3; }, lab.sched.now() + 2 * kSweepDelay);
  EXPECT_EQ(sm.last().links_up, sm.last().links);
  const Routes want = compute_routes(f);
  for (const auto& [sw, table] : want)
    for (const auto& [hca, port] : table) EXPECT_EQ(lft(lab, sw, sm.lids().lid(hca)), port) << sw << " -> " << hca;
}

TEST(SubnetManager, AVhcaLinkDownIsUnroutedAndItsPortIsActivatedAgainAfterTraining) {
  const config::Fabric f = fat_tree();
  FabricLab lab(lab_topology(f));
  sm::SubnetManager sm(f, lab.fabric, lab.sched, kSweepDelay);
  std::vector<sm::SweepReport> seen;
  sm.on_sweep([&](const sm::SweepReport& r) { seen.push_back(r); });
  sm.sweep();
  lab.fabric.set_link_up({"vhca5", 0}, false, PhysState::kDisabled);
  EXPECT_EQ(lab.host(5).port->info().state, PortState::kDown);
  EXPECT_EQ(lab.host(5).port->info().phys_state, PhysState::kDisabled);
  sm.request_sweep();
  sm.request_sweep();  // one sweep covers both requests
  lab.run_until([] { return false; }, lab.sched.now() + 3 * kSweepDelay);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].unrouted, 6u) << "no switch has a route to vhca5";
  for (const auto& s : f.switches) EXPECT_EQ(lft(lab, s.name, lab.host(5).lid), dp::IbSwitch::kNoRoute) << s.name;
  EXPECT_TRUE(seen[1].activated.empty());

  lab.fabric.set_link_up({"vhca5", 0}, true);
  EXPECT_EQ(lab.host(5).port->info().state, PortState::kInit) << "trained, waiting for the SM";
  EXPECT_EQ(lab.host(5).port->info().phys_state, PhysState::kLinkUp);
  EXPECT_FALSE(lab.host(5).port->passes_data());
  sm.request_sweep();
  lab.run_until([] { return false; }, lab.sched.now() + 2 * kSweepDelay);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[2].activated, std::vector<std::string>{"vhca5"});
  EXPECT_EQ(seen[2].unrouted, 0u);
  EXPECT_EQ(lab.host(5).port->info().state, PortState::kActive);
  // ...and it carries traffic again.
  WriteFlow flow(lab, 5, 12, 4096, 4);
  ASSERT_TRUE(lab.run_until([&] { return flow.poll(); }, lab.sched.now() + 100'000'000));
  EXPECT_EQ(flow.ok, 4u);
  EXPECT_TRUE(flow.delivered());
}

}  // namespace
}  // namespace vf::test
