// The emulated clock, and what a stall does to it (docs/architecture.md, "The
// clock model").
//
// Emulated time runs at real time / dilation while the dataplane keeps up.
// Every loop pass the owner asks for the time with the earliest deadline
// still pending; if that deadline is more than `max_lag` in the past, the
// loop did not run when it should have (preempted, RT-throttled, stopped):
// the clock gives up everything beyond max_lag, so the fabric resumes where it
// paused instead of inventing the events of a window nobody processed. What
// it gave up is the drift, emulated time's lag behind real time; a lateness
// above `stall` counts as a stall. run_due() then works through what is due
// in deadline order, with ring work after each deadline, so an ACK owed at
// t goes out before a retransmission timer due after t fires.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/scheduler.hpp"

namespace vf {

struct ClockStats {
  uint64_t stalls = 0;        // passes that found due work more than `stall` late
  uint64_t stalled_ns = 0;    // their lateness, summed (emulated ns)
  uint64_t max_stall_ns = 0;  // the largest
  uint64_t drift_ns = 0;      // emulated time given up: how far the clock is behind real / dilation
};

class EmulatedClock {
 public:
  struct Limits {
    Nanos max_lag = 1'000'000;  // due work caught up in order; beyond it the clock stops
    Nanos stall = 1'000'000;    // lateness counted as a stall
  };
  explicit EmulatedClock(double dilation, Limits limits);
  explicit EmulatedClock(double dilation = 1) : EmulatedClock(dilation, Limits{}) {}

  // Where the owner's loop starts: emulated time `at` is real time
  // `real_ns`. What passed before (building the fabric) is neither emulated
  // nor drift.
  void begin(uint64_t real_ns, Nanos at);
  // The owner's loop, once a pass: emulated now at real time `real_ns` (ns on
  // a monotonic clock since the start), given the earliest pending deadline
  // (kNever: nothing pending, idle time is no stall). Single caller.
  Nanos tick(uint64_t real_ns, Nanos next_deadline);
  // Any thread: emulated time at `real_ns` under the drift so far.
  Nanos peek(uint64_t real_ns) const;
  // Any thread; each field is read on its own (relaxed).
  ClockStats stats() const;
  double dilation() const { return dilation_; }

 private:
  Nanos raw(uint64_t real_ns) const {
    const Nanos r = Nanos(double(real_ns) / dilation_), o = origin_.load(std::memory_order_relaxed);
    return r > o ? r - o : 0;
  }

  double dilation_;
  Limits limits_;
  // Written only by tick()'s caller; read by any thread.
  std::atomic<uint64_t> drift_{0}, stalls_{0}, stalled_{0}, max_stall_{0};
  std::atomic<uint64_t> origin_{0};  // emulated ns before begin(), not counted
  Nanos last_ = 0;  // never goes backwards
};

// Lateness from which a pass works after each deadline: a stall, when an
// ACK owed since before it must go out before later timers fire. Below it
// a pass is an ordinary, if host-bound, turn of the loop: working after
// every deadline there breaks ACK coalescing and DMA batching and cost two
// thirds of the bandwidth and message rate (vfabric-bench, 64 KiB SEND
// 9.2 -> 2.7 Gb/s), while timers that fire within 1 ms of their ACKs are
// not the ones that time out.
inline constexpr Nanos kCatchUpAfter = 1'000'000;

// One pass of a dataplane loop at emulated time `now`: every timer due by
// then fires in deadline order, and `work` (the apps' rings, owed ACKs) runs
// after each deadline, as it would have if the loop had run then. Returns
// the number of deadlines worked through.
template <typename Work>
std::size_t run_due(Scheduler& sched, Nanos now, Work&& work) {
  std::size_t n = 0;
  for (Nanos next = sched.next_deadline(); next <= now; next = sched.next_deadline()) {
    sched.advance_to(next);
    work();
    ++n;
  }
  sched.advance_to(now);
  return n;
}

// What the lcore runs each pass: the due timers, with `work` after each
// deadline when the pass is catching up (its earliest due deadline more
// than `catch_up_after` behind `now`; 0: any late pass, fabricd's
// `catch_up: exact`), else all at once, `work` left to the pass. True if any
// timer fired.
template <typename Work>
bool run_pass_timers(Scheduler& sched, Nanos now, Work&& work, Nanos catch_up_after = kCatchUpAfter) {
  const Nanos due = sched.next_deadline();
  if (due != kNever && now > due && now - due > catch_up_after) return run_due(sched, now, work) > 0;
  return sched.advance_to(now) > 0;
}

}  // namespace vf
