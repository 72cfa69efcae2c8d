// The fabrics the virtual-time scenarios compare, set up as fabricd sets them
// up by default: InfiniBand with credits on every VL; RoCEv2 trusting DSCP,
// RoCE (DSCP 26, ECT(0)) on lossless priority 3, with or without ECN
// marking + DCQCN, or plain lossy Ethernet.
#pragma once

#include <string>

#include "compare/analytic.hpp"
#include "sim/lab.hpp"

namespace vf::compare {

enum class Flavour {
  kIb,        // credits per VL
  kRocePfc,   // PFC on priority 3
  kRoceEcn,   // PFC + ECN marking + DCQCN (fabricd's default)
  kRoceLossy  // no PFC, no ECN
};

const char* flavour_name(Flavour f);
inline bool is_ib(Flavour f) { return f == Flavour::kIb; }

inline constexpr uint8_t kRocePrio = 3;
inline constexpr uint8_t kRoceTclass = 106;  // DSCP 26, ECT(0)

// Host and switch ports' QoS for a flavour (Ethernet fields only).
dp::PortConfig port_config(Flavour f);
engine::DcqcnConfig dcqcn_config(Flavour f);

struct LinkSpec {
  uint64_t rate_bps;
  Nanos delay_ns;
  uint32_t mtu;  // IB: the link MTU (4096); Ethernet: the IP MTU (1500, 9000)
};

// A single-switch lab of `hosts` vHCAs.
sim::LabConfig single_switch(Flavour f, unsigned hosts, const LinkSpec& l, Nanos switch_latency_ns);

// The path MTU a flavour's vHCAs use on `l`, as IBV_MTU_* and in bytes.
uint32_t path_mtu(Flavour f, const LinkSpec& l);
ibv_mtu ibv_path_mtu(uint32_t bytes);

// RoCEv2: every vHCA's neighbour cache holds every other vHCA's MAC, as the
// kernel resolves a RoCE RC QP's destination MAC at modify-to-RTR time on
// hardware (the lab's vHCAs would otherwise resolve on their first packets,
// parking a few and dropping the rest of the first burst).
void resolve_neighbours(sim::FabricLab& lab);

// Runs the lab until `done` or until `until`, and then leaves its clock at
// `until` even when no timer fell due before it (a stuck fabric arms none), so
// a caller stepping in fixed intervals measures time, not iterations.
// Returns done().
bool run_for(sim::FabricLab& lab, const std::function<bool()>& done, Nanos until);

// Frames buffered in every switch of the lab right now (bytes queued for egress).
uint64_t switch_buffered_bytes(sim::FabricLab& lab);

// Packets discarded anywhere in the lab's switches (egress and ingress).
uint64_t switch_discards(sim::FabricLab& lab);

// Every vHCA's engine counters, summed.
struct EngineTotals {
  uint64_t retransmitted = 0, timeouts = 0, seq_naks = 0, cnp_handled = 0, cnp_sent = 0;
};
EngineTotals engine_totals(sim::FabricLab& lab);

// PFC frames the switches sent (Ethernet; 0 on IB).
uint64_t switch_pauses_sent(sim::FabricLab& lab);

// PortXmitWait of every vHCA port, ns.
uint64_t hosts_xmit_wait_ns(sim::FabricLab& lab);

}  // namespace vf::compare
