// Scenario 8: "when to use which", generated from the figures the other
// scenarios measured. A row whose figures are missing says so.
#include <cmath>

#include "compare/lab_setup.hpp"
#include "compare/scenarios.hpp"

namespace vf::compare {
namespace {

std::string pct(double x) { return std::isfinite(x) ? percent(x) : "not measured"; }
std::string ns(double x) { return std::isfinite(x) ? num(x, 0) + " ns" : "not measured"; }
std::string ms(double x) {
  if (!std::isfinite(x)) return "not measured";
  return x == 0 ? std::string("< 0.01 ms") : num(x, 1) + " ms";
}
std::string count(double x) { return std::isfinite(x) ? num(x, 0) : "not measured"; }

// Which fabric a row favours: the smaller (or larger) figure, or a tie
// within `tolerance` (relative).
std::string ahead(double ib, double roce, bool smaller_is_better, double tolerance = 0.02) {
  if (!std::isfinite(ib) || !std::isfinite(roce)) return "—";
  const double scale = std::max(std::fabs(ib), std::fabs(roce));
  if (scale == 0 || std::fabs(ib - roce) <= tolerance * scale) return "even";
  return (ib < roce) == smaller_is_better ? "InfiniBand" : "RoCEv2";
}

// What a flavour's ports were configured with for the lossless runs, read
// from the configuration the lab used rather than written by hand.
std::string lossless_settings(Flavour fl) {
  if (is_ib(fl)) return "none: credits on every VL are part of the link (the SM's routing must be deadlock-free, 6)";
  const dp::PortConfig p = port_config(fl);
  std::string out;
  if (p.eth.trust_dscp) out += "trust DSCP; ";
  for (unsigned i = 0; i < 8; ++i)
    if (p.eth.pfc.enable & (1u << i)) out += "PFC on priority " + std::to_string(i) + " with headroom per link; ";
  if (p.eth.ecn.enabled) out += "ECN marking thresholds; ";
  if (dcqcn_config(fl).rp_enabled) out += "DCQCN at every vHCA; ";
  out += "the RoCE traffic class (DSCP 26)";
  return out;
}

}  // namespace

Section when_to_use_which(const Findings& f) {
  Section s;
  s.id = "summary";
  s.title = "8. When to use which (generated from the figures above)";
  s.conditions = "each cell is a figure measured above, under that section's conditions; \"ahead\" is the fabric "
                 "with the better figure (within 2 % counts as even).";
  Table t{"when", "", {"aspect", "InfiniBand", "RoCEv2", "ahead", "from"}, {}};
  t.rows.push_back({"fabric latency, 8 B, idle", ns(f.ib_fabric_ns), ns(f.roce_fabric_ns),
                    ahead(f.ib_fabric_ns, f.roce_fabric_ns, true), "2 (emulated)"});
  t.rows.push_back({"8 B p99 beside a bulk flow", ns(f.ib_loaded_p99_ns),
                    ns(f.roce_loaded_p99_pfc_ns) + " with PFC, " + ns(f.roce_loaded_p99_ns) + " with ECN/DCQCN",
                    ahead(f.ib_loaded_p99_ns, f.roce_loaded_p99_pfc_ns, true), "2 (emulated)"});
  if (std::isfinite(f.ib_wall_us) || std::isfinite(f.roce_wall_us))
    t.rows.push_back({"8 B latency through the emulator (host software included)",
                      std::isfinite(f.ib_wall_us) ? num(f.ib_wall_us, 2) + " µs" : "not measured",
                      std::isfinite(f.roce_wall_us) ? num(f.roce_wall_us, 2) + " µs" : "not measured",
                      "— (host-bound, not a fabric property)", "2 (wall clock)"});
  t.rows.push_back({"payload share of the line, 64 B WRITEs", pct(f.ib_share_small), pct(f.roce_share_small),
                    ahead(f.ib_share_small, f.roce_share_small, false), "1 (emulated)"});
  t.rows.push_back({"payload share of the line, 1 MiB WRITEs", pct(f.ib_share_large),
                    pct(f.roce_share_large) + " (jumbo frames: " + pct(f.roce_jumbo_share_large) + ")",
                    ahead(f.ib_share_large, f.roce_share_large, false), "1 (emulated)"});
  t.rows.push_back({"drops in an 8→1 incast", count(f.ib_incast_drops) + " (credits)",
                    count(f.pfc_incast_drops) + " with PFC (" + count(f.lossy_incast_drops) + " without)",
                    ahead(f.ib_incast_drops, f.pfc_incast_drops, true), "3 (emulated)"});
  t.rows.push_back({"8→1 incast goodput (share of the analytic)", pct(f.ib_incast_share),
                    pct(f.pfc_incast_share) + " PFC, " + pct(f.dcqcn_incast_share) + " PFC+DCQCN, " +
                        pct(f.lossy_incast_share) + " lossy",
                    ahead(f.ib_incast_share, f.pfc_incast_share, false), "3 (emulated)"});
  t.rows.push_back({"victim flow kept, same class as an incast", pct(f.ib_victim_same_vl),
                    pct(f.roce_victim_same_prio) + " (PFC+DCQCN: " + pct(f.roce_victim_dcqcn) + ")",
                    ahead(f.ib_victim_same_vl, f.roce_victim_same_prio, false), "4 (emulated)"});
  t.rows.push_back({"victim flow kept, own class", pct(f.ib_victim_other_vl), pct(f.roce_victim_other_prio),
                    ahead(f.ib_victim_other_vl, f.roce_victim_other_prio, false), "4 (emulated)"});
  t.rows.push_back({"outage after an uplink failure", ms(f.ib_recovery_ms) + " (SM sweep after 1 ms)",
                    ms(f.roce_recovery_ms) + " with routes recomputed after 1 ms, " + ms(f.roce_recovery_now_ms) +
                        " at once",
                    ahead(f.ib_recovery_ms, f.roce_recovery_ms, true), "5 (emulated)"});
  auto dl = [](int d) { return d < 0 ? std::string("not measured") : d ? std::string("deadlocks") : std::string("completes"); };
  t.rows.push_back({"cyclic routes on a ring", dl(f.ib_minhop_deadlocks) + " (min-hop); " + dl(f.ib_updn_deadlocks) + " (Up/Down)",
                    dl(f.roce_cyclic_deadlocks) + " (PFC, shortest path)",
                    f.ib_minhop_deadlocks == f.roce_cyclic_deadlocks ? "even" : "—", "6 (emulated)"});
  const std::string n = f.ai_hosts ? std::to_string(f.ai_hosts) : std::string("N");
  t.rows.push_back({"ring all-reduce busbw at " + n + " hosts, non-blocking (share of the host link)",
                    pct(f.ib_ai_share), pct(f.roce_ai_share), ahead(f.ib_ai_share, f.roce_ai_share, false),
                    "7 (emulated)"});
  t.rows.push_back({"ring all-reduce busbw at " + n + " hosts, 2:1 oversubscribed",
                    pct(f.ib_ai_share_2to1) + " static, " + pct(f.ib_ai_flowlet_2to1) + " flowlets",
                    pct(f.roce_ai_share_2to1) + " static, " + pct(f.roce_ai_flowlet_2to1) + " flowlets",
                    ahead(std::max(f.ib_ai_share_2to1, f.ib_ai_flowlet_2to1),
                          std::max(f.roce_ai_share_2to1, f.roce_ai_flowlet_2to1), false),
                    "7 (emulated)"});
  const std::string a2a_n = f.a2a_hosts ? std::to_string(f.a2a_hosts) : std::string("N");
  t.rows.push_back({"all-to-all busbw at " + a2a_n + " hosts, non-blocking", pct(f.ib_a2a_share),
                    pct(f.roce_a2a_share) + " (" + count(f.roce_a2a_pauses) + " PFC pauses)",
                    ahead(f.ib_a2a_share, f.roce_a2a_share, false), "7 (emulated)"});
  t.rows.push_back({"all-to-all at " + a2a_n + " hosts, per-packet adaptive routing over go-back-N RC",
                    pct(f.ib_a2a_pp_share),
                    pct(f.roce_a2a_pp_share), ahead(f.ib_a2a_pp_share, f.roce_a2a_pp_share, false),
                    "7 (emulated)"});
  t.rows.push_back({"settings the lossless runs needed beyond the defaults", lossless_settings(Flavour::kIb),
                    lossless_settings(Flavour::kRoceEcn), "—", "the lab configurations of 1-6"});
  t.rows.push_back({"counters that showed each cause", "PortXmitWait (3), PortXmitDiscards (5), credit-loop detector (6)",
                    "PFC pause frames (3, 6), CNPs (2, 3), PortXmitDiscards (3, 5)", "—", "the tables above"});
  s.tables.push_back(std::move(t));
  return s;
}

}  // namespace vf::compare
