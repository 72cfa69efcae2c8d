#include "dataplane/fabric/port_capture.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace vf::dp {

PortCapture::PortCapture(uint32_t ring_bytes, uint32_t snaplen)
    : snaplen_(snaplen),
      size_(std::bit_ceil(std::max<uint32_t>(ring_bytes, 256 * 1024))),
      mask_(size_ - 1),
      buf_(std::make_unique<uint8_t[]>(size_)) {
  if (snaplen == 0 || snaplen > kMaxSnaplen) throw std::invalid_argument("capture snaplen must be 1..65535");
}

WireVerdict PortCapture::on_sent(void* self, rte_mbuf* m, const WireTime& depart, const WireTime&) {
  static_cast<PortCapture*>(self)->push(m, depart.ns, false);
  return WireVerdict::kPass;
}

WireVerdict PortCapture::on_received(void* self, rte_mbuf* m, const WireTime&, const WireTime& arrive) {
  static_cast<PortCapture*>(self)->push(m, arrive.ceil_ns(), true);
  return WireVerdict::kPass;
}

void PortCapture::push(const rte_mbuf* m, Nanos ts, bool inbound) {
  const uint32_t len = rte_pktmbuf_pkt_len(m);
  const uint32_t caplen = std::min(len, snaplen_);
  const uint32_t rb = record_bytes(caplen);
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  const uint64_t at = place(place(tail, sizeof(CaptureRecord)), rb);
  if (at + rb - head_.load(std::memory_order_acquire) > size_) {
    dropped.add();
    return;
  }
  // A filler where the record did not fit before the end (when its header does).
  const uint64_t header_at = place(tail, sizeof(CaptureRecord));
  if (at != header_at) {
    const CaptureRecord skip{0, kSkip, 0, 0, {}};
    std::memcpy(&buf_[header_at & mask_], &skip, sizeof skip);
  }
  const CaptureRecord r{ts, caplen, len, uint8_t(inbound), {}};
  uint8_t* dst = &buf_[at & mask_];
  std::memcpy(dst, &r, sizeof r);
  // Single-segment frames are copied directly; chains through rte_pktmbuf_read.
  const void* src = rte_pktmbuf_read(m, 0, caplen, dst + sizeof r);
  if (src != dst + sizeof r) std::memcpy(dst + sizeof r, src, caplen);
  captured.add();
  tail_.store(at + rb, std::memory_order_release);
}

}  // namespace vf::dp
