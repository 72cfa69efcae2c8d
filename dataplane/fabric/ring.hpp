// A bounded FIFO of plain values in a fixed array, sized once at set-up. Used
// for egress queues and for frames in flight on a link: single lcore, so no
// atomics; power-of-two slots so indexing is a mask, with the capacity limit
// kept exact for queue-depth semantics.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>

namespace vf::dp {

template <class T>
class Ring {
 public:
  explicit Ring(uint32_t capacity = 0) { reset(capacity); }

  // Set-up only: drops whatever was queued (callers drain first).
  void reset(uint32_t capacity) {
    const uint32_t slots = std::bit_ceil(capacity < 1 ? 1u : capacity);
    slots_ = std::make_unique<T[]>(slots);
    mask_ = slots - 1;
    capacity_ = capacity;
    head_ = tail_ = 0;
  }

  uint32_t capacity() const { return capacity_; }
  uint32_t size() const { return tail_ - head_; }
  bool empty() const { return head_ == tail_; }
  bool full() const { return size() >= capacity_; }

  // Callers check full() first; the fast path never grows.
  void push(const T& v) { slots_[tail_++ & mask_] = v; }
  T& front() { return slots_[head_ & mask_]; }
  const T& front() const { return slots_[head_ & mask_]; }
  T pop() { return slots_[head_++ & mask_]; }

 private:
  std::unique_ptr<T[]> slots_;
  uint32_t mask_ = 0;
  uint32_t capacity_ = 0;
  uint32_t head_ = 0;  // free-running; wraps harmlessly modulo 2^32
  uint32_t tail_ = 0;
};

}  // namespace vf::dp
