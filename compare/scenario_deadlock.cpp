// Scenario 6: deadlock on a ring of five switches, every vHCA WRITEing to the
// vHCA two switches clockwise. Shortest paths send all of it clockwise, the
// ring links' buffers wait on each other in a circle and -- with lossless
// flow control -- nothing moves again. InfiniBand: the subnet manager's
// min-hop routing against Up/Down. RoCEv2 with PFC: static shortest-path
// forwarding on the ring (what a routing protocol that uses every link
// computes) against the tree a spanning tree leaves (one ring link unused).
#include "compare/lab_setup.hpp"
#include "compare/lab_stream.hpp"
#include "compare/scenarios.hpp"
#include "daemon/config/config.hpp"
#include "daemon/sm/routing.hpp"
#include "dataplane/fabric/credit_deadlock.hpp"
#include "sim/config_topology.hpp"

namespace vf::compare {
namespace {

constexpr unsigned kRing = 5;
constexpr uint64_t kRate = 2'000'000'000ULL;
constexpr uint32_t kMsg = 64 * 1024;

std::string ring_yaml(const char* routing) {
  std::string y = "fabrics:\n  - name: ring\n    link_layer: infiniband\n    sm: {routing: " + std::string(routing) +
                  "}\n    switches:\n";
  for (unsigned i = 0; i < kRing; ++i) y += "      - {name: sw" + std::to_string(i) + ", ports: 3}\n";
  y += "    hcas:\n";
  for (unsigned i = 0; i < kRing; ++i) y += "      - {name: vhca" + std::to_string(i) + "}\n";
  y += "    links:\n";
  const std::string l = "width: 4x, speed: EDR, rate: 2Gbps, delay: 500ns";
  for (unsigned i = 0; i < kRing; ++i)
    y += "      - {a: vhca" + std::to_string(i) + ", b: sw" + std::to_string(i) + "/1, " + l + "}\n";
  for (unsigned i = 0; i < kRing; ++i)
    y += "      - {a: sw" + std::to_string(i) + "/2, b: sw" + std::to_string((i + 1) % kRing) + "/3, " + l +
         ", vl_buffer: 16KiB}\n";
  return y;
}

// Switch i: port 1 its host, port 2 clockwise, port 3 counter-clockwise.
sim::LabTopology eth_ring(bool tree) {
  sim::LabTopology t;
  t.link_layer = LinkLayer::kEthernet;
  const dp::LinkParams l{kRate, 500, 1500};
  for (unsigned i = 0; i < kRing; ++i) {
    t.switches.push_back({"sw" + std::to_string(i), 3});
    t.hosts.push_back({"sw" + std::to_string(i), 1, l});
  }
  for (unsigned i = 0; i < kRing; ++i)
    if (!tree || i != kRing - 1)  // the tree: sw4-sw0 left out, as a spanning tree blocks it
      t.cables.push_back({"sw" + std::to_string(i), 2, "sw" + std::to_string((i + 1) % kRing), 3, l});
  t.port = port_config(Flavour::kRocePfc);
  t.default_tclass = kRoceTclass;
  return t;
}

// Static forwarding and neighbours: no ARP floods round the ring.
void program_eth_ring(sim::FabricLab& lab, bool tree) {
  for (unsigned s = 0; s < kRing; ++s)
    for (unsigned h = 0; h < kRing; ++h) {
      unsigned port = 1;
      const unsigned cw = (h + kRing - s) % kRing;  // hops clockwise from s to h
      if (h != s) port = tree ? (h > s ? 2 : 3) : (cw <= kRing / 2 ? 2 : 3);
      lab.fabric.add_fdb("sw" + std::to_string(s), lab.host(h).mac, port);
    }
  resolve_neighbours(lab);
}

struct RingRun {
  unsigned completed = 0, failed = 0;
  bool stuck = false;  // frames queued on the ring links and none moved for 50 ms
  uint64_t queued = 0, drops = 0, pauses = 0;
  size_t circles = 0;  // IB: the dataplane's credit-loop detector
  double duration_ms = 0;
};

RingRun drive(sim::FabricLab& lab, bool ib, unsigned wrs) {
  const unsigned n = lab.size();
  std::vector<std::unique_ptr<Stream>> flows;
  for (unsigned i = 0; i < n; ++i) {
    StreamSpec s;
    s.from = i;
    s.to = (i + 2) % n;
    s.bytes = kMsg;
    s.messages = wrs;
    s.window = 32;
    s.conn.mtu = ib ? IBV_MTU_4096 : IBV_MTU_1024;
    flows.push_back(std::make_unique<Stream>(lab, s));
  }
  auto poll = [&] {
    bool all = true;
    for (auto& f : flows) all &= f->poll();
    return all;
  };
  auto ring_sent = [&] {
    uint64_t x = 0;
    for (unsigned i = 0; i < n; ++i)
      for (unsigned p : {2u, 3u}) x += lab.fabric.port({"sw" + std::to_string(i), p}).snapshot(0).port_xmit_pkts;
    return x;
  };
  RingRun r;
  std::unique_ptr<dp::CreditDeadlockDetector> detector;
  if (ib) detector = std::make_unique<dp::CreditDeadlockDetector>(lab.fabric);
  const Nanos start = lab.sched.now();
  uint64_t sent = ring_sent();
  unsigned still = 0;
  for (int t = 0; t < 100 && !poll(); ++t) {  // at most 1 s of emulated time
    run_for(lab, poll, lab.sched.now() + 10'000'000);
    if (detector) r.circles += detector->check().size();
    const uint64_t now_sent = ring_sent();
    still = now_sent == sent ? still + 1 : 0;
    sent = now_sent;
    if (still >= 5) break;  // 50 ms without a frame on any ring link
  }
  r.duration_ms = double(lab.sched.now() - start) / 1e6;
  for (auto& f : flows) {
    r.completed += f->ok;
    r.failed += f->failed;
  }
  for (unsigned i = 0; i < n; ++i)
    for (unsigned p : {2u, 3u}) r.queued += lab.fabric.port({"sw" + std::to_string(i), p}).queued();
  r.stuck = still >= 5 && r.queued > 0;
  r.drops = switch_discards(lab);
  r.pauses = switch_pauses_sent(lab);
  return r;
}

RingRun run_ib(const char* routing, unsigned wrs) {
  const config::Config c = config::load_config_string(ring_yaml(routing), "ring");
  const config::Fabric& f = c.fabrics[0];
  sim::FabricLab lab(sim::lab_topology(f, compute_routes(f)));
  return drive(lab, true, wrs);
}

RingRun run_eth(bool tree, unsigned wrs) {
  sim::FabricLab lab(eth_ring(tree));
  program_eth_ring(lab, tree);
  return drive(lab, false, wrs);
}

}  // namespace

Section run_deadlock(const Options& o, Findings& f) {
  Section sec;
  sec.id = "deadlock";
  sec.title = "6. Deadlock: a cyclic buffer dependency on a ring";
  const unsigned wrs = o.quick ? 16 : 32;
  sec.conditions = "emulated (virtual time); five switches in a ring, one vHCA on each, every vHCA WRITEs " +
                   std::to_string(wrs) +
                   " × 64 KiB to the vHCA two switches clockwise; links 2 Gb/s, 500 ns; IB ring links with 16 KiB "
                   "VL buffers; RoCEv2 with PFC on priority 3 (XOFF and headroom as fabricd derives them). A run "
                   "counts as deadlocked when frames are queued on the ring links and none has moved for 50 ms.";
  Table t{"ring", "The ring under load (emulated):",
          {"fabric", "routing", "WRITEs done", "of", "deadlocked", "frames stuck", "drops", "PFC pauses",
           "credit loops detected", "emulated ms"},
          {}};
  const unsigned total = kRing * wrs;
  auto row = [&](const char* fabric, const char* routing, const RingRun& r, bool ib) {
    t.rows.push_back({fabric, routing, std::to_string(r.completed), std::to_string(total), r.stuck ? "yes" : "no",
                      std::to_string(r.queued), std::to_string(r.drops), ib ? "-" : std::to_string(r.pauses),
                      ib ? std::to_string(r.circles) : "-", num(r.duration_ms, 1)});
    return r.stuck ? 1 : 0;
  };
  f.ib_minhop_deadlocks = row("InfiniBand", "min-hop (SM)", run_ib("minhop", wrs), true);
  f.ib_updn_deadlocks = row("InfiniBand", "Up/Down (SM)", run_ib("updn", wrs), true);
  f.roce_cyclic_deadlocks = row("RoCEv2 + PFC", "shortest path, every ring link", run_eth(false, wrs), false);
  const int roce_tree = row("RoCEv2 + PFC", "spanning tree (one link unused)", run_eth(true, wrs), false);
  sec.tables.push_back(std::move(t));
  auto yes = [](int d) { return d ? std::string("deadlocks") : std::string("completes"); };
  sec.findings.push_back("InfiniBand: min-hop routing " + yes(f.ib_minhop_deadlocks) + ", Up/Down " +
                         yes(f.ib_updn_deadlocks) +
                         ": credits make every buffer dependency real, so the subnet manager's routing must be "
                         "deadlock-free (fabricd warns of a credit loop at start and reports a stuck circle).");
  sec.findings.push_back("RoCEv2 with PFC: shortest-path forwarding over every ring link " +
                         yes(f.roce_cyclic_deadlocks) + ", the spanning tree " + yes(roce_tree) +
                         ": PFC turns the same cyclic dependency into the same deadlock; Ethernet avoids it by "
                         "loop-free forwarding (a tree, or Up/Down-like routes in a leaf-spine), not by PFC.");
  return sec;
}

}  // namespace vf::compare
