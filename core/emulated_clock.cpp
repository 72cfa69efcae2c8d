#include "core/emulated_clock.hpp"

namespace vf {

EmulatedClock::EmulatedClock(double dilation, Limits limits)
    : dilation_(dilation < 1 ? 1 : dilation), limits_(limits) {}

void EmulatedClock::begin(uint64_t real_ns, Nanos at) {
  origin_.store(0, std::memory_order_relaxed);
  const Nanos r = raw(real_ns) - drift_.load(std::memory_order_relaxed);
  origin_.store(r > at ? r - at : 0, std::memory_order_relaxed);
  if (last_ < at) last_ = at;
}

Nanos EmulatedClock::tick(uint64_t real_ns, Nanos next_deadline) {
  uint64_t drift = drift_.load(std::memory_order_relaxed);
  Nanos now = raw(real_ns) - drift;
  if (now < last_) now = last_;  // a clock step the monotonic clock should not make
  if (next_deadline != kNever && now > next_deadline) {
    const Nanos late = now - next_deadline;
    if (late > limits_.stall) {
      stalls_.store(stalls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      stalled_.store(stalled_.load(std::memory_order_relaxed) + late, std::memory_order_relaxed);
      if (late > max_stall_.load(std::memory_order_relaxed)) max_stall_.store(late, std::memory_order_relaxed);
    }
    if (late > limits_.max_lag) {
      const Nanos given_up = late - limits_.max_lag;
      drift += given_up;
      now -= given_up;
      drift_.store(drift, std::memory_order_relaxed);
    }
  }
  last_ = now;
  return now;
}

Nanos EmulatedClock::peek(uint64_t real_ns) const {
  const uint64_t drift = drift_.load(std::memory_order_relaxed);
  const Nanos r = raw(real_ns);
  return r > drift ? r - drift : 0;
}

ClockStats EmulatedClock::stats() const {
  return {stalls_.load(std::memory_order_relaxed), stalled_.load(std::memory_order_relaxed),
          max_stall_.load(std::memory_order_relaxed), drift_.load(std::memory_order_relaxed)};
}

}  // namespace vf
