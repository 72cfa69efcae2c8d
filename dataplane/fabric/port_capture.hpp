// The frames crossing one port, copied on the lcore into a byte ring that the
// control thread drains (`fabricctl capture`). It plugs into the tap seam of
// both directions of the port's link (wire_stage.hpp): what the port sends is
// stamped when its first bit leaves, what it receives when its last bit
// arrives -- emulated time, so serialization and propagation show in a
// capture's time column.
//
// The dataplane never waits for it: a copy that does not fit is dropped and
// counted (`dropped`), the frame itself goes on. Uncaptured links pay one
// predicted-not-taken branch (LinkDirection::send). One producer (the lcore),
// one consumer (the control thread); records never straddle the ring's end.
#pragma once

#include <rte_mbuf.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>

#include "dataplane/fabric/counter.hpp"
#include "dataplane/fabric/wire_stage.hpp"

namespace vf::dp {

// As stored in the ring, followed by `caplen` bytes and padding to 8.
struct CaptureRecord {
  uint64_t ts_ns;    // emulated: sent = first bit left, received = last bit arrived
  uint32_t caplen;   // bytes kept (at most the snap length)
  uint32_t origlen;  // the frame's length
  uint8_t inbound;   // 1: the port received it; 0: the port sent it
  uint8_t pad[7];
};
static_assert(sizeof(CaptureRecord) == 24);

class PortCapture {
 public:
  static constexpr uint32_t kMaxSnaplen = 65535;
  // `ring_bytes` is rounded up to a power of two (at least 256 KiB); `snaplen`
  // (1..kMaxSnaplen) bytes of each frame are kept.
  PortCapture(uint32_t ring_bytes, uint32_t snaplen);
  PortCapture(const PortCapture&) = delete;
  PortCapture& operator=(const PortCapture&) = delete;

  // The taps for the direction the port sends on and the one it receives on.
  WireStage sent_tap() { return WireStage{this, &PortCapture::on_sent}; }
  WireStage received_tap() { return WireStage{this, &PortCapture::on_received}; }
  uint32_t snaplen() const { return snaplen_; }

  // Control thread: hands each record and its bytes to `f`, oldest first,
  // until about `max_bytes` of frame data went out; returns how many.
  template <class F>
  size_t drain(F&& f, size_t max_bytes);

  Counter captured;  // copies made
  Counter dropped;   // frames not copied: the ring was full

 private:
  static WireVerdict on_sent(void* self, rte_mbuf* m, const WireTime& depart, const WireTime&);
  static WireVerdict on_received(void* self, rte_mbuf* m, const WireTime&, const WireTime& arrive);
  void push(const rte_mbuf* m, Nanos ts, bool inbound);
  // Where a record of `bytes` starting at free-running position `pos` goes:
  // `pos` itself, or the start of the ring when it would not fit before the end.
  uint64_t place(uint64_t pos, uint32_t bytes) const {
    const uint64_t off = pos & mask_;
    return off + bytes > size_ ? pos + (size_ - off) : pos;
  }
  static constexpr uint32_t kSkip = UINT32_MAX;  // caplen of a filler to the ring's end
  static uint32_t record_bytes(uint32_t caplen) { return uint32_t(sizeof(CaptureRecord) + ((caplen + 7) & ~7u)); }

  const uint32_t snaplen_;
  const uint32_t size_;
  const uint64_t mask_;
  std::unique_ptr<uint8_t[]> buf_;
  alignas(64) std::atomic<uint64_t> head_{0};  // consumer: next record to read
  alignas(64) std::atomic<uint64_t> tail_{0};  // producer: where the next record goes
};

template <class F>
size_t PortCapture::drain(F&& f, size_t max_bytes) {
  size_t n = 0, bytes = 0;
  uint64_t head = head_.load(std::memory_order_relaxed);
  const uint64_t tail = tail_.load(std::memory_order_acquire);
  while (head != tail && bytes < max_bytes) {
    head = place(head, sizeof(CaptureRecord));  // the producer skips a too-short end alike
    CaptureRecord r;
    std::memcpy(&r, &buf_[head & mask_], sizeof r);
    if (r.caplen == kSkip) {  // the record did not fit before the end: it is at the start
      head += size_ - (head & mask_);
      continue;
    }
    f(r, &buf_[(head & mask_) + sizeof r]);
    head += record_bytes(r.caplen);
    bytes += r.caplen;
    ++n;
  }
  head_.store(head, std::memory_order_release);
  return n;
}

}  // namespace vf::dp
