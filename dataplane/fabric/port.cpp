#include "dataplane/fabric/port.hpp"

#include <optional>

#include "dataplane/wire/frame_peek.hpp"

namespace vf::dp {

Port::Port(Scheduler& sched, std::string name, LinkLayer ll, const PortConfig& cfg)
    : sched_(sched), name_(std::move(name)), ll_(ll), cfg_(cfg), tx_timer_(&Port::on_tx_timer, this) {
  queued_frame_offset();
  for (unsigned c = 0; c < kNumClasses; ++c)
    q_[c].set_limit(c == kCtrlClass ? cfg.ctrl_queue_pkts : cfg.queue_pkts);
  if (ll == LinkLayer::kEthernet) set_ets(cfg.eth.ets);
}

void Port::set_ets(const EtsConfig& e) {
  ets_cfg_ = e;
  ets_ = e.enabled ? std::make_unique<EtsPlan>(make_ets_plan(e)) : nullptr;
  arb_.ets = {};  // deficits of the old classes mean nothing under the new ones
  pump();
}

Port::~Port() {
  sched_.disarm(tx_timer_);
  for (EgressQueue& q : q_)
    while (!q.empty()) rte_pktmbuf_free(q.pop());
}

void Port::attach(LinkDirection& tx) {
  tx_ = &tx;
  link_ = tx.params();
  max_frame_ = max_frame_bytes(ll_, link_.mtu);
}

// ---------------------------------------------------------------- egress

bool Port::enqueue(unsigned cls, rte_mbuf* m, Nanos eligible_at, Port* origin, uint8_t origin_cls, int8_t grown) {
  // The hook first, before the fast path below loads anything.
  if (enqueue_hook_.on_enqueue && cls < kNumDataClasses &&
      !enqueue_hook_.admit(cls, m, q_[cls].size(), ctr_.cls[cls].depth_bytes.get())) [[unlikely]] {
    drop_egress(cls, m, origin, origin_cls, grown);
    return false;
  }
  const uint32_t bytes = rte_pktmbuf_pkt_len(m);
  if (q_[cls].full() || bytes > max_frame_ || !tx_ || !link_up_) [[unlikely]] {
    drop_egress(cls, m, origin, origin_cls, grown);
    return false;
  }
  q_[cls].push(m, origin, eligible_at, bytes, origin_cls, grown);
  ++queued_;
  ClassCounters& k = ctr_.cls[cls];
  k.depth_pkts.add();
  k.depth_bytes.add(bytes);
  k.max_depth_pkts.max(q_[cls].size());
  // Re-entered from inside pump (a release hook queueing a credit update on
  // this very port): the running loop picks the frame up.
  if (!in_pump_) pump();
  return true;
}

void Port::drop_egress(unsigned cls, rte_mbuf* m, Port* origin, uint8_t origin_cls, int8_t grown) {
  const uint32_t bytes = uint32_t(int64_t(rte_pktmbuf_pkt_len(m)) - grown);
  rte_pktmbuf_free(m);
  ctr_.xmit_discards.add();
  ctr_.cls[cls].xmit_discards.add();
  if (origin) origin->release(origin_cls, bytes);
}

void Port::set_link_up(bool up) {
  if (up == link_up_) return;
  link_up_ = up;
  if (!up) {
    ctr_.link_downed.add();
    sched_.disarm(tx_timer_);
    set_waiting(false, sched_.now());
    ctl_wanted_ = false;
    discard_queued();
  }
  if (link_state_.changed) link_state_.changed(link_state_.ctx, up);
  if (up) pump();
}

void Port::discard_queued() {
  for (unsigned cls = 0; cls < kNumClasses; ++cls)
    while (!q_[cls].empty()) {
      rte_mbuf* const m = q_[cls].pop();
      const QueuedFrame f = dp::queued(m);
      --queued_;
      ctr_.cls[cls].depth_pkts.sub(1);
      ctr_.cls[cls].depth_bytes.sub(f.bytes);
      drop_egress(cls, m, f.origin, f.origin_cls, f.grown);
    }
}

void Port::on_tx_timer(Timer& t, Nanos) { CtxTimer::owner<Port>(t).pump(); }

// Sends whatever the arbiter picks while the wire is free, then sleeps until
// the wire frees or the next queued frame becomes eligible. A closed gate
// leaves no timer: the flow-control logic wakes the port when it reopens.
void Port::pump() {
  if (!tx_ || !link_up_ || in_pump_) return;
  in_pump_ = true;
  const Nanos now = sched_.now();
  while (queued_ > 0 || ctl_wanted_) {
    if (!tx_->idle(now)) {
      sched_.arm(tx_timer_, tx_->free_at());
      break;
    }
    if (ctl_wanted_ && transmit_link_control()) continue;
    if (queued_ == 0) break;
    const ArbiterPick p = arbitrate(arb_, q_, gate_, qos_, ets_.get(), now);
    if (p.cls < 0) {
      set_waiting(p.gated, now);
      if (p.gated) note_held_classes(now);
      if (p.next_eligible != kNever) sched_.arm(tx_timer_, p.next_eligible);
      break;
    }
    set_waiting(false, now);
    transmit_head(unsigned(p.cls));
  }
  if (queued_ == 0) set_waiting(false, now);
  in_pump_ = false;
}

void Port::transmit_head(unsigned cls) {
  rte_mbuf* const m = q_[cls].pop();
  const QueuedFrame& f = dp::queued(m);
  --queued_;
  ClassCounters& k = ctr_.cls[cls];
  k.depth_pkts.sub(1);
  k.depth_bytes.sub(f.bytes);
  k.xmit_pkts.add();
  k.xmit_bytes.add(f.bytes);
  if (cls != kCtrlClass) {
    ctr_.xmit_pkts.add();
    ctr_.xmit_bytes.add(f.bytes);
  }
  if (cls < kNumDataClasses) {
    gate_.sent(cls, f.bytes);
    arbiter_sent(arb_, qos_, cls, f.bytes);
  }
  // The frame leaves the switch's buffer as it starts onto the wire: credits or
  // XON for the ingress port follow from here.
  if (f.origin) f.origin->release(f.origin_cls, f.origin_bytes());
  tx_->send(m);
  if (tx_done_) tx_done_(owner_, *this);
}

bool Port::transmit_link_control() {
  rte_mbuf* m = link_ctl_.next ? link_ctl_.next(link_ctl_.ctx) : nullptr;
  if (!m) {
    ctl_wanted_ = false;
    return false;
  }
  const uint32_t bytes = rte_pktmbuf_pkt_len(m);
  ClassCounters& k = ctr_.cls[kCtrlClass];
  k.xmit_pkts.add();
  k.xmit_bytes.add(bytes);
  tx_->send(m);
  return true;
}

void Port::set_waiting(bool waiting, Nanos now) {
  if (waiting == waiting_) return;
  waiting_ = waiting;
  if (waiting) {
    ctr_.wait_since.set(now);
    return;
  }
  ctr_.xmit_wait_ns.add(now - ctr_.wait_since.get());
  ctr_.wait_since.set(kNever);
  for (; held_; held_ &= held_ - 1) {
    ClassCounters& k = ctr_.cls[__builtin_ctz(held_)];
    k.xmit_wait_ns.add(now - k.wait_since.get());
    k.wait_since.set(kNever);
  }
}

// The port waits: every data class whose head its gate holds waits with it
// (slow path: only when the arbiter found nothing to send).
void Port::note_held_classes(Nanos now) {
  for (unsigned c = 0; c < kNumDataClasses; ++c)
    if (!(held_ >> c & 1) && head_gated(c)) {
      held_ |= 1u << c;
      ctr_.cls[c].wait_since.set(now);
    }
}

// ---------------------------------------------------------------- ingress

void Port::on_frame(void* self, rte_mbuf* m) { static_cast<Port*>(self)->receive(m); }

// IB: the LRH VL (VL15 = management; VLs 8-14 do not exist here). Ethernet:
// with trust dscp an IP frame's DSCP through the port's map, otherwise the
// 802.1Q PCP (untagged = 0). -1 = runt or invalid.
int Port::classify(const rte_mbuf* m) const {
  if (ll_ == LinkLayer::kInfiniBand) {
    const std::optional<uint8_t> vl = wire::ib_frame_vl(m);
    if (!vl) return -1;
    if (*vl == kVl15) return int(kMgmtClass);
    return *vl < kNumDataClasses ? int(*vl) : -1;
  }
  if (cfg_.eth.trust_dscp) {
    const int dscp = wire::eth_frame_dscp(m);
    if (dscp >= 0) return cfg_.eth.dscp2prio[unsigned(dscp)] & 7;
  }
  const std::optional<uint8_t> pcp = wire::eth_frame_pcp(m);
  return pcp ? int(*pcp) : -1;
}

void Port::receive(rte_mbuf* m) {
  const uint32_t bytes = rte_pktmbuf_pkt_len(m);
  if (ingress_.control && ingress_.control(ingress_.ctx, *this, m)) {
    ClassCounters& k = ctr_.cls[kCtrlClass];
    k.rcv_pkts.add();
    k.rcv_bytes.add(bytes);
    return;
  }
  ctr_.rcv_pkts.add();
  ctr_.rcv_bytes.add(bytes);
  const int cls = classify(m);
  if (cls < 0) {
    ctr_.rcv_errors.add();
    rte_pktmbuf_free(m);
    return;
  }
  ClassCounters& k = ctr_.cls[cls];
  k.rcv_pkts.add();
  k.rcv_bytes.add(bytes);
  // No room in the switch's memory, or flow control refuses: a discard.
  const bool pool = buffer_ && !ingress_.buffers;
  if (pool && !buffer_->take(bytes)) [[unlikely]] {
    ctr_.rcv_discards.add();
    rte_pktmbuf_free(m);
    return;
  }
  if (ingress_.admit && !ingress_.admit(ingress_.ctx, unsigned(cls), bytes)) {
    if (pool) buffer_->give(bytes);
    ctr_.rcv_discards.add();
    rte_pktmbuf_free(m);
    return;
  }
  k.rx_buffered_bytes.add(bytes);
  k.rx_buffered_peak.max(k.rx_buffered_bytes.get());
  if (!rx_) {
    ctr_.rcv_discards.add();
    rte_pktmbuf_free(m);
    release(unsigned(cls), bytes);
    return;
  }
  rx_(owner_, *this, m, unsigned(cls));
}

void Port::release(unsigned cls, uint32_t bytes) {
  ctr_.cls[cls].rx_buffered_bytes.sub(bytes);
  if (buffer_ && !ingress_.buffers) [[unlikely]] buffer_->give(bytes);
  if (ingress_.release) ingress_.release(ingress_.ctx, cls, bytes);
}

}  // namespace vf::dp

namespace vf::dp {
void connect_ports(Port& a, Port& b, Link& link) {
  a.attach(link.a_to_b());
  link.a_to_b().set_sink(b.rx_sink());
  b.attach(link.b_to_a());
  link.b_to_a().set_sink(a.rx_sink());
}
}  // namespace vf::dp
