#include "sim/run_loop.hpp"

namespace vf::sim {
namespace {

// A flow that starts later needs the clock to stop there even when no
// frame or timer is due: this timer only marks the instant.
void nothing(Timer&, Nanos) {}

}  // namespace

LoopEnd run_plan(ConfigFabric& f, PlanRun& run, const std::atomic<bool>& stop, Nanos limit, LoopStats& st,
                 const std::function<void(const LoopStats&)>& progress, std::chrono::milliseconds every) {
  using Clock = std::chrono::steady_clock;
  // Wall time adds up over the iterations a caller runs.
  const Clock::time_point t0 = Clock::now() - st.wall;
  Clock::time_point next_report = t0 + every;
  Timer wake(nothing);
  struct Disarm {
    Scheduler& s;
    Timer& t;
    ~Disarm() { s.disarm(t); }
  } disarm{f.sched, wake};
  std::vector<size_t> polled;
  bool every_rank = true;  // at the start, and when a flow's start time came
  for (uint64_t turn = 1;; ++turn) {
    // Engines and apps until neither has work at this instant; only the
    // engines with work, and the ranks whose engines ran.
    for (;;) {
      polled.clear();
      const bool engines = f.poll_active(polled);
      const bool apps = every_rank ? run.poll() : run.poll(polled);
      every_rank = false;
      ++st.passes;
      if (!engines && !apps) break;
    }
    if (run.done()) break;
    if (stop.load(std::memory_order_relaxed)) return st.wall = Clock::now() - t0, LoopEnd::Stopped;
    if (const Nanos at = run.next_start(); at != kNever && (!wake.armed() || wake.deadline > at)) f.sched.arm(wake, at);
    if (f.sched.idle()) return st.wall = Clock::now() - t0, LoopEnd::Stuck;
    if (f.sched.next_deadline() > limit) return st.wall = Clock::now() - t0, LoopEnd::TimeLimit;
    const bool flow_due = wake.armed() && wake.deadline == f.sched.next_deadline();
    st.events += f.sched.run_next();
    every_rank = flow_due;
    if ((turn & 1023) == 0 && Clock::now() >= next_report) {
      st.wall = Clock::now() - t0;
      progress(st);
      next_report = Clock::now() + every;
    }
  }
  st.wall = Clock::now() - t0;
  return LoopEnd::Done;
}

}  // namespace vf::sim
