// How a virtual-time fabric advances: the loop fabricd's lcore runs, with
// the wall clock taken out.
#pragma once

#include <functional>

#include "core/scheduler.hpp"

namespace vf::sim {

// Virtual time as the daemon's lcore runs it: poll the engines until idle
// (`settle`), fire the next timers, repeat -- until `done`, or until nothing
// is due before `limit`. Returns done().
inline bool run_virtual(vf::Scheduler& sched, const std::function<void()>& settle,
                        const std::function<bool()>& done, vf::Nanos limit) {
  settle();
  while (!done()) {
    if (sched.idle() || sched.next_deadline() > limit) return done();
    sched.run_next();
    settle();
  }
  return true;
}

}  // namespace vf::sim
