// A host slower than its link (HcaPortConfig::rx_rate_bps): received frames
// wait in the NIC's receive buffer and go to the engine one at a time, each
// after the previous one's time at the host's rate. A waiting frame keeps its
// receive accounting, so the link's flow control sees the buffer fill: PFC
// sends XOFF on a lossless priority, IB stops returning credits -- the NIC
// pushes back as a real one does when its host cannot keep up. Priorities
// without flow control share a buffer of rx_buffer_bytes instead (what the
// flow-controlled ones hold does not count against it), and what does not
// fit is dropped (rx_discards_phy).
#include "dataplane/fabric/hca_port.hpp"

namespace vf::dp {

bool HcaPort::flow_controlled(unsigned cls) const {
  if (cfg_.link_layer == LinkLayer::kInfiniBand) return cls < kNumDataClasses;  // credits; VL15 has none
  return cls < 8 && (cfg_.port.eth.pfc.enable >> cls & 1);
}

void HcaPort::hold_rx(rte_mbuf* m, unsigned cls) {
  const uint32_t bytes = rte_pktmbuf_pkt_len(m);
  const bool bounded = !flow_controlled(cls);
  if (rx_held_.full() || (bounded && rx_unbounded_bytes_ + bytes > cfg_.rx_buffer_bytes)) [[unlikely]] {
    rx_discards_phy_.add();
    rte_pktmbuf_free(m);
    port_.release(cls, bytes);
    return;
  }
  const bool was_empty = rx_held_.empty();
  rx_held_.push({m, uint8_t(cls)});
  if (bounded) rx_unbounded_bytes_ += bytes;
  if (was_empty) {
    const Nanos now = sched_.now();
    if (rx_free_at_.ns < now) rx_free_at_ = WireTime{now, 0};
    sched_.arm(rx_timer_, rx_free_at_.ceil_ns());
  }
}

void HcaPort::on_rx_timer(Timer& t, Nanos) {
  auto& h = CtxTimer::owner<HcaPort>(t);
  if (h.rx_held_.empty()) return;
  const HeldRx r = h.rx_held_.pop();
  const uint32_t bytes = rte_pktmbuf_pkt_len(r.m);
  if (!h.flow_controlled(r.cls)) h.rx_unbounded_bytes_ -= bytes;
  h.rx_free_at_ = add_bits(h.rx_free_at_, uint64_t(bytes) * 8, h.cfg_.rx_rate_bps);
  h.port_.release(r.cls, bytes);
  h.receive_frame(r.m, &h.port_.counters());
  if (!h.rx_held_.empty()) h.sched_.arm(h.rx_timer_, h.rx_free_at_.ceil_ns());
}

// Carrier loss: what the NIC held is gone, and so is its accounting.
void HcaPort::drop_held_rx() {
  sched_.disarm(rx_timer_);
  while (!rx_held_.empty()) {
    const HeldRx r = rx_held_.pop();
    const uint32_t bytes = rte_pktmbuf_pkt_len(r.m);
    rte_pktmbuf_free(r.m);
    port_.release(r.cls, bytes);
  }
  rx_unbounded_bytes_ = 0;
}

}  // namespace vf::dp
