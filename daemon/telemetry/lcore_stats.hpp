// How the dataplane lcore spends its time, as plain numbers the control
// thread formats (status JSON, Prometheus) through kLcoreCounters. Lcore
// counts into single-writer counters and copies them into this struct.
#pragma once

#include <cstdint>

#include "core/counter_def.hpp"

namespace vf {

struct LcoreSnapshot {
  uint64_t loops;    // passes over tasks and pollers
  uint64_t sleeps;   // times it went to sleep with nothing to do
  uint64_t wakeups;  // times a doorbell, task or timer woke it
  uint64_t tasks;    // control-thread tasks run
  // Emulated time (ns since start) when the snapshot was taken: a metrics
  // snapshot is taken at one instant on the lcore, so counter deltas divided
  // by this gauge's delta are exact rates in emulated time.
  uint64_t emulated_ns;
  // The clock model (core/emulated_clock.hpp): passes that found due work
  // more than 1 ms late, their lateness summed and the largest, and the
  // emulated time given up to stalls (emulated time is this far behind
  // real time / dilation). Figures are host-bound while these grow.
  uint64_t stalls, stalled_ns, max_stall_ns, drift_ns;
};

// Display names are the status reply's keys ("loops" ...), metric names
// carry an lcore_ prefix.
extern const CounterTable kLcoreCounters;

}  // namespace vf
