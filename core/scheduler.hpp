// One clock and timer queue drives every timer in the dataplane and the engine
// (serialization, propagation, pause, credit return, retransmit, RNR, DCQCN).
// The owner advances time: the daemon's lcore from the real clock (optionally
// dilated), unit tests by hand, so timing logic is tested deterministically.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vf {

using Nanos = uint64_t;
inline constexpr Nanos kNever = UINT64_MAX;

// Embedded in its owner (QP, link, port): arming never allocates once the heap
// has grown to the number of live timers.
struct Timer {
  using Fire = void (*)(Timer& self, Nanos now);
  explicit Timer(Fire f = nullptr) : fire(f) {}
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  Fire fire;
  Nanos deadline = kNever;
  uint32_t heap_index = kNotArmed;
  static constexpr uint32_t kNotArmed = UINT32_MAX;
  bool armed() const { return heap_index != kNotArmed; }
};

class Scheduler {
 public:
  explicit Scheduler(Nanos start = 0) : now_(start) {}
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  Nanos now() const { return now_; }

  // (Re)arms `t` to fire at `deadline` (clamped to now). Re-arming moves it.
  void arm(Timer& t, Nanos deadline);
  void arm_after(Timer& t, Nanos delay) { arm(t, now_ + delay); }
  void disarm(Timer& t);

  Nanos next_deadline() const { return heap_.empty() ? kNever : heap_.front()->deadline; }
  bool idle() const { return heap_.empty(); }
  std::size_t armed_count() const { return heap_.size(); }

  // Moves time forward to `t` (never backwards), firing every timer due on the
  // way in deadline order with now() equal to its deadline. Returns timers fired.
  std::size_t advance_to(Nanos t);
  // Virtual-time helper: advance to the next deadline and fire everything due then.
  std::size_t run_next();
  // Virtual-time helper: run until nothing is armed or `limit` is reached.
  std::size_t run_until_idle(Nanos limit = kNever);

  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  void sift_up(uint32_t i);
  void sift_down(uint32_t i);
  void place(uint32_t i, Timer* t) {
    heap_[i] = t;
    t->heap_index = i;
  }
  void remove_at(uint32_t i);

  Nanos now_;
  std::vector<Timer*> heap_;
};

}  // namespace vf
