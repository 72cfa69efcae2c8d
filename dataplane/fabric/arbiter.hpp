// The transmit arbiter: which egress class goes next when the wire is free.
// Kept to one function over plain state so the IBA VL arbitration tables
// (high/low priority weighted lists and the high-priority limit) replace the
// round-robin without touching the Port.
//
// Order now: kCtrlClass (link control, never gated), then kMgmtClass (VL15,
// not flow controlled, strictly ahead of data as IBA requires), then data
// classes round-robin, one frame per turn, starting after the last one served.
// A class competes only if its head is eligible (store-and-forward latency
// elapsed) and its egress gate is open.
#pragma once

#include <array>
#include <cstdint>

#include "dataplane/fabric/egress_queue.hpp"
#include "dataplane/fabric/port_hooks.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

struct ArbiterState {
  uint8_t rr_next = 0;  // first data class to look at next time
};

struct ArbiterPick {
  int cls = -1;             // class to send, or -1
  bool gated = false;       // an eligible frame was held by its gate
  Nanos next_eligible = kNever;  // earliest not-yet-eligible head
};

// Picks a class and, when it does, advances the round-robin past it (the
// caller transmits the pick's head immediately).
ArbiterPick arbitrate(ArbiterState& st, const std::array<EgressQueue, kNumClasses>& q,
                      const EgressGate& gate, Nanos now);

}  // namespace vf::dp
