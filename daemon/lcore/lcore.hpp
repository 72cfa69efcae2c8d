// The dataplane lcore: one thread runs every engine, link and switch of the
// daemon, in bursts, with no locks on its path. The control thread reaches it
// only through post(). It sleeps when idle (doorbell / wake eventfds, or the
// next timer) so a 2-core machine stays usable.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "daemon/telemetry/lcore_stats.hpp"
#include "daemon/lcore/spsc_queue.hpp"
#include "dataplane/fabric/counter.hpp"
#include "core/emulated_clock.hpp"
#include "core/scheduler.hpp"
#include "device/abi/vhca_abi.h"

namespace vf {

class Lcore {
 public:
  using Task = std::function<void()>;
  using Poller = std::function<bool()>;  // true if it did work

  // catch_up_after: lateness from which a pass works after each deadline
  // (run_pass_timers); 0 keeps exact emulated order after any late pass.
  Lcore(double time_dilation, Nanos catch_up_after);
  ~Lcore();
  Lcore(const Lcore&) = delete;
  Lcore& operator=(const Lcore&) = delete;

  Scheduler& scheduler() { return sched_; }
  void add_poller(Poller p) { pollers_.push_back(std::move(p)); }

  // Control thread -> lcore. Returns false only if the queue is full.
  bool post(Task t);

  // The doorbell eventfd apps write, and a read-only fd of the status page
  // they map; both are handed to every provider context.
  int doorbell_fd() const { return doorbell_fd_; }
  int status_fd_readonly() const { return status_ro_fd_; }

  // Runs until stop(); call on the lcore thread.
  void run();
  void stop();

  // Emulated time now: the real clock scaled by the dilation factor, less
  // what stalls gave up (core/emulated_clock.hpp).
  Nanos clock_now() const;

  // Any thread: single-writer counters, read relaxed (dp::Counter).
  LcoreSnapshot snapshot() const {
    const ClockStats c = clock_.stats();
    return {loops_.get(), sleeps_.get(), wakeups_.get(), tasks_run_.get(), clock_now(),
            c.stalls,     c.stalled_ns,  c.max_stall_ns,  c.drift_ns};
  }

 private:
  static void make_realtime();
  bool run_tasks();
  bool poll_all();
  void work_due();
  void sleep_until_work();

  Scheduler sched_;
  std::vector<Poller> pollers_;
  SpscQueue<Task*> tasks_{1024};
  std::atomic<bool> stop_{false};
  int doorbell_fd_ = -1;
  int wake_fd_ = -1;
  int status_fd_ = -1;
  int status_ro_fd_ = -1;
  vhca_engine_status* status_ = nullptr;
  EmulatedClock clock_;
  const Nanos catch_up_after_;
  uint64_t start_ns_;
  // Counted without locked instructions: the lcore is the only writer.
  dp::Counter loops_, sleeps_, wakeups_, tasks_run_;
};

}  // namespace vf
