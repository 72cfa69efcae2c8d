// Scenario 5: a link fails under load in a multi-path topology. InfiniBand:
// the subnet manager notices (a trap, or its next sweep: fabricd sweeps
// 1 ms after a link changes), routes around the link, and RC retransmits what
// the link took with it. The figure is the time from the failure until the
// target receives packets again.
#include "compare/lab_setup.hpp"
#include "compare/lab_stream.hpp"
#include "compare/scenarios.hpp"
#include "daemon/config.hpp"
#include "daemon/subnet_manager.hpp"
#include "daemon/topology.hpp"
#include "tests/support/config_lab.hpp"

namespace vf::compare {
namespace {

constexpr Nanos kSample = 10'000;  // 10 us

// Two leaves, two spines, two vHCAs per leaf; 100 Gb/s, 100 ns.
const char* kFatTree = R"(fabrics:
  - name: ft
    link_layer: infiniband
    sm: {routing: updn}
    switches:
      - {name: leaf0, ports: 4}
      - {name: leaf1, ports: 4}
      - {name: spine0, ports: 2}
      - {name: spine1, ports: 2}
    hcas: [{name: vhca0}, {name: vhca1}, {name: vhca2}, {name: vhca3}]
    links:
      - {a: vhca0, b: leaf0/1, width: 4x, speed: EDR, delay: 100ns}
      - {a: vhca1, b: leaf0/2, width: 4x, speed: EDR, delay: 100ns}
      - {a: vhca2, b: leaf1/1, width: 4x, speed: EDR, delay: 100ns}
      - {a: vhca3, b: leaf1/2, width: 4x, speed: EDR, delay: 100ns}
      - {a: leaf0/3, b: spine0/1, width: 4x, speed: EDR, delay: 100ns}
      - {a: leaf0/4, b: spine1/1, width: 4x, speed: EDR, delay: 100ns}
      - {a: leaf1/3, b: spine0/2, width: 4x, speed: EDR, delay: 100ns}
      - {a: leaf1/4, b: spine1/2, width: 4x, speed: EDR, delay: 100ns}
)";

struct Recovery {
  double outage_ms = kNaN;  // failure -> the target receives packets again
  double sweep_ms = kNaN;   // failure -> the SM's sweep rerouted
  uint64_t discarded = 0;   // frames the failed link took with it
  uint64_t retransmitted = 0, timeouts = 0;
  unsigned failed = 0, completed = 0;
};

Recovery run_ib(unsigned wrs, uint8_t rc_timeout) {
  const config::Config c = config::load_config_string(kFatTree, "fat-tree");
  const config::Fabric& f = c.fabrics[0];
  test::FabricLab lab(test::lab_topology(f));
  sm::SubnetManager sm(f, lab.fabric, lab.sched, Topology::kSweepDelay);
  sm.sweep();
  StreamSpec s;
  s.from = 0;
  s.to = 2;
  s.bytes = 256 * 1024;
  s.messages = wrs;
  s.window = 16;
  s.conn.mtu = IBV_MTU_4096;
  s.conn.timeout = rc_timeout;
  Stream flow(lab, s);
  auto rx = [&] { return lab.host(2).hca->counters().rx_packets; };
  lab.run_until([&] { return flow.poll(); }, lab.sched.now() + 100'000);
  const uint8_t up = static_cast<dp::IbSwitch*>(lab.fabric.find_switch("leaf0"))->lft(lab.host(2).lid);
  const Nanos down = lab.sched.now();
  lab.fabric.set_link_up({"leaf0", up}, false);
  sm.request_sweep();
  Recovery r;
  uint64_t last = rx();
  bool stalled = false;
  for (Nanos until = down + kSample; !flow.poll() && until < down + 10'000'000'000ULL; until += kSample) {
    lab.run_until([&] { return flow.poll(); }, until);
    if (std::isnan(r.sweep_ms) && sm.last().number >= 2) r.sweep_ms = double(sm.last().at - down) / 1e6;
    const uint64_t now_rx = rx();
    if (now_rx == last) stalled = true;
    else if (stalled && std::isnan(r.outage_ms)) r.outage_ms = double(until - down) / 1e6;
    last = now_rx;
  }
  if (!stalled) r.outage_ms = 0;
  const dp::PortSnapshot p = lab.fabric.port({"leaf0", up}).snapshot(0);
  r.discarded = p.port_xmit_discards;
  const auto& e = lab.host(0).hca->counters();
  r.retransmitted = e.retransmitted_packets;
  r.timeouts = e.retransmit_timeouts;
  r.failed = flow.failed;
  r.completed = flow.ok;
  return r;
}

}  // namespace

Section run_failure(const Options& o, Findings& f) {
  Section sec;
  sec.id = "failure";
  sec.title = "5. Failure: a link down under load in a multi-path topology";
  const unsigned wrs = o.quick ? 64 : 256;
  sec.conditions = "emulated (virtual time); two leaves, two spines, two vHCAs per leaf, 100 Gb/s links (4X EDR), "
                   "100 ns; one RC flow WRITEs " + std::to_string(wrs) +
                   " × 256 KiB (16 in flight) across the spines; 0.1 ms in, the leaf's uplink that carries it goes "
                   "down. The subnet manager is fabricd's, sweeping 1 ms after a link change, Up/Down routing. "
                   "Outage: from the failure until the target receives packets again, sampled every 10 µs.";
  Table t{"recovery", "Recovery from a failed uplink (emulated):",
          {"fabric", "RC timeout (IBA exponent)", "SM sweep after ms", "outage ms", "frames lost with the link",
           "retransmitted pkts", "RC timeouts", "WRITEs done", "failed"},
          {}};
  for (uint8_t to : {uint8_t(14), uint8_t(10)}) {
    const Recovery r = run_ib(wrs, to);
    t.rows.push_back({"InfiniBand", std::to_string(to) + " (" + num(4.096e-3 * double(1u << to), 1) + " ms)",
                      num(r.sweep_ms, 3), num(r.outage_ms, 3), std::to_string(r.discarded),
                      std::to_string(r.retransmitted), std::to_string(r.timeouts), std::to_string(r.completed),
                      std::to_string(r.failed)});
    if (to == 14) {
      f.ib_recovery_ms = r.outage_ms;
      f.ib_failure_lost = double(r.discarded);
    }
  }
  sec.tables.push_back(std::move(t));
  sec.findings.push_back("InfiniBand: the SM has rerouted 1 ms after the failure, but traffic flows again only after " +
                         num(f.ib_recovery_ms, 1) +
                         " ms with perftest's RC timeout (14): what the failed link held is recovered by the "
                         "requester's retransmission timer, so the outage is the RC timeout, not the SM.");
  sec.not_measured.push_back(
      "RoCEv2 (ECMP / L3 reconvergence): the virtual-time lab has no routed Ethernet fabric yet. fabricd recomputes "
      "a leaf-spine's ECMP routes as soon as a link goes down, and an ib_write_bw across it carries on "
      "(tests/integration/leaf_spine_test.cpp), but that is a wall-clock run, so no emulated outage is reported.");
  return sec;
}

}  // namespace vf::compare
