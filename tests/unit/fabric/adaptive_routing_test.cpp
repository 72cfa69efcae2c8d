// Adaptive routing on whole fabrics in virtual time (an IB fat tree and a
// RoCEv2 leaf-spine, generated from the config and built by ConfigFabric):
// packets of one RC flow spread over the equal-cost ports, arrive out of
// order, and RC recovers as the IBA requires -- the responder drops what is
// out of sequence and NAKs once (PSN sequence error), the requester goes back
// to the NAKed PSN -- so every byte still arrives intact and every WR
// completes successfully. Static routing gives the same bytes in order.
#include <gtest/gtest.h>

#include <atomic>
#include <sstream>

#include "daemon/config/config.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "sim/config_fabric.hpp"
#include "sim/plan_run.hpp"
#include "sim/run_loop.hpp"
#include "sim/workload_options.hpp"

namespace vf::sim {
namespace {

struct Outcome {
  bool done = false;
  std::string error;
  uint64_t checked = 0;
  size_t ranks = 0;
  Nanos elapsed = 0;
  uint64_t rerouted = 0;          // every switch's ar_rerouted
  uint64_t out_of_sequence = 0;   // every responder's out-of-sequence packets
  uint64_t seq_naks = 0;          // PSN sequence error NAKs the requesters received
  uint64_t retransmitted = 0;
  uint64_t timeouts = 0;
};

// ib: k=4 fat tree, 4 leaves of 2 hosts under 2 spines, non-blocking. Up/Down
// sends a leaf's traffic up by the destination's parity, so the flows below
// (each leaf's two hosts to two even or two odd hosts) share one uplink
// while the other idles: adaptive routing has something to fix.
// roce: 2 leaves of 4 hosts under 2 spines, 2:1 oversubscribed: queues build
// at every leaf's uplinks whatever the hash does.
constexpr const char* kIb = R"(fabrics:
  - name: ib
    link_layer: infiniband
    topology:
      fat_tree: {k: 4, levels: 2}
      host_links: {width: 4x, speed: EDR, delay: 100ns, mtu: 4096}
      switch_links: {width: 4x, speed: EDR, delay: 200ns}
)";
constexpr const char* kIbFlows = "0 2 512KiB\n1 4 512KiB\n2 6 512KiB\n3 0 512KiB\n"
                                 "4 3 512KiB\n5 7 512KiB\n6 1 512KiB\n7 5 512KiB\n";
constexpr const char* kRoce = R"(fabrics:
  - name: roce
    link_layer: ethernet
    topology:
      leaf_spine: {leaves: 2, spines: 2, hosts_per_leaf: 4}
      addresses: 198.18.0.0/24
      host_links: {speed: 100G, delay: 100ns, mtu: 4200}
      switch_links: {speed: 100G, delay: 200ns, mtu: 4200}
)";
constexpr const char* kRoceFlows = "0 4 512KiB\n1 5 512KiB\n2 6 512KiB\n3 7 512KiB\n"
                                   "4 0 512KiB\n5 1 512KiB\n6 2 512KiB\n7 3 512KiB\n";

Outcome run(const std::string& fabric, config::AdaptiveRouting::Mode mode) {
  const bool ib = fabric == "ib";
  config::Config cfg = config::load_config_string(ib ? kIb : kRoce, fabric + ".yaml");
  cfg.fabrics[0].adaptive.mode = mode;
  ConfigFabric f(cfg);
  f.run_until([] { return false; }, f.sched.now() + 2'000'000);
  const size_t n = f.size();
  std::istringstream in(ib ? kIbFlows : kRoceFlows);
  const Plan p = flows_plan(n, in, "shift");
  RunOptions o;
  o.check = true;
  o.chunk = 64 * 1024;
  o.hosts = place_ranks(n, n, "linear", 1);
  PlanRun pr(f, p, o);
  pr.start();
  std::atomic<bool> stop{false};
  LoopStats st;
  Outcome out;
  out.ranks = n;
  out.done = run_plan(f, pr, stop, f.sched.now() + 1'000'000'000, st, [](const LoopStats&) {}) == LoopEnd::Done;
  out.error = pr.error();
  out.checked = pr.checked();
  out.elapsed = pr.finished() - pr.started();
  for (const auto& s : cfg.fabrics[0].switches)
    out.rerouted += f.topology().fabric(0).find_switch(s.name)->adaptive_counters().rerouted.get();
  for (size_t i = 0; i < n; ++i) {
    const engine::Counters& c = f.topology().engine(i).counters();
    out.out_of_sequence += c.out_of_sequence;
    out.seq_naks += c.seq_naks_rcvd;
    out.retransmitted += c.retransmitted_packets;
    out.timeouts += c.retransmit_timeouts;
  }
  return out;
}

constexpr uint64_t kFlowBytes = 512 * 1024;

TEST(AdaptiveRouting, StaticRoutingDeliversEveryFlowInOrder) {
  for (const char* fabric : {"ib", "roce"}) {
    SCOPED_TRACE(fabric);
    const Outcome o = run(fabric, config::AdaptiveRouting::Mode::Off);
    ASSERT_TRUE(o.done) << o.error;
    EXPECT_EQ(o.checked, o.ranks * kFlowBytes);
    EXPECT_EQ(o.rerouted, 0u);
    EXPECT_EQ(o.out_of_sequence, 0u);
    EXPECT_EQ(o.retransmitted, 0u);
  }
}

TEST(AdaptiveRouting, PerPacketSpraysFlowsAndRcRecoversFromOutOfOrderArrival) {
  for (const char* fabric : {"ib", "roce"}) {
    SCOPED_TRACE(fabric);
    const Outcome o = run(fabric, config::AdaptiveRouting::Mode::PerPacket);
    ASSERT_TRUE(o.done) << o.error;
    EXPECT_EQ(o.error, "");
    EXPECT_EQ(o.checked, o.ranks * kFlowBytes) << "every byte arrived intact";
    EXPECT_GT(o.rerouted, 0u) << "packets left by other ports than the static ones";
    EXPECT_GT(o.out_of_sequence, 0u) << "sprayed packets overtake each other";
    EXPECT_GT(o.seq_naks, 0u) << "the responder NAKs a PSN gap";
    EXPECT_GT(o.retransmitted, 0u) << "the requester goes back to the NAKed PSN";
    EXPECT_EQ(o.timeouts, 0u) << "recovery by NAK, not by waiting for the transport timer";
  }
}

TEST(AdaptiveRouting, FlowletsKeepEachBurstInOrder) {
  const Outcome o = run("ib", config::AdaptiveRouting::Mode::Flowlet);
  ASSERT_TRUE(o.done) << o.error;
  EXPECT_EQ(o.error, "");
  EXPECT_EQ(o.checked, o.ranks * kFlowBytes);
}

}  // namespace
}  // namespace vf::sim
