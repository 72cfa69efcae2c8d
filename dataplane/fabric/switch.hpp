// What every switch is: a store-and-forward element with N ports (numbered
// 1..N as in the IBA and the config's "sw/1"; IB port 0, the management port,
// is a hook of IbSwitch), a switching latency, optionally a shared packet memory,
// and relay errors. IbSwitch (ib_switch.hpp) and EthSwitch (eth_switch.hpp)
// add how each picks the egress port and class.
//
// A frame is switched once it has been received whole (the link delivers at its
// last bit): the forwarding decision is made then and the frame is queued on the
// egress port, eligible to leave `latency_ns` later. It keeps occupying the
// ingress port's receive buffer until it leaves the egress port (see Port).
// A frame that cannot be forwarded is a relay error: dropped and counted in
// the ingress port's PortRcvSwitchRelayErrors. A full egress queue drops the
// frame and counts PortXmitDiscards on the egress port -- until credits (IB)
// or PFC (lossless priorities) make that impossible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/fabric/adaptive_routing.hpp"
#include "dataplane/fabric/port.hpp"
#include "dataplane/fabric/shared_buffer.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

struct SwitchConfig {
  unsigned nports = 8;
  Nanos latency_ns = 0;        // store-and-forward switching latency
  uint8_t data_vls = 8;        // IB: operational data VLs (1, 2, 4 or 8)
  PortConfig port;             // queue sizes of every port
  uint64_t buffer_bytes = 0;   // shared packet memory of all ports; 0 = unlimited
  AdaptiveConfig adaptive;     // how equal-cost choices are made (adaptive_routing.hpp)
};

class Switch {
 public:
  virtual ~Switch() = default;
  Switch(const Switch&) = delete;
  Switch& operator=(const Switch&) = delete;

  const std::string& name() const { return name_; }
  LinkLayer link_layer() const { return ll_; }
  unsigned nports() const { return unsigned(ports_.size()); }
  Nanos latency() const { return cfg_.latency_ns; }
  const SwitchConfig& config() const { return cfg_; }
  // Port `num`, 1..nports.
  Port& port(unsigned num) { return *ports_.at(num - 1); }
  const Port& port(unsigned num) const { return *ports_.at(num - 1); }
  // The shared packet memory (SwitchConfig::buffer_bytes), or null.
  const SharedBuffer* buffer() const { return buffer_.get(); }
  const AdaptiveCounters& adaptive_counters() const { return adaptive_ctr_; }
  void reset_adaptive_counters() {
    adaptive_ctr_.rerouted.set(0);
    adaptive_ctr_.flowlets.set(0);
  }

 protected:
  // `on_rx` is the derived switch's forwarding function; `self` its object.
  Switch(Scheduler& sched, std::string name, LinkLayer ll, const SwitchConfig& cfg, void* self,
         Port::RxFn on_rx);

  void relay_error(Port& in, rte_mbuf* m, unsigned cls);
  // The egress port for `num` if it can take a frame from `in`, else null.
  Port* egress(const Port& in, unsigned num);
  // Queues `m` on `out`'s class `out_cls`, eligible after the switching latency.
  // `grown`: bytes the frame gained on the way (Port::enqueue).
  void forward(Port& in, unsigned cls, Port& out, unsigned out_cls, rte_mbuf* m, int8_t grown = 0) {
    out.enqueue(out_cls, m, sched_.now() + cfg_.latency_ns, &in, uint8_t(cls), grown);
  }
  Port& port_at(unsigned num) { return *ports_[num - 1]; }

  // The adaptive choice (adaptive_routing.hpp) for a packet from `in` among
  // the ports `group[0..n)`, whose static choice is group[first]: a port
  // number of the group. `cls_of(out)`: the egress class the packet would
  // take on `out`, or a value >= kNumClasses when it may not take it. With
  // no port able to take it, the static choice (the caller's error path).
  template <class Port16, class ClassOf>
  unsigned adaptive_port(const Port& in, const Port16* group, unsigned n, unsigned first, uint32_t flow,
                         ClassOf&& cls_of);

  AdaptiveCounters adaptive_ctr_;
  FlowletTable flowlets_;  // enabled in flowlet mode

  const std::string name_;
  const LinkLayer ll_;
  const SwitchConfig cfg_;
  Scheduler& sched_;

 private:
  std::unique_ptr<SharedBuffer> buffer_;  // before ports_: they point into it
  std::vector<std::unique_ptr<Port>> ports_;
};

template <class Port16, class ClassOf>
unsigned Switch::adaptive_port(const Port& in, const Port16* group, unsigned n, unsigned first, uint32_t flow,
                               ClassOf&& cls_of) {
  const auto usable = [&](unsigned num) -> const Port* {
    const Port* out = egress(in, num);
    return out && out->connected() && out->link_up() && cls_of(*out) < kNumClasses ? out : nullptr;
  };
  const Nanos now = sched_.now();
  const bool flowlet = cfg_.adaptive.mode == AdaptiveMode::kFlowlet;
  if (flowlet)
    if (const uint16_t kept = flowlets_.current(flow, now, cfg_.adaptive.flowlet_gap_ns); kept && usable(kept)) {
      flowlets_.place(flow, now, kept);
      if (kept != group[first]) adaptive_ctr_.rerouted.add();
      return kept;
    }
  uint32_t load[256];
  for (unsigned i = 0; i < n; ++i) {
    const Port* out = usable(group[i]);
    load[i] = out ? out->class_queued(cls_of(*out)) : UINT32_MAX;
  }
  const unsigned best = least_loaded(load, n, first);
  if (flowlet) {
    flowlets_.place(flow, now, uint16_t(group[best]));
    adaptive_ctr_.flowlets.add();
  }
  if (best != first) adaptive_ctr_.rerouted.add();
  return group[best];
}

}  // namespace vf::dp
