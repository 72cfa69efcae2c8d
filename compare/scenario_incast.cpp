// Scenario 3: N senders WRITE into one vHCA through one switch, on IB with
// credits and on RoCEv2 with PFC, without it, and with PFC + ECN/DCQCN.
#include <algorithm>

#include "compare/lab_setup.hpp"
#include "compare/lab_stream.hpp"
#include "compare/scenarios.hpp"

namespace vf::compare {
namespace {

constexpr LinkSpec kIbLink{2'000'000'000ULL, 500, 4096};
constexpr LinkSpec kEthLink{2'000'000'000ULL, 500, 1500};
constexpr Nanos kSwitchLatency = 100;
constexpr uint32_t kMsg = 64 * 1024;
constexpr Nanos kSample = 100'000;  // queue depth every 100 us

struct Outcome {
  double goodput_bps = 0, jain = 0;
  unsigned failed = 0;
  uint64_t drops = 0, retransmitted = 0, timeouts = 0, pauses = 0, cnps = 0;
  double xmit_wait_ms = 0, duration_ms = 0;
  uint64_t peak_buffer = 0;  // the largest 100 us sample
  bool finished = false;      // every WR completed within 10 s of emulated time
  std::vector<double> t_ms, depth_kib;
};

Outcome run(Flavour f, unsigned n, unsigned wrs) {
  const LinkSpec& l = is_ib(f) ? kIbLink : kEthLink;
  sim::FabricLab lab(single_switch(f, n + 1, l, kSwitchLatency));
  std::vector<std::unique_ptr<Stream>> flows;
  for (unsigned i = 0; i < n; ++i) {
    StreamSpec s;
    s.from = i;
    s.to = n;
    s.bytes = kMsg;
    s.messages = wrs;
    s.window = 32;
    s.conn.mtu = ibv_path_mtu(path_mtu(f, l));
    flows.push_back(std::make_unique<Stream>(lab, s));
  }
  const Nanos start = lab.sched.now();
  Outcome o;
  auto all_done = [&] {
    bool all = true;
    for (auto& s : flows) all &= s->poll();
    return all;
  };
  // RC gives up after its retries in far less than this; 10 s of emulated
  // time ends a run that cannot finish.
  for (Nanos until = start + kSample; !all_done() && until < start + 10'000'000'000ULL; until += kSample) {
    run_for(lab, all_done, until);
    const uint64_t b = switch_buffered_bytes(lab);
    o.peak_buffer = std::max(o.peak_buffer, b);
    o.t_ms.push_back(double(until - start) / 1e6);
    o.depth_kib.push_back(double(b) / 1024);
  }
  // At most 400 points a curve (the largest sample of each stretch): the
  // plot keeps every peak without a point per 100 us of a long lossy run.
  const size_t stride = (o.t_ms.size() + 399) / 400;
  if (stride > 1) {
    std::vector<double> t, d;
    for (size_t i = 0; i < o.t_ms.size(); i += stride) {
      t.push_back(o.t_ms[i]);
      d.push_back(*std::max_element(o.depth_kib.begin() + long(i),
                                    o.depth_kib.begin() + long(std::min(i + stride, o.depth_kib.size()))));
    }
    o.t_ms = std::move(t);
    o.depth_kib = std::move(d);
  }
  const Nanos end = lab.sched.now();
  o.duration_ms = double(end - start) / 1e6;
  o.finished = all_done();
  uint64_t bytes = 0;
  // Fairness: the WRITEs each flow had done when the first flow finished.
  Nanos first = kNever;
  for (auto& s : flows) {
    bytes += s->payload_bytes();
    o.failed += s->failed;
    if (s->ok == s->done_at.size() && !s->done_at.empty()) first = std::min(first, s->done_at.back());
  }
  std::vector<double> by_first;
  for (auto& s : flows)
    by_first.push_back(double(std::count_if(s->done_at.begin(), s->done_at.end(), [&](Nanos t) { return t <= first; })));
  o.jain = jain_index(by_first);
  o.goodput_bps = double(bytes) * 8 / (double(end - start) / 1e9);
  o.drops = switch_discards(lab);
  const EngineTotals e = engine_totals(lab);
  o.retransmitted = e.retransmitted;
  o.timeouts = e.timeouts;
  o.cnps = e.cnp_handled;
  o.pauses = switch_pauses_sent(lab);
  o.xmit_wait_ms = double(hosts_xmit_wait_ns(lab)) / 1e6;
  return o;
}

}  // namespace

Section run_incast(const Options& opt, Findings& f) {
  Section sec;
  sec.id = "incast";
  sec.title = "3. Incast N→1: credits, PFC, lossy, PFC + ECN/DCQCN";
  const unsigned wrs = opt.quick ? 16 : 64;
  sec.conditions = "emulated (virtual time); N vHCAs each WRITE " + std::to_string(wrs) +
                   " × 64 KiB (32 in flight) into one vHCA through one switch; every link 2 Gb/s, 500 ns; IB MTU "
                   "4096 with credits on every VL; RoCEv2 1500-byte MTU, DSCP 26 on priority 3; PFC headroom from "
                   "the 802.1Qbb delay model, ECN marking from 8 KiB (5 % at 32 KiB), DCQCN with the paper's time "
                   "constants. Goodput is payload over the run's emulated duration; fairness is Jain's index of the "
                   "WRITEs each sender had completed when the first finished. The share is of the analytic goodput of the 2 Gb/s "
                   "bottleneck with each fabric's headers (IB " +
                   gbps(analytic_goodput_bps(Encap::kInfiniBand, Op::kWrite, kMsg, kIbLink.mtu, kIbLink.rate_bps)) +
                   " Gb/s, RoCEv2 " +
                   gbps(analytic_goodput_bps(Encap::kRoceV4, Op::kWrite, kMsg, roce_path_mtu(kEthLink.mtu),
                                             kEthLink.rate_bps)) +
                   " Gb/s: scenario 1's cost), so it shows what flow control and congestion control lose, not "
                   "what the headers do.";
  Table t{"results", "Per fabric and N (emulated):",
          {"fabric", "N", "goodput Gb/s", "of the analytic goodput", "Jain", "failed WRs", "switch drops",
           "retransmitted pkts", "RC timeouts", "PFC pauses sent", "CNPs handled", "XmitWait ms (senders)",
           "peak switch buffer KiB (100 µs samples)", "duration ms", "finished"},
          {}};
  const Flavour kinds[] = {Flavour::kIb, Flavour::kRocePfc, Flavour::kRoceLossy, Flavour::kRoceEcn};
  const unsigned ns[] = {2, 4, 8};
  PlotSpec depth{"Switch buffer occupancy, 8→1 incast (emulated)", "time (ms)", "KiB buffered", false, false, true, {}};
  PlotSpec share{"Incast goodput against N (emulated)", "senders N", "Gb/s at the bottleneck", false, false, true, {}};
  for (Flavour k : kinds) {
    Series sg{flavour_name(k), {}, {}};
    for (unsigned n : ns) {
      const Outcome o = run(k, n, wrs);
      // Against what the bottleneck can carry with this fabric's headers, so
      // the encapsulation cost (scenario 1) is not counted twice.
      const LinkSpec& l = is_ib(k) ? kIbLink : kEthLink;
      const double analytic = analytic_goodput_bps(is_ib(k) ? Encap::kInfiniBand : Encap::kRoceV4, Op::kWrite, kMsg,
                                                   path_mtu(k, l), l.rate_bps);
      const double sh = o.goodput_bps / analytic;
      t.rows.push_back({flavour_name(k), std::to_string(n), gbps(o.goodput_bps), num(100 * sh, 1) + " %",
                        num(o.jain, 3), std::to_string(o.failed), std::to_string(o.drops),
                        std::to_string(o.retransmitted), std::to_string(o.timeouts), std::to_string(o.pauses),
                        std::to_string(o.cnps), num(o.xmit_wait_ms, 3), num(double(o.peak_buffer) / 1024, 1),
                        num(o.duration_ms, 3), o.finished ? "yes" : "no: 10 s limit"});
      sg.x.push_back(n);
      sg.y.push_back(o.goodput_bps / 1e9);
      if (n == 4 && k == Flavour::kRocePfc) f.pfc_incast4_pauses = double(o.pauses);
      if (n == 4 && k == Flavour::kRoceEcn) f.dcqcn_incast4_pauses = double(o.pauses);
      if (n == 8) {
        depth.series.push_back({flavour_name(k), o.t_ms, o.depth_kib});
        switch (k) {
          case Flavour::kIb:
            f.ib_incast_drops = double(o.drops), f.ib_incast_share = sh, f.ib_incast_wait_ms = o.xmit_wait_ms;
            break;
          case Flavour::kRocePfc:
            f.pfc_incast_drops = double(o.drops), f.pfc_incast_share = sh, f.pfc_incast_pauses = double(o.pauses);
            break;
          case Flavour::kRoceLossy:
            f.lossy_incast_drops = double(o.drops), f.lossy_incast_share = sh,
            f.lossy_incast_retx = double(o.retransmitted);
            break;
          case Flavour::kRoceEcn:
            f.dcqcn_incast_drops = double(o.drops), f.dcqcn_incast_share = sh,
            f.dcqcn_incast_pauses = double(o.pauses);
            break;
        }
      }
    }
    share.series.push_back(std::move(sg));
  }
  sec.tables.push_back(std::move(t));
  sec.plots.push_back({"goodput", std::move(share)});
  sec.plots.push_back({"buffer", std::move(depth)});
  sec.findings.push_back("8→1 on InfiniBand: " + num(f.ib_incast_drops, 0) + " drops, " + percent(f.ib_incast_share) +
                         " of the analytic goodput" +
                         (f.ib_incast_drops == 0 && f.ib_incast_wait_ms > 0
                              ? ", " + num(f.ib_incast_wait_ms, 1) +
                                    " ms of PortXmitWait at the senders: they waited for credits instead of losing "
                                    "packets."
                              : "."));
  sec.findings.push_back("8→1 on RoCEv2 with PFC: " + num(f.pfc_incast_drops, 0) + " drops, " +
                         percent(f.pfc_incast_share) + " of the analytic goodput, " + num(f.pfc_incast_pauses, 0) +
                         " pause frames from the switch; with ECN/DCQCN on top " + num(f.dcqcn_incast_pauses, 0) +
                         " pauses, " + percent(f.dcqcn_incast_share) + ".");
  auto change = [](double pfc, double dcqcn, unsigned n) {
    const std::string at = " at N = " + std::to_string(n);
    if (dcqcn < 0.9 * pfc) return "cut the pause frames from " + num(pfc, 0) + " to " + num(dcqcn, 0) + at;
    return "left the pause frames where PFC alone had them (" + num(pfc, 0) + " and " + num(dcqcn, 0) + ")" + at;
  };
  sec.findings.push_back("ECN/DCQCN " + change(f.pfc_incast4_pauses, f.dcqcn_incast4_pauses, 4) + " and " +
                         change(f.pfc_incast_pauses, f.dcqcn_incast_pauses, 8) +
                         " (the CNP column shows how often the senders were told to slow down); where the pauses "
                         "remain, PFC is still doing the work, with the head-of-line blocking of scenario 4.");
  sec.findings.push_back("8→1 on lossy RoCEv2: " + num(f.lossy_incast_drops, 0) + " drops and " +
                         num(f.lossy_incast_retx, 0) + " retransmitted packets for " + percent(f.lossy_incast_share) +
                         " of the analytic goodput: go-back-N recovery is what lossless flow control saves.");
  return sec;
}

}  // namespace vf::compare
