// Scenario 7: "when to use which", generated from the figures the other
// scenarios measured. A row whose figures are missing says so.
#include <cmath>

#include "compare/scenarios.hpp"

namespace vf::compare {
namespace {

std::string pct(double x) { return std::isfinite(x) ? num(100 * x, 1) + " %" : "not measured"; }
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

}  // namespace

Section when_to_use_which(const Findings& f) {
  Section s;
  s.id = "summary";
  s.title = "7. When to use which (generated from the figures above)";
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
                    count(f.pfc_incast_drops) + " with PFC, " + count(f.lossy_incast_drops) + " without",
                    ahead(f.ib_incast_drops, f.lossy_incast_drops, true), "3 (emulated)"});
  t.rows.push_back({"8→1 incast goodput (share of the analytic)", pct(f.ib_incast_share),
                    pct(f.pfc_incast_share) + " PFC, " + pct(f.dcqcn_incast_share) + " PFC+DCQCN, " +
                        pct(f.lossy_incast_share) + " lossy",
                    ahead(f.ib_incast_share, f.pfc_incast_share, false), "3 (emulated)"});
  t.rows.push_back({"victim flow kept, same class as an incast", pct(f.ib_victim_same_vl),
                    pct(f.roce_victim_same_prio) + " (PFC+DCQCN: " + pct(f.roce_victim_dcqcn) + ")",
                    ahead(f.ib_victim_same_vl, f.roce_victim_same_prio, false), "4 (emulated)"});
  t.rows.push_back({"victim flow kept, own class", pct(f.ib_victim_other_vl), pct(f.roce_victim_other_prio),
                    ahead(f.ib_victim_other_vl, f.roce_victim_other_prio, false), "4 (emulated)"});
  t.rows.push_back({"outage after a link failure (rerouted after 1 ms)", ms(f.ib_recovery_ms),
                    ms(f.roce_recovery_ms) + " (rerouted at once: " + ms(f.roce_recovery_now_ms) + ")",
                    ahead(f.ib_recovery_ms, f.roce_recovery_ms, true), "5 (emulated)"});
  auto dl = [](int d) { return d < 0 ? std::string("not measured") : d ? std::string("deadlocks") : std::string("completes"); };
  t.rows.push_back({"cyclic routes on a ring", dl(f.ib_minhop_deadlocks) + " (min-hop); " + dl(f.ib_updn_deadlocks) + " (Up/Down)",
                    dl(f.roce_cyclic_deadlocks) + " (PFC, shortest path)", "even: both need loop-free routes",
                    "6 (emulated)"});
  t.rows.push_back({"what must be configured to be lossless", "nothing: credits are always on; the SM's routing must be deadlock-free",
                    "PFC priority, DSCP trust and mapping, headroom per link; ECN thresholds and DCQCN to avoid pause storms and HOL",
                    "InfiniBand", "the configurations these runs used"});
  t.rows.push_back({"operational visibility", "PortXmitWait, PortXmitDiscards, credit-loop detection",
                    "pause frames and durations per priority, ECN marks, CNPs, discards", "even", "counters read above"});
  s.tables.push_back(std::move(t));
  return s;
}

}  // namespace vf::compare
