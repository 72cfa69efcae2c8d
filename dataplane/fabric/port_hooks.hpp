// Where features plug into a Port, as small strategies (a context pointer and
// plain function pointers: one indirect call per frame, no virtual hierarchy,
// null = default behaviour). Each concern has its own place:
//   EgressGate    link-level flow control, sender side (credits, PFC pause)
//   IngressHooks  link-level flow control, receiver side
//   EnqueueHook   egress queue admission (ECN marking, WRED)
//   LinkControl   link-level protocol frames built as they go on the wire
//   LinkStateHook the link retrained (down, then up again)
// and outside the port: a switch's SharedBuffer (shared_buffer.hpp), and a
// link direction's WireStage tap and impairment (wire_stage.hpp).
//
// EgressGate — may this class send a frame of this size now?
//   default (both null): always open, i.e. a lossy link.
//   The arbiter asks may_transmit(cls, bytes) for the head of each eligible
//   queue and calls on_transmit(cls, bytes) when a frame goes on the wire. A
//   closed gate leaves the frame queued and, if nothing else can go, counts
//   PortXmitWait. Whoever opens a gate again calls Port::wake().
//   The control class (kCtrlClass) and VL15 (kMgmtClass) bypass the gate.
//
// IngressHooks — what the port does with frames arriving from its link.
//   control(m): sees every frame first; returns true when it consumed a
//     link-level control frame (it then owns m). Default: none.
//   admit(cls, bytes): the frame wants to occupy `bytes` of this port's receive
//     buffer for `cls`; false drops it (counted PortRcvDiscards-style as rx
//     drops). Default: admit everything.
//   release(cls, bytes): that frame left the receive buffer — a switch sent it
//     on (or dropped it), an HCA port handed it to the engine.
//   The Port itself tracks bytes buffered per class (ClassCounters), so hooks
//   see the same numbers the counters show.
//
// How the next steps slot in without reshaping the Port:
//  * IB credit-based flow control (IBA 7.9), as built: one IbCredits object
//    per port (ib_credits.hpp) implements the gate, the ingress hooks and the
//    link control source for that port.
//    - Sender side (EgressGate of port P): per data VL, FCTBS (blocks sent) and
//      FCCL (credit limit) from the peer; may_transmit = (FCTBS + ceil(bytes/64))
//      <= FCCL mod 4096; on_transmit adds the blocks. VL15 bypasses.
//    - Receiver side (IngressHooks of the peer Q): admit checks the VL's buffer
//      (a correct sender never overruns it); release frees blocks and, on a
//      timer or threshold, Q asks for a flow-control packet (Op, FCTBS, VL,
//      FCCL; 6 bytes) with Port::request_control — built when the wire is
//      free, so it carries the newest FCCL, and ahead of every queue.
//    - P's control hook recognises the FCP, updates FCCL and calls P.wake().
//  * Ethernet PFC (802.1Qbb). Receiver side (IngressHooks of switch/HCA port Q):
//    admit accounts per priority, and crossing XOFF sends a PAUSE frame (0x8808,
//    opcode 0x0101, class-enable vector, 8 timers) via send_control; admit
//    beyond XOFF+headroom returns false (a drop, counted); release crossing XON
//    sends timer 0. Sender side (P): the control hook parses the PAUSE, sets
//    paused_until[prio] and arms a timer that calls P.wake(); may_transmit =
//    now >= paused_until[prio]. Pause frames are counted per priority there.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

namespace vf::dp {

class Port;

struct EgressGate {
  void* ctx = nullptr;
  bool (*may_transmit)(void* ctx, unsigned cls, uint32_t bytes) = nullptr;
  void (*on_transmit)(void* ctx, unsigned cls, uint32_t bytes) = nullptr;

  bool open(unsigned cls, uint32_t bytes) const {
    return !may_transmit || may_transmit(ctx, cls, bytes);
  }
  void sent(unsigned cls, uint32_t bytes) const {
    if (on_transmit) on_transmit(ctx, cls, bytes);
  }
};

// EnqueueHook — a data frame is about to join egress queue `cls`, which
// already holds depth_pkts frames / depth_bytes: where ECN marking (set CE in
// place) and WRED (false = drop, counted as PortXmitDiscards) sit. Link
// control frames and VL15 bypass it. Default: every frame queues unchanged.
struct EnqueueHook {
  void* ctx = nullptr;
  bool (*on_enqueue)(void* ctx, unsigned cls, rte_mbuf* m, uint32_t depth_pkts, uint64_t depth_bytes) = nullptr;

  bool admit(unsigned cls, rte_mbuf* m, uint32_t depth_pkts, uint64_t depth_bytes) const {
    return !on_enqueue || on_enqueue(ctx, cls, m, depth_pkts, depth_bytes);
  }
};

// LinkControl — a link-level protocol's frames, built when the wire is free
// (not queued: an IB flow-control packet must carry the credit limit of the
// moment it leaves, a PFC frame its current timers). The protocol calls
// Port::request_control(); the port then calls next() ahead of every queue,
// while the wire is free, until it returns null. They are counted under
// kCtrlClass like queued control frames.
struct LinkControl {
  void* ctx = nullptr;
  rte_mbuf* (*next)(void* ctx) = nullptr;
};

// LinkStateHook — the link went down (up = false) or trained up again: flow
// control starts from a clean state (IBA: credit initialisation).
struct LinkStateHook {
  void* ctx = nullptr;
  void (*changed)(void* ctx, bool up) = nullptr;
};

struct IngressHooks {
  void* ctx = nullptr;
  bool (*control)(void* ctx, Port& port, rte_mbuf* m) = nullptr;
  bool (*admit)(void* ctx, unsigned cls, uint32_t bytes) = nullptr;
  void (*release)(void* ctx, unsigned cls, uint32_t bytes) = nullptr;
  // admit/release account the switch's SharedBuffer themselves (PFC, whose
  // lossless groups use its headroom); otherwise the port takes the shared
  // part before admit and gives it back after release.
  bool buffers = false;
};

}  // namespace vf::dp
