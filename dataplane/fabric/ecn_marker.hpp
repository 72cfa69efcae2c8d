// RED-style ECN marking on an Ethernet egress port (the DCQCN paper's
// congestion point): a data frame joining the queue of priority p, which
// already holds q bytes, is marked CE with probability 0 below Kmin, rising
// linearly to Pmax at Kmax, and 1 above Kmax -- if it is ECN-capable (ECT);
// other frames pass unmarked, or with WRED on (a lossy priority's profile)
// are dropped, as a switch's ECN+WRED does. It plugs into the port's
// EnqueueHook. The draw comes from a seeded generator per port, so a run in
// virtual time marks the same frames every time.
#pragma once

#include <array>
#include <cstdint>

#include "core/counter_def.hpp"
#include "dataplane/fabric/port.hpp"

namespace vf::dp {

// The marking probability for a queue of `bytes` under `p`.
double ecn_mark_probability(const EcnProfile& p, uint64_t bytes);

struct EcnPrioritySnapshot {
  uint64_t ecn_marked;  // frames this port marked CE on the priority
  uint64_t not_ect;     // frames the profile would have marked but were not ECN-capable
  uint64_t wred_drops;  // of those, dropped by WRED
};
extern const CounterTable kEcnPriorityCounters;

class EcnMarker {
 public:
  EcnMarker(Port& port, const std::array<EcnProfile, 8>& profiles, uint64_t seed);
  ~EcnMarker();
  EcnMarker(const EcnMarker&) = delete;
  EcnMarker& operator=(const EcnMarker&) = delete;

  // On the lcore.
  EcnPrioritySnapshot snapshot(unsigned prio) const { return {marked_[prio], not_ect_[prio], wred_[prio]}; }
  void reset_counters() {
    marked_.fill(0);
    not_ect_.fill(0);
    wred_.fill(0);
  }
  const EcnProfile& profile(unsigned prio) const { return profiles_[prio]; }

 private:
  static bool on_enqueue(void* self, unsigned cls, rte_mbuf* m, uint32_t depth_pkts, uint64_t depth_bytes);
  double draw();

  Port& port_;
  const std::array<EcnProfile, 8> profiles_;
  uint64_t state_;
  std::array<uint64_t, 8> marked_{}, not_ect_{}, wred_{};
};

}  // namespace vf::dp
