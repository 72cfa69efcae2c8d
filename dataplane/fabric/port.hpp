// A port: the end of a link inside a switch or an HCA. Egress: one bounded
// queue per class (kNumClasses), an arbiter that picks the next class whenever
// the wire is free, and an EgressGate per class (credits / PFC pause). Ingress:
// classifies each arriving frame (IB: LRH VL; Ethernet: 802.1Q PCP), accounts
// it in the class's receive buffer (IngressHooks) and hands it to the owner,
// which calls release() once the frame has left that buffer. See
// port_hooks.hpp for how flow control plugs in.
//
// Everything runs on the dataplane lcore; only counters() / snapshot() may be
// read from another thread.
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "dataplane/fabric/arbiter.hpp"
#include "dataplane/fabric/ctx_timer.hpp"
#include "dataplane/fabric/egress_queue.hpp"
#include "dataplane/fabric/eth_qos.hpp"
#include "dataplane/fabric/link.hpp"
#include "dataplane/fabric/port_counters.hpp"
#include "dataplane/fabric/port_hooks.hpp"
#include "dataplane/fabric/shared_buffer.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

struct PortConfig {
  uint32_t queue_pkts = 256;      // per data class and for VL15 (lossy classes)
  uint32_t ctrl_queue_pkts = 64;  // link-control frames
  // IB link-level flow control (ib_credits.hpp), set up when the port is
  // linked; Ethernet ports ignore these.
  bool credits = true;
  uint32_t vl_buffer_bytes = 0;  // receive buffer per data VL; 0 = default_vl_buffer()
  uint32_t vl15_buffer_bytes = 2048;
  // Ethernet: classification and PFC (eth_qos.hpp); IB ports ignore it.
  EthQos eth{};
};

class Port {
 public:
  // The owner's receive function: takes ownership of `m`, which occupies
  // pkt_len bytes of class `cls`'s receive buffer until release(cls, bytes).
  using RxFn = void (*)(void* owner, Port& port, rte_mbuf* m, unsigned cls);
  // Called after a frame left an egress queue (room appeared).
  using TxDoneFn = void (*)(void* owner, Port& port);

  Port(Scheduler& sched, std::string name, LinkLayer ll, const PortConfig& cfg = {});
  ~Port();
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  // ---- set-up
  void set_owner(void* owner, RxFn rx, TxDoneFn tx_done = nullptr) {
    owner_ = owner;
    rx_ = rx;
    tx_done_ = tx_done;
  }
  void set_gate(const EgressGate& g) { gate_ = g; }
  void set_ingress(const IngressHooks& h) { ingress_ = h; }
  void set_enqueue_hook(const EnqueueHook& h) { enqueue_hook_ = h; }
  void set_link_control(const LinkControl& c) { link_ctl_ = c; }
  // IB: the port's VL record, whose VLArbitration tables the arbiter serves
  // (arbiter.hpp); null = round robin. The owner keeps it alive and changes
  // it only on the lcore.
  void set_qos(const PortQos* qos) { qos_ = qos; }
  // Ethernet: the port's ETS scheduling from now on (starts as config().eth.ets).
  void set_ets(const EtsConfig& e);
  const EtsConfig& ets() const { return ets_cfg_; }
  void set_link_state_hook(const LinkStateHook& h) { link_state_ = h; }
  // The most frames egress class `cls` holds (EgressQueue::kUnbounded where
  // credits bound it upstream).
  void set_class_limit(unsigned cls, uint32_t pkts) { q_[cls].set_limit(pkts); }
  // The switch memory this port's received frames occupy (shared by several
  // ports; null = unlimited). A frame that does not fit is a receive discard.
  void set_buffer(SharedBuffer* b) { buffer_ = b; }
  SharedBuffer* buffer() const { return buffer_; }
  // Connects the egress side to `tx`; the link's other direction delivers to rx_sink().
  void attach(LinkDirection& tx);
  // Undoes attach (a link that could not be set up).
  void detach() {
    tx_ = nullptr;
    link_ = LinkParams{0, 0, 0};
  }
  FrameSink rx_sink() { return FrameSink{&Port::on_frame, this}; }
  void set_number(uint16_t n) { number_ = n; }

  const std::string& name() const { return name_; }
  LinkLayer link_layer() const { return ll_; }
  uint16_t number() const { return number_; }  // switch port number, 1 for an HCA
  bool connected() const { return tx_ != nullptr; }
  // Link parameters once attached (rate 0 before).
  const LinkParams& link_params() const { return link_; }
  // The link's rate or delay changed (Link::set_timing): take them again.
  void link_timing_changed() { link_ = tx_->params(); }
  uint32_t max_frame() const { return max_frame_; }
  const PortConfig& config() const { return cfg_; }
  Scheduler& scheduler() const { return sched_; }

