// The simulator's main loop: the engines, the plan's apps and the clock of
// one ConfigFabric, with a wall-clock progress callback and a stop flag (a
// signal handler sets it). Virtual time advances only when neither the
// engines nor the apps have work at the current instant.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "sim/config_fabric.hpp"
#include "sim/plan_run.hpp"

namespace vf::sim {

struct LoopStats {
  uint64_t events = 0;  // timers fired (frames on links, credits, ACK timers, ...)
  uint64_t passes = 0;  // engine passes
  std::chrono::steady_clock::duration wall{};  // over every run_plan call with these stats
};

enum class LoopEnd { Done, Stopped, TimeLimit, Stuck };

// Runs `run` (already start()ed) until it is done, `stop` is set, virtual
// time would pass `limit`, or nothing is left to happen. `progress` is
// called about every `every` of wall time.
LoopEnd run_plan(ConfigFabric& f, PlanRun& run, const std::atomic<bool>& stop, Nanos limit, LoopStats& st,
                 const std::function<void(const LoopStats&)>& progress,
                 std::chrono::milliseconds every = std::chrono::milliseconds(1000));

}  // namespace vf::sim
