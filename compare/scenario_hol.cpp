// Scenario 4: head-of-line blocking. Two switches joined by one uplink; four
// senders (two behind the uplink) WRITE into one target T, and a victim V
// sends to an idle host D over the same uplink. T's port drains a quarter of
// what arrives, so the far switch stops the uplink -- by withholding credits
// (IB) or pausing the priority (PFC) -- and V's frames wait behind the
// incast's though D is idle. On another VL or priority V is not stopped.
#include "compare/lab_setup.hpp"
#include "compare/lab_stream.hpp"
#include "compare/scenarios.hpp"

namespace vf::compare {
namespace {

constexpr uint64_t kRate = 2'000'000'000ULL;
constexpr uint32_t kMsg = 64 * 1024;
constexpr unsigned kIncastWrs = 60, kVictimWrs = 16;
enum Host : unsigned { kA0, kA1, kVictim, kTarget, kIdle, kB0, kB1, kHosts };
constexpr uint8_t kVictimOtherTclass = (34 << 2) | 2;  // DSCP 34 -> priority 4, ECT(0)

// other_lossless: a second lossless priority (4) for the victim, as a
// deployment with two lossless classes configures it (IB: every VL has credits).
sim::LabTopology two_switches(Flavour f, bool other_lossless) {
  sim::LabTopology t;
  t.link_layer = is_ib(f) ? LinkLayer::kInfiniBand : LinkLayer::kEthernet;
  t.switches = {{"sw0", 4}, {"sw1", 5}};
  const dp::LinkParams l{kRate, 500, is_ib(f) ? 4096u : 1500u};
  t.hosts = {{"sw0", 1, l}, {"sw0", 2, l}, {"sw0", 3, l}, {"sw1", 1, l}, {"sw1", 2, l}, {"sw1", 3, l}, {"sw1", 4, l}};
  t.cables = {{"sw0", 4, "sw1", 5, l}};
  t.port = port_config(f);
  if (!is_ib(f)) {
    // As RoCE guides set it: XOFF well above ECN's Kmax, so marking acts
    // before pausing does.
    t.port.eth.pfc.xoff_bytes = 64 * 1024;
    t.port.eth.pfc.xon_bytes = 64 * 1024 - 2 * 1518;
    if (other_lossless) t.port.eth.pfc.enable |= 1u << 4;
    t.default_tclass = kRoceTclass;
    t.dcqcn = dcqcn_config(f);
    return t;
  }
  for (unsigned h = 0; h < kHosts; ++h) {
    const bool near = h < kTarget;
    t.lft["sw0"][h] = uint8_t(near ? h + 1 : 4);
    t.lft["sw1"][h] = uint8_t(near ? 5 : h - kTarget + 1);
  }
  return t;
}

struct Victim {
  double bps;
  uint64_t retransmitted;  // by the victim
  uint64_t drops;          // anywhere in the switches
};

Victim run(Flavour f, bool incast, bool other_class) {
  sim::FabricLab lab(two_switches(f, other_class), 300);
  if (!is_ib(f)) resolve_neighbours(lab);
  const ibv_mtu mtu = is_ib(f) ? IBV_MTU_4096 : IBV_MTU_1024;
  std::vector<std::unique_ptr<Stream>> senders;
  if (incast)
    for (unsigned h : {kA0, kA1, kB0, kB1}) {
      StreamSpec s;
      s.from = h;
      s.to = kTarget;
      s.bytes = kMsg;
      s.messages = kIncastWrs;
      s.conn.mtu = mtu;
      senders.push_back(std::make_unique<Stream>(lab, s));
    }
  StreamSpec v;
  v.from = kVictim;
  v.to = kIdle;
  v.bytes = kMsg;
  v.messages = kVictimWrs;
  v.window = kVictimWrs;
  v.conn.mtu = mtu;
  if (other_class) {
    if (is_ib(f)) v.sl = 1;  // SL1 -> VL1: its own credits
    else v.conn.traffic_class = kVictimOtherTclass;
  }
  Stream victim(lab, v);
  lab.run_until([&] {
    for (auto& s : senders) s->poll();
    return victim.poll();
  });
  if (victim.failed) throw std::runtime_error(std::string(flavour_name(f)) + ": the victim's WRITEs failed");
  return {goodput_bps(victim), lab.host(kVictim).hca->counters().retransmitted_packets, switch_discards(lab)};
}

}  // namespace

Section run_hol(const Options&, Findings& f) {
  Section sec;
  sec.id = "hol";
  sec.title = "4. Head-of-line blocking: a victim flow to an idle host";
  sec.conditions =
      "emulated (virtual time); two switches joined by one uplink, every link 2 Gb/s, 500 ns, 300 ns switch "
      "latency; four senders (two behind the uplink) each WRITE 60 × 64 KiB into one target; the victim WRITEs "
      "16 × 64 KiB to an idle host across the same uplink. Same class: the victim on VL0 / priority 3 with the "
      "incast; other class: SL1 → VL1 on IB, DSCP 34 → priority 4 on RoCEv2, made lossless too (PFC on priorities 3 and 4), so both fabrics give the victim a lossless class of its own. RoCEv2 ports: XOFF "
      "64 KiB, ECN marking from 8 KiB. The victim's fair share of the uplink would be half its rate, 1 Gb/s.";
  Table t{"victim", "The victim's goodput (emulated):", {"fabric", "victim's class", "alone Gb/s", "beside the incast Gb/s", "share kept", "victim's retransmitted pkts",
           "switch drops"},
          {}};
  auto row = [&](Flavour fl, const char* cls, bool other, double alone) {
    const Victim v = run(fl, true, other);
    t.rows.push_back({flavour_name(fl), cls, gbps(alone), gbps(v.bps), num(100 * v.bps / alone, 1) + " %",
                      std::to_string(v.retransmitted), std::to_string(v.drops)});
    return v.bps / alone;
  };
  const double ib_alone = run(Flavour::kIb, false, false).bps;
  f.ib_victim_same_vl = row(Flavour::kIb, "same VL (VL0)", false, ib_alone);
  f.ib_victim_other_vl = row(Flavour::kIb, "own VL (VL1)", true, ib_alone);
  const double roce_alone = run(Flavour::kRocePfc, false, false).bps;
  f.roce_victim_same_prio = row(Flavour::kRocePfc, "same priority (3)", false, roce_alone);
  f.roce_victim_other_prio = row(Flavour::kRocePfc, "own priority (4)", true, roce_alone);
  f.roce_victim_dcqcn = row(Flavour::kRoceEcn, "same priority (3)", false, run(Flavour::kRoceEcn, false, false).bps);
  sec.tables.push_back(std::move(t));
  sec.findings.push_back("On the incast's VL / priority the victim keeps " + percent(f.ib_victim_same_vl) +
                         " of its rate on InfiniBand and " + percent(f.roce_victim_same_prio) +
                         " on RoCEv2 with PFC: both hop-by-hop schemes stop a whole class on the uplink, so both "
                         "block a flow whose own destination is idle.");
  sec.findings.push_back("On its own class it keeps " + percent(f.ib_victim_other_vl) + " (IB, VL1) and " +
                         percent(f.roce_victim_other_prio) +
                         " (RoCEv2, priority 4): separate VLs or priorities are the remedy on both fabrics.");
  sec.findings.push_back("With ECN + DCQCN on top of PFC the victim on the shared priority keeps " +
                         percent(f.roce_victim_dcqcn) + " (PFC alone: " + percent(f.roce_victim_same_prio) + ").");
  return sec;
}

}  // namespace vf::compare
