// A statistics counter written only by the dataplane lcore and read by the
// control thread. Relaxed atomic load/store (not fetch_add) keeps the single
// writer free of locked instructions while making the cross-thread read
// race-free; a reader may see a value a few packets old, never a torn one.
#pragma once

#include <atomic>
#include <cstdint>

namespace vf::dp {

class Counter {
 public:
  void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  void sub(uint64_t n) { v_.store(v_.load(std::memory_order_relaxed) - n, std::memory_order_relaxed); }
  void set(uint64_t n) { v_.store(n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }
  // Raises a high-water mark.
  void max(uint64_t n) {
    if (n > get()) set(n);
  }

 private:
  std::atomic<uint64_t> v_{0};
};

}  // namespace vf::dp
