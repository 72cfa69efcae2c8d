// Per-port statistics in the names users know: the IBA PMA PortCounters /
// PortCountersExtended attributes, plus Ethernet-style totals and per-class
// queue state. The lcore writes PortCounters; the control thread calls
// snapshot() and gets plain numbers.
//
// Conventions:
//  - PortXmitData / PortRcvData are in 4-octet words like the PMA (total bytes
//    / 4). Bytes are the frame as stored (IB: LRH..VCRC; Ethernet: without FCS,
//    preamble or IFG), i.e. what a capture shows. 64-bit, never saturating
//    (the PortCountersExtended behaviour).
//  - Link-level control frames (IB flow-control packets, PAUSE/PFC) are not in
//    the packet/data totals, as the PMA excludes link packets; they are counted
//    under classes[kCtrlClass].
//  - PortXmitWait is in nanoseconds (the PMA leaves the tick implementation-
//    defined): time during which the wire was free and a frame was eligible to
//    go but every eligible queue was held by its egress gate. Per class
//    (classes[c].xmit_wait_ns, the PMA's PortVLXmitWait): the part of that
//    time during which class c was one of the held queues.
//  - PortXmitDiscards: frames dropped on the way out — egress queue full, frame
//    larger than the port's MTU allows, port not connected.
//  - PortRcvErrors: malformed frames (runt, bad VL, decapsulation errors at an
//    HCA) and, at an HCA port, frames not addressed to it.
//  - PortRcvSwitchRelayErrors: a switch could not forward the frame (unknown or
//    unset DLID / unknown destination MAC, route back out the ingress port,
//    SL mapped to VL15).
//  - rcv_discards: refused at ingress (switch memory full, flow-control admission, no receiver).
//  - LinkDownedCounter: times the link went down (an operator's port down,
//    a link taken down), as the PMA counts link training failing.
//  - VL15Dropped: management packets the VL15 buffer had no room for (IB).
//  - ExcessiveBufferOverrunErrors: data packets that overran their VL's
//    receive buffer (IB; a correct credit sender never causes one). The PMA
//    counts runs of consecutive overruns; vfabric counts every overrun.
#pragma once

#include <array>
#include <cstdint>

#include "dataplane/fabric/counter.hpp"
#include "core/counter_def.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

struct ClassCounters {
  Counter depth_pkts;       // queued for egress now
  Counter depth_bytes;
  Counter max_depth_pkts;   // high-water mark
  Counter xmit_pkts;
  Counter xmit_bytes;
  Counter xmit_discards;
  Counter rcv_pkts;
  Counter rcv_bytes;
  Counter rx_buffered_bytes;  // receive buffer held by frames of this class
  Counter rx_buffered_peak;
  // The share of PortXmitWait during which this class's head was held by its
  // gate (the IBA's PortVLXmitWait); an ongoing wait starts at wait_since.
  Counter xmit_wait_ns;
  Counter wait_since;  // kNever when not waiting

  ClassCounters() { wait_since.set(kNever); }
};

struct PortCounters {
  Counter xmit_bytes;
  Counter rcv_bytes;
  Counter xmit_pkts;
  Counter rcv_pkts;
  Counter xmit_discards;
  Counter rcv_errors;
  Counter rcv_switch_relay_errors;
  Counter rcv_discards;
  Counter vl15_dropped;               // VL15 buffer full (IB)
  Counter excessive_buffer_overruns;  // a data VL buffer overrun (IB; PortRcvErrors too)
  Counter link_downed;                // the link went down (Port::link_state)
  Counter xmit_wait_ns;  // completed waits; an ongoing one starts at wait_since
  Counter wait_since;    // kNever when not waiting
  std::array<ClassCounters, kNumClasses> cls;

  PortCounters() { wait_since.set(kNever); }
};

struct ClassSnapshot {
  uint64_t depth_pkts, depth_bytes, max_depth_pkts;
  uint64_t xmit_pkts, xmit_bytes, xmit_discards;
  uint64_t rcv_pkts, rcv_bytes;
  uint64_t rx_buffered_bytes, rx_buffered_peak;
  uint64_t xmit_wait_ns;
};

struct PortSnapshot {
  // IBA PMA names.
  uint64_t port_xmit_data;  // 4-octet words
  uint64_t port_rcv_data;   // 4-octet words
  uint64_t port_xmit_pkts;
  uint64_t port_rcv_pkts;
  uint64_t port_xmit_discards;
  uint64_t port_rcv_errors;
  uint64_t port_rcv_switch_relay_errors;
  uint64_t port_xmit_wait_ns;
  uint64_t port_rcv_discards;  // refused at ingress: no buffer, flow control, no receiver
  uint64_t vl15_dropped;
  uint64_t excessive_buffer_overrun_errors;
  uint64_t link_downed;
  // Ethernet-style totals (same events, bytes not words).
  uint64_t tx_bytes, rx_bytes, tx_packets, rx_packets;
  uint64_t tx_drops;  // = port_xmit_discards
  uint64_t rx_drops;  // errors + relay errors + admission discards
  std::array<ClassSnapshot, kNumClasses> classes;
};

// `now` (the dataplane clock's current time as the caller knows it) lets an
// ongoing wait count; pass 0 to report completed waits only.
PortSnapshot snapshot(const PortCounters& c, Nanos now);

// Clears the counters, as a PMA Set(PortCounters) does (perfquery -R): every
// count restarts from 0, levels (queue depth, buffer held) stay, a high-water
// mark restarts from the level now, and a wait in progress counts from `now`.
// Lcore only.
void reset(PortCounters& c, Nanos now);

// The IBA PMA counters of a PortSnapshot, by their PMA names (sysfs: the
// kernel's ports/N/counters/ files).
extern const CounterTable kPortCounters;

// One class's counters and levels in a ClassSnapshot (PortSnapshot::classes[c]);
// formats label them with class_name.
extern const CounterTable kClassCounters;
// "vl0".."vl7", "vl15", "link_ctrl" on IB; "prio0".."prio7", "link_ctrl" on
// Ethernet, where kMgmtClass is unused (nullptr).
const char* class_name(LinkLayer ll, unsigned cls);

}  // namespace vf::dp
