#include "dataplane/fabric/switch.hpp"

#include <stdexcept>

#include "dataplane/wire/frame_peek.hpp"
#include "dataplane/wire/ib_framing.hpp"

namespace vf::dp {

Switch::Switch(Scheduler& sched, std::string name, LinkLayer ll, const SwitchConfig& cfg)
    : name_(std::move(name)), ll_(ll), cfg_(cfg), sched_(sched), lft_(kLftSize, kNoRoute) {
  if (cfg.nports == 0 || cfg.nports > 254) throw std::invalid_argument("switch " + name_ + ": 1..254 ports");
  if (cfg.data_vls == 0 || cfg.data_vls > kNumDataClasses)
    throw std::invalid_argument("switch " + name_ + ": data_vls must be 1..8");
  if (cfg.buffer_bytes) buffer_ = std::make_unique<SharedBuffer>(cfg.buffer_bytes);
  ports_.reserve(cfg.nports);
  for (unsigned i = 1; i <= cfg.nports; ++i) {
    auto p = std::make_unique<Port>(sched, name_ + "/" + std::to_string(i), ll, cfg.port);
    p->set_number(uint16_t(i));
    p->set_owner(this, &Switch::on_rx);
    p->set_buffer(buffer_.get());
    ports_.push_back(std::move(p));
  }
  std::array<uint8_t, 16> map{};
  for (unsigned sl = 0; sl < 16; ++sl) map[sl] = uint8_t(sl % cfg.data_vls);
  sl2vl_.assign(cfg.nports, map);
}

void Switch::set_lft(uint16_t dlid, uint8_t port) {
  if (dlid >= kLftSize) throw std::invalid_argument("switch " + name_ + ": LFT covers unicast LIDs only");
  lft_[dlid] = port;
}

void Switch::set_sl2vl(unsigned out_port, uint8_t sl, uint8_t vl) {
  if (sl > 15 || (vl >= cfg_.data_vls && vl != kVl15))
    throw std::invalid_argument("switch " + name_ + ": bad SL→VL entry");
  sl2vl_.at(out_port - 1)[sl] = vl;
}

void Switch::add_fdb(const Mac& mac, unsigned port) {
  if (port == 0 || port > nports()) throw std::invalid_argument("switch " + name_ + ": FDB port out of range");
  fdb_[mac_key(mac.data())] = uint16_t(port);
}

void Switch::remove_fdb(const Mac& mac) { fdb_.erase(mac_key(mac.data())); }

// ---------------------------------------------------------------- fast path

void Switch::on_rx(void* self, Port& in, rte_mbuf* m, unsigned cls) {
  auto& sw = *static_cast<Switch*>(self);
  if (sw.ll_ == LinkLayer::kInfiniBand)
    sw.forward_ib(in, m, cls);
  else
    sw.forward_eth(in, m, cls);
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

void Switch::forward_ib(Port& in, rte_mbuf* m, unsigned cls) {
  // The ingress port classified the frame by its LRH, so the LRH is there.
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  Port* out = egress(in, lft(wire::lrh_dlid(f)));
  if (!out) return relay_error(in, m, cls);
  unsigned out_cls = kMgmtClass;
  if (cls != kMgmtClass) {
    const uint8_t vl = sl2vl_[out->number() - 1][wire::lrh_sl(f)];
    if (vl == kVl15) return relay_error(in, m, cls);
    // Moving to another VL rewrites the LRH and its VCRC; a frame whose VCRC
    // is already bad is a link error here. (Frames that keep their VL are not
    // re-checked: the emulated links do not corrupt, and the HCA checks.)
    if (vl != cls && wire::ib_frame_set_vl(m, vl) != wire::RxError::kOk) {
      const uint32_t bytes = rte_pktmbuf_pkt_len(m);
      in.counters().rcv_errors.add();
      rte_pktmbuf_free(m);
      return in.release(cls, bytes);
    }
    out_cls = vl;
  }
  out->enqueue(out_cls, m, sched_.now() + cfg_.latency_ns, &in, uint8_t(cls));
}

void Switch::forward_eth(Port& in, rte_mbuf* m, unsigned cls) {
  // The ingress port classified the frame, so its Ethernet header is there.
  const auto it = fdb_.find(mac_key(wire::eth_frame_dst(m)));
  Port* out = it == fdb_.end() ? nullptr : egress(in, it->second);
  if (!out) return relay_error(in, m, cls);
  out->enqueue(cls, m, sched_.now() + cfg_.latency_ns, &in, uint8_t(cls));
}

}  // namespace vf::dp
