// The comparison's scenarios. Each runs the same workload on an InfiniBand
// fabric and on a RoCEv2 fabric of the same topology, link rate and delays,
// fills its report section and leaves its headline figures in Findings, from
// which the closing "when to use which" table is generated.
#pragma once

#include <cmath>
#include <limits>
#include <string>

#include "compare/report.hpp"

namespace vf::compare {

struct Options {
  bool quick = false;
  bool live = true;  // also run unmodified tools against a real fabricd
  std::string fabricd, fabricctl;  // paths
  std::string work_dir;            // the live fabricd's runtime dir lives under it
};

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Headline figures, NaN where a scenario did not measure one.
struct Findings {
  // 1. encapsulation: WRITE goodput as a share of the line rate.
  double ib_share_small = kNaN, roce_share_small = kNaN;  // 64-byte messages
  double ib_share_large = kNaN, roce_share_large = kNaN;  // 1 MiB messages
  double roce_jumbo_share_large = kNaN;
  // 2. latency: 8-byte SEND half round trip.
  double ib_fabric_ns = kNaN, roce_fabric_ns = kNaN;          // emulated, idle
  double ib_loaded_p99_ns = kNaN, roce_loaded_p99_ns = kNaN;  // emulated, beside a bulk flow
  double roce_loaded_p99_pfc_ns = kNaN;                       // ...with PFC alone (no ECN/DCQCN)
  double roce_large_p99_ns = kNaN, roce_large_p99_pfc_ns = kNaN;  // the largest ping, DCQCN / PFC alone
  double ib_large_idle_ns = kNaN, roce_large_idle_ns = kNaN;       // the largest ping, idle
  uint64_t roce_pinger_cnps = 0;                              // 8-byte ping, loaded
  double ib_wall_us = kNaN, roce_wall_us = kNaN;              // wall clock, ib_send_lat t_typical
  // 3. incast at the largest N.
  double ib_incast_wait_ms = kNaN;  // PortXmitWait at the senders
  double ib_incast_drops = kNaN, pfc_incast_drops = kNaN, lossy_incast_drops = kNaN, dcqcn_incast_drops = kNaN;
  double ib_incast_share = kNaN, pfc_incast_share = kNaN, lossy_incast_share = kNaN, dcqcn_incast_share = kNaN;
  double lossy_incast_retx = kNaN, pfc_incast_pauses = kNaN, dcqcn_incast_pauses = kNaN;
  double pfc_incast4_pauses = kNaN, dcqcn_incast4_pauses = kNaN;  // N = 4
  // 4. head-of-line blocking: the victim's goodput relative to running alone.
  double ib_victim_same_vl = kNaN, ib_victim_other_vl = kNaN;
  double roce_victim_same_prio = kNaN, roce_victim_other_prio = kNaN, roce_victim_dcqcn = kNaN;
  // 5. failure: link down to traffic flowing again, ms.
  double ib_recovery_ms = kNaN, roce_recovery_ms = kNaN;  // RoCEv2: rerouted after the SM's delay
  double roce_recovery_now_ms = kNaN;                      // RoCEv2: rerouted at once
  // 6. deadlock.
  int ib_minhop_deadlocks = -1, ib_updn_deadlocks = -1, roce_cyclic_deadlocks = -1;
  // 7. AI collectives: busbw as a share of the host link's bound; ring
  // all-reduce at the largest N (ai_hosts), all-to-all at a2a_hosts.
  unsigned ai_hosts = 0, a2a_hosts = 0;
  double ib_ai_share = kNaN, roce_ai_share = kNaN;                // static, 1:1
  double ib_ai_share_2to1 = kNaN, roce_ai_share_2to1 = kNaN;      // static, 2:1
  double ib_ai_flowlet_2to1 = kNaN, roce_ai_flowlet_2to1 = kNaN;  // flowlets, 2:1
  double ib_a2a_share = kNaN, roce_a2a_share = kNaN;              // static, 1:1
  double ib_a2a_pp_share = kNaN, roce_a2a_pp_share = kNaN;        // per-packet adaptive, 1:1
  double ib_a2a_share_2to1 = kNaN, roce_a2a_share_2to1 = kNaN;    // static, 2:1
  double roce_a2a_pauses = kNaN;
  double ai_worst_tail = 0;  // per-packet runs: the largest last-rank / median-rank finish
};

Section run_encapsulation(const Options& o, Findings& f);
Section run_latency(const Options& o, Findings& f);
Section run_incast(const Options& o, Findings& f);
Section run_hol(const Options& o, Findings& f);
Section run_failure(const Options& o, Findings& f);
Section run_deadlock(const Options& o, Findings& f);
Section run_ai_scale(const Options& o, Findings& f);
Section when_to_use_which(const Findings& f);

}  // namespace vf::compare
