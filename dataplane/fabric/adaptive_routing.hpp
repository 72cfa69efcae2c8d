// Adaptive routing: a switch choosing, per packet or per flowlet, among the
// equal-cost egress ports its control plane gave it, by how full their
// queues are -- as AI fabrics do at scale (InfiniBand's adaptive routing
// groups, Ethernet's packet spraying and flowlet switching).
//
//  - off: the static choice (the LFT's port; the ECMP hash's member).
//  - per-packet: every packet takes the least-loaded port of its group.
//    Packets of one flow may then arrive out of order.
//  - flowlet: a flow keeps its port while its packets follow each other
//    closer than `flowlet_gap`; after a longer gap (its earlier packets have
//    drained, so reordering is unlikely) it takes the least-loaded port.
//
// Load is the number of frames queued on the candidate's egress class.
// Among equally loaded ports the static one wins, then the next ones after
// it in group order -- so an idle fabric routes exactly as a static one.
//
// A flowlet table is a fixed array indexed by the flow hash (collisions
// share a flowlet, as in switch hardware): no allocation on the fast path.
#pragma once

#include <cstdint>
#include <vector>

#include "core/scheduler.hpp"
#include "dataplane/fabric/counter.hpp"

namespace vf::dp {

enum class AdaptiveMode : uint8_t { kOff, kPerPacket, kFlowlet };

struct AdaptiveConfig {
  AdaptiveMode mode = AdaptiveMode::kOff;
  Nanos flowlet_gap_ns = 10'000;
};


// What adaptive choices did, per switch (control side reads them).
struct AdaptiveCounters {
  Counter rerouted;  // packets sent on a port other than the static choice
  Counter flowlets;  // flowlets started (flowlet mode): a flow's gap expired and it was placed again
};

class FlowletTable {
 public:
  static constexpr uint32_t kSlots = 4096;  // a power of two

  // The port flow `hash` keeps at `now`, or 0 when its flowlet ended (the
  // caller then places it and calls place()).
  uint16_t current(uint32_t hash, Nanos now, Nanos gap) const {
    if (slots_.empty()) return 0;
    const Slot& s = slots_[hash & (kSlots - 1)];
    return s.port != 0 && now - s.last <= gap ? s.port : 0;
  }
  // Flow `hash` sent a packet on `port` at `now` (a table not enabled
  // remembers nothing).
  void place(uint32_t hash, Nanos now, uint16_t port) {
    if (!slots_.empty()) slots_[hash & (kSlots - 1)] = {now, port};
  }
  // Set-up: a switch in flowlet mode allocates its table once.
  void enable() { slots_.assign(kSlots, Slot{}); }

 private:
  struct Slot {
    Nanos last = 0;
    uint16_t port = 0;
  };
  std::vector<Slot> slots_;
};

// The index, into `load[0..n)`, of the least-loaded candidate, starting at
// `first` (the static choice) so that it wins ties; n > 0. Candidates that
// cannot take the packet carry UINT32_MAX and are chosen only if all do.
inline unsigned least_loaded(const uint32_t* load, unsigned n, unsigned first) {
  unsigned best = first;
  for (unsigned k = 1; k < n; ++k) {
    const unsigned i = (first + k) % n;
    if (load[i] < load[best]) best = i;
  }
  return best;
}

}  // namespace vf::dp
