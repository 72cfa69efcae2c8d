// One egress queue of a port: a FIFO of frames threaded through the mbufs
// themselves. What the port must remember about a queued frame until it
// leaves -- which receive buffer it still occupies upstream inside the same
// switch (released when it goes on the wire, so credits/XON can follow), when
// store-and-forward lets it go, its length -- lives in an mbuf dynamic field
// (QueuedFrame), so the queue has no storage of its own and no fixed size.
//
// That matters for lossless classes: on a credit-controlled IB VL the frames
// an egress queue can hold are bounded by the receive buffers upstream of it
// (every frame holds at least one 64-byte credit block of some ingress VL
// buffer), not by a ring size, and a ring big enough for every ingress buffer
// of a 36-port switch with 8 VLs would be gigabytes. Lossy classes keep an
// exact packet limit (set_limit), checked by the port before push.
#pragma once

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstddef>  // before scheduler.hpp, which uses size_t unqualified
#include <cstdint>

#include "core/scheduler.hpp"

namespace vf::dp {

class Port;

struct QueuedFrame {
  rte_mbuf* next;        // the next frame of the same queue
  Port* origin;          // ingress port holding receive buffer, or null (HCA-originated)
  Nanos eligible_at;     // not before this time (switching latency)
  uint32_t bytes;
  uint8_t origin_cls;
  // Bytes the frame gained inside the switch (an 802.1Q tag pushed: +4,
  // popped: -4): the receive buffer it holds is bytes - grown.
  int8_t grown;
  uint32_t origin_bytes() const { return uint32_t(int64_t(bytes) - grown); }
};

// The dynamic field's offset, registered on first use (after rte_eal_init;
// throws std::runtime_error when DPDK refuses). Ports call it when built.
int queued_frame_offset();

namespace detail {
extern int g_queued_frame_offset;
}

inline QueuedFrame& queued(rte_mbuf* m) {
  return *RTE_MBUF_DYNFIELD(m, detail::g_queued_frame_offset, QueuedFrame*);
}
inline const QueuedFrame& queued(const rte_mbuf* m) {
  return *RTE_MBUF_DYNFIELD(m, detail::g_queued_frame_offset, const QueuedFrame*);
}

class EgressQueue {
 public:
  static constexpr uint32_t kUnbounded = UINT32_MAX;

  // Lossy queues: at most `pkts` frames. kUnbounded: something upstream
  // (credits) bounds the queue.
  void set_limit(uint32_t pkts) { limit_ = pkts; }
  uint32_t limit() const { return limit_; }
  uint32_t size() const { return size_; }
  bool empty() const { return head_ == nullptr; }
  bool full() const { return size_ >= limit_; }

  // Callers check full() first.
  void push(rte_mbuf* m, Port* origin, Nanos eligible_at, uint32_t bytes, uint8_t origin_cls, int8_t grown = 0) {
    queued(m) = QueuedFrame{nullptr, origin, eligible_at, bytes, origin_cls, grown};
    if (tail_)
      queued(tail_).next = m;
    else
      head_ = m;
    tail_ = m;
    ++size_;
  }
  rte_mbuf* front() const { return head_; }
  const QueuedFrame& front_meta() const { return queued(head_); }
  rte_mbuf* pop() {
    rte_mbuf* m = head_;
    head_ = queued(m).next;
    if (!head_) tail_ = nullptr;
    --size_;
    return m;
  }

 private:
  rte_mbuf* head_ = nullptr;
  rte_mbuf* tail_ = nullptr;
  uint32_t size_ = 0;
  uint32_t limit_ = 0;
};

}  // namespace vf::dp
