// What became of the MADs apps sent through one vHCA's umad port, as plain
// numbers: the umad server counts what it handled on the control thread,
// the MAD backend what found no answer on the lcore; the daemon adds the two
// for /metrics and fabricctl hca list (kUmadCounters).
#pragma once

#include <cstdint>

#include "core/counter_def.hpp"

namespace vf {

struct UmadStats {
  uint64_t sent = 0;        // MADs apps sent
  uint64_t answered = 0;    // responses delivered
  uint64_t timeouts = 0;    // requests returned with ETIMEDOUT
  uint64_t rejected = 0;    // malformed messages (the connection is closed)
  uint64_t overflow = 0;    // refused: too many outstanding, or the app reads too slowly
  uint64_t unroutable = 0;  // no path to the destination, or none back
  uint64_t no_agent = 0;    // nobody serves that class there (or the lcore was busy)
  uint64_t refused = 0;     // an agent refused it (SubnSet without the M_Key)
};

extern const CounterTable kUmadCounters;

}  // namespace vf