  // ---- egress (fast path)
  bool has_room(unsigned cls) const { return !q_[cls].full(); }
  uint32_t queued() const { return queued_; }
  uint32_t class_queued(unsigned cls) const { return q_[cls].size(); }
  // Class `cls` has a frame to send and its gate holds it (no credit, paused).
  bool head_gated(unsigned cls) const {
    return !q_[cls].empty() && !gate_.open(cls, q_[cls].front_meta().bytes);
  }
  // Every frame queued on `cls`, head first (slow path: diagnostics).
  template <class F>
  void for_each_queued(unsigned cls, F&& f) const {
    for (const rte_mbuf* m = q_[cls].front(); m; m = dp::queued(m).next) f(dp::queued(m));
  }
  // Queues `m` on class `cls`, eligible to leave at `eligible_at`. `origin` /
  // `origin_cls`: the receive buffer (inside the same switch) the frame still
  // occupies, released when it leaves this port. On failure (queue full, frame
  // over MTU, not connected) frees m, counts PortXmitDiscards, releases the
  // origin and returns false. `grown`: bytes the frame gained since it
  // entered the origin's buffer (a VLAN tag pushed or popped on the way).
  bool enqueue(unsigned cls, rte_mbuf* m, Nanos eligible_at = 0, Port* origin = nullptr,
               uint8_t origin_cls = 0, int8_t grown = 0);
  // A link-level control frame (flow-control packet, PAUSE): ahead of all data.
  bool send_control(rte_mbuf* m) { return enqueue(kCtrlClass, m); }
  // The LinkControl source has frames to send: it gets the wire next.
  void request_control() {
    ctl_wanted_ = true;
    if (!in_pump_) pump();
  }
  // The physical link went down or trained up again (Fabric::set_link_up).
  // Down counts LinkDownedCounter and discards every queued frame
  // (PortXmitDiscards, releasing the buffers they held upstream), as an HCA
  // or switch flushes a dead port's queues; while down the port sends
  // nothing and refuses what is queued to it. The LinkStateHook (flow
  // control) follows; up restarts the egress.
  void set_link_up(bool up);
  bool link_up() const { return link_up_; }
  // Re-runs arbitration, e.g. after a gate opened.
  void wake() { pump(); }

  // ---- ingress
  // The frame that entered the receive buffer of `cls` left it.
  void release(unsigned cls, uint32_t bytes);

  PortCounters& counters() { return ctr_; }
  const PortCounters& counters() const { return ctr_; }
  PortSnapshot snapshot(Nanos now) const { return vf::dp::snapshot(ctr_, now); }

 private:
  static void on_frame(void* self, rte_mbuf* m);
  static void on_tx_timer(Timer& t, Nanos now);
  void receive(rte_mbuf* m);
  int classify(const rte_mbuf* m) const;
  void pump();
  void transmit_head(unsigned cls);
  // Sends the next LinkControl frame; false when it has none.
  bool transmit_link_control();
  void drop_egress(unsigned cls, rte_mbuf* m, Port* origin, uint8_t origin_cls, int8_t grown);
  void set_waiting(bool waiting, Nanos now);
  void note_held_classes(Nanos now);
  void discard_queued();

  Scheduler& sched_;
  const std::string name_;
  const LinkLayer ll_;
  uint16_t number_ = 1;
  LinkDirection* tx_ = nullptr;
  LinkParams link_{0, 0, 0};
  uint32_t max_frame_ = 0;
  const PortConfig cfg_;

  std::array<EgressQueue, kNumClasses> q_;
  uint32_t queued_ = 0;
  ArbiterState arb_;
  const PortQos* qos_ = nullptr;
  std::unique_ptr<const EtsPlan> ets_;  // Ethernet with ETS on
  EtsConfig ets_cfg_;
  EgressGate gate_;
  IngressHooks ingress_;
  CtxTimer tx_timer_;
  bool in_pump_ = false;
  bool link_up_ = true;
  bool waiting_ = false;
  uint32_t held_ = 0;  // data classes waiting with the port (PortVLXmitWait)
  bool ctl_wanted_ = false;

  void* owner_ = nullptr;
  RxFn rx_ = nullptr;
  TxDoneFn tx_done_ = nullptr;

  PortCounters ctr_;
  // Rarely set; kept after the hot members so they keep their cache lines.
  EnqueueHook enqueue_hook_;
  LinkControl link_ctl_;
  LinkStateHook link_state_;
  SharedBuffer* buffer_ = nullptr;
};

}  // namespace vf::dp

namespace vf::dp {
// Wires both directions of `link` between two ports: a sends on a_to_b, which
// delivers to b, and the reverse.
void connect_ports(Port& a, Port& b, Link& link);
}  // namespace vf::dp
