// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015) at a RoCE vHCA, the way mlx5 runs it:
//
// Notification point (the receiver): a RoCEv2 request packet of an RC/UC QP
// that arrives with CE set makes the QP send a CNP (BTH opcode 0x81 to the
// sender's QP, 16 reserved bytes) at most once per min_time_between_cnps;
// CNPs go out with DSCP cnp_dscp (48: priority 6 under the default map).
//
// Reaction point (the sender), per QP, rates in Mb/s: the first CNP starts
// the limiter at the line rate. Each CNP (at most one cut per
// rate_reduce_monitor_period) sets the target RT = RC, cuts RC by alpha/2
// (never below rpg_min_rate, never by more than rpg_min_dec_fac %) and raises
// alpha = (1-g)alpha + g; every alpha_period without a CNP alpha = (1-g)alpha.
// Rate increase events come from a timer (every rpg_time_reset) and a byte
// counter (every rpg_byte_reset bytes sent); with T and B the events of each
// since the last cut and F = rpg_threshold: fast recovery (T and B < F) RC =
// (RT + RC)/2; hyper increase (T and B > F) RT += (min(T,B) - F) x
// rpg_hai_rate first; additive otherwise RT += rpg_ai_rate first. Back at
// the line rate the limiter lets go. The requester paces the QP at RC
// (pacing.hpp).
//
// Time is evaluated lazily -- whenever the QP sends or a CNP arrives, the
// alpha decays and timer events due since are applied in order -- so there
// is no timer per QP and the result is the same as with one.
#pragma once

#include <cstdint>

#include "core/scheduler.hpp"

namespace vf::engine {

struct DcqcnConfig {
  bool rp_enabled = false;  // reaction point: limit this vHCA's QPs on CNPs
  bool np_enabled = false;  // notification point: answer CE with CNPs
  uint32_t line_rate_mbps = 0;  // the port's rate: where a flow starts and recovers to
  // Names as mlx5's ecn/roce_rp and roce_np knobs; the defaults are mlx5's
  // except two time constants, which are the paper's: mlx5 tunes them for
  // 100 Gb/s NICs (T 300 us, CNPs every 4 us cut a flow on a lab's few-Gb/s
  // link far faster than it can recover), the paper's suit a slower fabric.
  Nanos rpg_time_reset_ns = 55'000;  // the paper's T (mlx5: 300 us)
  uint32_t rpg_byte_reset = 32767;
  // F. mlx5's 1 skips fast recovery (the paper's 5 gives five steps first):
  // measured on the lab incast, 5 cost 11 % of goodput and some fairness.
  uint32_t rpg_threshold = 1;
  uint32_t rpg_ai_rate_mbps = 5;
  uint32_t rpg_hai_rate_mbps = 50;
  uint32_t rpg_min_dec_fac = 50;  // percent
  uint32_t rpg_min_rate_mbps = 1;
  double g = 1.0 / 256;             // the paper's g (mlx5: dce_tcp_g)
  Nanos alpha_period_ns = 55'000;   // the paper's K (mlx5: dce_tcp_rtt)
  Nanos rate_reduce_monitor_period_ns = 4'000;
  Nanos min_time_between_cnps_ns = 50'000;  // the paper's N (mlx5: 4 us)
  uint8_t cnp_dscp = 48;
};

// One QP's reaction-point state.
struct DcqcnRp {
  bool limited = false;  // RC is below the line rate
  double rc = 0, rt = 0, alpha = 1;
  Nanos last_cut = 0, alpha_at = 0, timer_at = 0;
  uint32_t t_events = 0, b_events = 0;
  uint64_t bytes = 0;  // since the last byte event
};

// A CNP arrived at `now`: true when it cut the rate, false when it fell
// inside the monitor period of the last cut.
bool dcqcn_on_cnp(DcqcnRp& rp, const DcqcnConfig& c, Nanos now);
// Applies what is due up to `now` and `bytes_sent` more bytes; returns the
// rate the QP may send at, in Mb/s, or 0 when it is not limited.
uint32_t dcqcn_advance(DcqcnRp& rp, const DcqcnConfig& c, Nanos now, uint64_t bytes_sent);

}  // namespace vf::engine
