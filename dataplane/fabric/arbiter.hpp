// The transmit arbiter: which egress class goes next when the wire is free.
// One function over plain state, so the Port stays ignorant of the policy.
//
// Always first: kCtrlClass (link control, never gated), then kMgmtClass (VL15,
// not flow controlled, strictly ahead of data as the IBA requires). Then the
// data classes, by one of two policies:
//
//  * IB VL arbitration (IBA Vol. 1 §7.6.9), when the port has a VL record
//    (PortQos): a high- and a low-priority table of (VL, weight) entries,
//    weight in 64-byte units, served weighted round robin: the current entry
//    sends packets of its VL while its weight lasts (the packet that starts
//    within the weight goes out whole), then the next entry; an entry whose
//    VL has nothing eligible, or no credit, passes its turn (weight 0 entries
//    never send). The high table goes first until it has sent
//    LimitOfHighPriority x 4 KiB (255 = unlimited; 0 = one packet) since the
//    low table last sent; then one low-priority packet goes if there is one.
//    A VL in no table with a non-zero weight never sends.
//  * Ethernet ETS (802.1Qaz, ets.hpp), when the port has a plan: strict
//    traffic classes first, then deficit weighted round robin by bandwidth.
//  * Round robin, one frame per data class per turn (Ethernet without ETS;
//    IB ports without a record).
// A class competes only if its head is eligible (store-and-forward latency
// elapsed) and its egress gate is open.
#pragma once

#include <array>
#include <cstdint>

#include "core/port_qos.hpp"
#include "dataplane/fabric/egress_queue.hpp"
#include "dataplane/fabric/ets.hpp"
#include "dataplane/fabric/port_hooks.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

// Where one VLArbitration table's weighted round robin stands.
struct VlArbCursor {
  uint8_t entry = 0;  // current entry
  int32_t left = 0;   // bytes the current entry may still start; <= 0: not started
};

struct ArbiterState {
  uint8_t rr_next = 0;  // round robin: first data class to look at next time
  VlArbCursor high, low;
  uint64_t high_since_low = 0;  // bytes the high table sent since the low one last did
  bool last_high = false;       // the pick just made came from the high table
  EtsCursor ets;
};

struct ArbiterPick {
  int cls = -1;                  // class to send, or -1
  bool gated = false;            // an eligible frame was held by its gate
  Nanos next_eligible = kNever;  // earliest not-yet-eligible head
};

// Picks a class. The caller transmits the pick's head at once and then calls
// arbiter_sent() with its length (weights, deficits and the high limit count
// bytes). `qos` (IB) or `ets` (Ethernet) picks the policy; neither: round robin.
ArbiterPick arbitrate(ArbiterState& st, const std::array<EgressQueue, kNumClasses>& q,
                      const EgressGate& gate, const PortQos* qos, const EtsPlan* ets, Nanos now);
void arbiter_sent(ArbiterState& st, const PortQos* qos, unsigned cls, uint32_t bytes);

}  // namespace vf::dp
