#include "dataplane/fabric/switch.hpp"

#include <stdexcept>

namespace vf::dp {

Switch::Switch(Scheduler& sched, std::string name, LinkLayer ll, const SwitchConfig& cfg, void* self,
               Port::RxFn on_rx)
    : name_(std::move(name)), ll_(ll), cfg_(cfg), sched_(sched) {
  if (cfg.nports == 0 || cfg.nports > 254) throw std::invalid_argument("switch " + name_ + ": 1..254 ports");
  if (cfg.data_vls == 0 || cfg.data_vls > kNumDataClasses)
    throw std::invalid_argument("switch " + name_ + ": data_vls must be 1..8");
  if (cfg.adaptive.mode == AdaptiveMode::kFlowlet) flowlets_.enable();
  if (cfg.buffer_bytes) buffer_ = std::make_unique<SharedBuffer>(cfg.buffer_bytes);
  ports_.reserve(cfg.nports);
  for (unsigned i = 1; i <= cfg.nports; ++i) {
    auto p = std::make_unique<Port>(sched, name_ + "/" + std::to_string(i), ll, cfg.port);
    p->set_number(uint16_t(i));
    p->set_owner(self, on_rx);
    p->set_buffer(buffer_.get());
    ports_.push_back(std::move(p));
  }
}

void Switch::relay_error(Port& in, rte_mbuf* m, unsigned cls) {
  const uint32_t bytes = rte_pktmbuf_pkt_len(m);
  in.counters().rcv_switch_relay_errors.add();
  rte_pktmbuf_free(m);
  in.release(cls, bytes);
}

Port* Switch::egress(const Port& in, unsigned num) {
  if (num == 0 || num > ports_.size() || num == in.number()) return nullptr;
  return ports_[num - 1].get();
}

}  // namespace vf::dp
