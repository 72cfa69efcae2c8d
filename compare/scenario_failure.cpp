// Scenario 5: a link fails under load in a multi-path topology. InfiniBand:
// the subnet manager notices (a trap, or its next sweep: fabricd sweeps
// 1 ms after a link changes), routes around the link, and RC retransmits what
// the link took with it. RoCEv2 on a routed leaf-spine: the routers' ECMP
// routes are recomputed the moment the link goes down (what fabricd does,
// standing in for a routing protocol's reconvergence), and RC again
// retransmits what was lost. The figure is the time from the failure until
// the target receives packets again.
#include "compare/lab_setup.hpp"
#include "compare/lab_stream.hpp"
#include "compare/scenarios.hpp"
#include "daemon/config/config.hpp"
#include "daemon/ip/router_setup.hpp"
#include "daemon/sm/subnet_manager.hpp"
#include "daemon/fabric/topology.hpp"
#include "sim/config_topology.hpp"

namespace vf::compare {
namespace {

constexpr Nanos kSample = 10'000;  // 10 us
constexpr unsigned kWindow = 16;   // WRs in flight

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

// The same leaf-spine, routed RoCEv2: each leaf the gateway of its hosts' /26.
const char* kLeafSpine = R"(fabrics:
  - name: ls
    link_layer: ethernet
    switches:
      - {name: leaf0, ports: 4, router: {gateway: 198.18.0.62/26, routed_ports: [3, 4]}}
      - {name: leaf1, ports: 4, router: {gateway: 198.18.0.126/26, routed_ports: [3, 4]}}
      - {name: spine0, ports: 2, router: {routed_ports: [1, 2]}}
      - {name: spine1, ports: 2, router: {routed_ports: [1, 2]}}
    hcas:
      - {name: vhca0, ip: 198.18.0.1}
      - {name: vhca1, ip: 198.18.0.2}
      - {name: vhca2, ip: 198.18.0.65}
      - {name: vhca3, ip: 198.18.0.66}
    links:
      - {a: vhca0, b: leaf0/1, speed: 100G, delay: 100ns}
      - {a: vhca1, b: leaf0/2, speed: 100G, delay: 100ns}
      - {a: vhca2, b: leaf1/1, speed: 100G, delay: 100ns}
      - {a: vhca3, b: leaf1/2, speed: 100G, delay: 100ns}
      - {a: leaf0/3, b: spine0/1, speed: 100G, delay: 100ns}
      - {a: leaf0/4, b: spine1/1, speed: 100G, delay: 100ns}
      - {a: leaf1/3, b: spine0/2, speed: 100G, delay: 100ns}
      - {a: leaf1/4, b: spine1/2, speed: 100G, delay: 100ns}
)";

struct Recovery {
  double outage_ms = kNaN;  // failure -> the target receives packets again
  double sweep_ms = kNaN;   // failure -> the SM's sweep rerouted
  uint64_t discarded = 0;   // frames the failed link took with it
  uint64_t retransmitted = 0, timeouts = 0;
  unsigned failed = 0, completed = 0;
};

StreamSpec flow_spec(unsigned wrs, uint8_t rc_timeout, ibv_mtu mtu) {
  StreamSpec s;
  s.from = 0;
  s.to = 2;
  s.bytes = 256 * 1024;
  s.messages = wrs;
  s.window = kWindow;
  s.conn.mtu = mtu;
  s.conn.timeout = rc_timeout;
  return s;
}

// Takes leaf0's uplink `up` down under `flow`, calls `reconverge` (the
// fabric's reaction), and measures until the flow completes.
Recovery outage(sim::FabricLab& lab, Stream& flow, uint8_t up, Nanos reconverge_after,
                const std::function<void()>& reconverge, const std::function<double()>& reconverged_ms) {
  auto rx = [&] { return lab.host(2).hca->counters().rx_packets; };
  const Nanos down = lab.sched.now();
  lab.fabric.set_link_up({"leaf0", up}, false);
  bool reconverged = false;
  Recovery r;
  uint64_t last = rx();
  bool stalled = false;
  for (Nanos until = down + kSample; !flow.poll() && until < down + 10'000'000'000ULL; until += kSample) {
    if (!reconverged && until >= down + reconverge_after) {
      run_for(lab, [] { return false; }, down + reconverge_after);
      reconverge();
      reconverged = true;
    }
    run_for(lab, [&] { return flow.poll(); }, until);
    if (std::isnan(r.sweep_ms)) r.sweep_ms = reconverged_ms();
    const uint64_t now_rx = rx();
    if (now_rx == last) stalled = true;
    else if (stalled && std::isnan(r.outage_ms)) r.outage_ms = double(until - down) / 1e6;
    last = now_rx;
  }
  if (!stalled) r.outage_ms = 0;
  if (!std::isnan(r.sweep_ms)) r.sweep_ms -= double(down) / 1e6;
  const dp::PortSnapshot p = lab.fabric.port({"leaf0", up}).snapshot(0);
  r.discarded = p.port_xmit_discards;
  const auto& e = lab.host(0).hca->counters();
  r.retransmitted = e.retransmitted_packets;
  r.timeouts = e.retransmit_timeouts;
  r.failed = flow.failed;
  r.completed = flow.ok;
  return r;
}

Recovery run_ib(unsigned wrs, uint8_t rc_timeout) {
  const config::Config c = config::load_config_string(kFatTree, "fat-tree");
  const config::Fabric& f = c.fabrics[0];
  sim::FabricLab lab(sim::lab_topology(f));
  sm::SubnetManager sm(f, lab.fabric, lab.sched, Topology::kSweepDelay);
  sm.sweep();
  Stream flow(lab, flow_spec(wrs, rc_timeout, IBV_MTU_4096));
  lab.run_until([&] { return flow.poll(); }, lab.sched.now() + 100'000);
  const uint8_t up = static_cast<dp::IbSwitch*>(lab.fabric.find_switch("leaf0"))->lft(lab.host(2).lid);
  return outage(
      lab, flow, up, 0, [&] { sm.request_sweep(); },
      [&] { return sm.last().number >= 2 ? double(sm.last().at) / 1e6 : kNaN; });
}

// `delay`: when the routes are recomputed after the failure (0: at once, as
// fabricd does; a routing protocol takes its convergence time).
Recovery run_roce(unsigned wrs, uint8_t rc_timeout, Nanos delay) {
  const config::Config c = config::load_config_string(kLeafSpine, "leaf-spine");
  const config::Fabric& f = c.fabrics[0];
  sim::LabTopology t = sim::lab_topology(f);
  t.port = port_config(Flavour::kRoceEcn);
  t.default_tclass = kRoceTclass;
  t.dcqcn = dcqcn_config(Flavour::kRoceEcn);
  sim::FabricLab lab(t);
  routing::enable_routers(lab.fabric, f);
  routing::program_routes(lab.fabric, f);
  Stream flow(lab, flow_spec(wrs, rc_timeout, IBV_MTU_1024));
  auto uplink_sent = [&](unsigned p) { return lab.fabric.port({"leaf0", p}).snapshot(0).port_xmit_pkts; };
  const uint64_t before3 = uplink_sent(3), before4 = uplink_sent(4);
  lab.run_until([&] { return flow.poll(); }, lab.sched.now() + 100'000);
  // ECMP hashed the flow's one UDP source port onto one spine: fail that one.
  const uint8_t up = uplink_sent(3) - before3 >= uplink_sent(4) - before4 ? 3 : 4;
  const Nanos down = lab.sched.now();
  return outage(
      lab, flow, up, delay, [&] { routing::program_routes(lab.fabric, f); }, [&] { return double(down + delay) / 1e6; });
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
                   "down. IB: fabricd's subnet manager, sweeping 1 ms after a link change, Up/Down routing. RoCEv2: "
                   "the same leaf-spine routed (each leaf its hosts' gateway, a /26 per leaf), ECMP routes over both "
                   "spines recomputed by fabricd's route computation at once (as fabricd does) or 1 ms after the "
                   "failure (the SM's delay); the uplink "
                   "failed is the one ECMP hashed the flow onto; 1024-byte packets. Outage: from the failure until "
                   "the target receives packets again, sampled every 10 µs.";
  Table t{"recovery", "Recovery from a failed uplink (emulated):",
          {"fabric", "RC timeout (IBA exponent)", "rerouted after ms", "outage ms", "frames lost with the link",
           "retransmitted pkts", "RC timeouts", "WRITEs done", "failed"},
          {}};
  struct Case {
    bool ib;
    uint8_t timeout;
    Nanos delay;  // RoCEv2: when the routes are recomputed
    const char* name;
  };
  const Case cases[] = {{true, 14, 0, "InfiniBand (SM sweep)"},
                        {true, 10, 0, "InfiniBand (SM sweep)"},
                        {false, 14, 0, "RoCEv2 (ECMP, rerouted at once)"},
                        {false, 14, Topology::kSweepDelay, "RoCEv2 (ECMP, rerouted after 1 ms)"},
                        {false, 10, Topology::kSweepDelay, "RoCEv2 (ECMP, rerouted after 1 ms)"}};
  Recovery ib14, ib10, roce_now, roce_1ms;
  for (const Case& k : cases) {
    const Recovery r = k.ib ? run_ib(wrs, k.timeout) : run_roce(wrs, k.timeout, k.delay);
    if (k.timeout == 14) (k.ib ? ib14 : k.delay ? roce_1ms : roce_now) = r;
    if (k.timeout == 10 && k.ib) ib10 = r;
    t.rows.push_back({k.name, std::to_string(k.timeout) + " (" + num(4.096e-3 * double(1u << k.timeout), 1) + " ms)",
                      num(r.sweep_ms, 3), r.outage_ms == 0 ? "< 0.010" : num(r.outage_ms, 3),
                      std::to_string(r.discarded), std::to_string(r.retransmitted), std::to_string(r.timeouts),
                      std::to_string(r.completed), std::to_string(r.failed)});
  }
  f.ib_recovery_ms = ib14.outage_ms;
  f.roce_recovery_ms = roce_1ms.outage_ms;
  f.roce_recovery_now_ms = roce_now.outage_ms;
  sec.tables.push_back(std::move(t));
  sec.findings.push_back(
      "InfiniBand: an LFT names one port per destination, so the leaf forwards into the dead link until the SM's "
      "sweep reroutes, " + num(ib14.sweep_ms, 1) + " ms later: " + std::to_string(ib14.discarded) +
      " frames of the requester's window (" + std::to_string(kWindow) + " × 256 KiB) are lost. " +
      (ib14.timeouts > 0 ? "With nothing left to send, the requester learns of the loss only from its RC timer: "
                           "traffic flows again after " + num(ib14.outage_ms, 1) +
                           " ms with perftest's timeout (14), " + num(ib10.outage_ms, 1) +
                           " ms with 10 — the outage is the RC timeout, not the SM."
                         : std::string("The requester recovers without a timeout.")));
  sec.findings.push_back(
      "RoCEv2: the leaf's router drops a member whose link is down from its ECMP group at once, as switch ASICs do, "
      "so when the routes are recomputed hardly matters: " + std::to_string(roce_now.discarded) + " frame(s) lost "
      "rerouting at once, " + std::to_string(roce_1ms.discarded) + " rerouting after 1 ms. " +
      (roce_1ms.timeouts == 0 ? "The next packets take the other spine, the responder NAKs the gap and the requester "
                                "resends at once: no RC timeout, and the target " +
                                    std::string(roce_1ms.outage_ms == 0 ? "never goes 10 µs without packets."
                                                                        : "waits " + num(roce_1ms.outage_ms, 3) + " ms.")
                              : "The requester still needed its RC timer: the outage was " + num(roce_1ms.outage_ms, 1) +
                                    " ms."));
  sec.findings.push_back("So the difference is local repair in the switch, not the encapsulation: a routing "
                         "protocol's own convergence time only matters where no equal-cost path is left, and an IB "
                         "fabric with adaptive routing or several LIDs per port (LMC) is not modelled here.");
  return sec;
}

}  // namespace vf::compare
