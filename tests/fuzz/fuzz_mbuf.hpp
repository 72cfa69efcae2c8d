// Frames for the frame-parser fuzzers: the EAL (no hugepages, no devices) and
// an mbuf whose data is exactly the fuzzer's bytes in a heap buffer of that
// size, so AddressSanitizer sees any read past the frame.
#pragma once

#include <rte_mbuf.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace vf::fuzz {

void init_eal();  // once per process; aborts when the EAL cannot start

// Owns the frame's buffer and the mbuf attached to it.
class FrameMbuf {
 public:
  // The whole input as one segment, or split into two chained segments after
  // `split` bytes (when 0 < split < size) to reach the non-contiguous paths.
  FrameMbuf(const uint8_t* data, size_t size, size_t split = 0);
  ~FrameMbuf();
  FrameMbuf(const FrameMbuf&) = delete;
  FrameMbuf& operator=(const FrameMbuf&) = delete;
  rte_mbuf* get() const { return head_; }

 private:
  struct Segment {
    std::unique_ptr<uint8_t[]> buf;
    rte_mbuf_ext_shared_info shinfo{};
    rte_mbuf* m = nullptr;
  };
  void attach(Segment& s, const uint8_t* data, size_t size);
  Segment a_, b_;
  rte_mbuf* head_ = nullptr;
};

}  // namespace vf::fuzz
