#include "dataplane/fabric/ib_switch.hpp"

#include <stdexcept>

#include "dataplane/wire/ib_framing.hpp"
#include "dataplane/wire/lrh.hpp"

namespace vf::dp {

IbSwitch::IbSwitch(Scheduler& sched, std::string name, const SwitchConfig& cfg)
    : Switch(sched, std::move(name), LinkLayer::kInfiniBand, cfg, this, &IbSwitch::on_rx),
      lft_(kLftSize, kNoRoute),
      qos_(cfg.nports, default_port_qos(cfg.data_vls)),
      pair_sl2vl_(size_t(cfg.nports + 1) * cfg.nports, default_port_qos(cfg.data_vls).sl2vl) {
  for (unsigned i = 1; i <= nports(); ++i) port(i).set_qos(&qos_[i - 1]);
}

void IbSwitch::set_lft(uint16_t dlid, uint8_t port) {
  if (dlid >= kLftSize) throw std::invalid_argument("switch " + name_ + ": LFT covers unicast LIDs only");
  lft_[dlid] = port;
}

void IbSwitch::set_sl2vl(unsigned out_port, uint8_t sl, uint8_t vl) {
  if (!qos_.at(out_port - 1).set_sl2vl(sl, vl)) throw std::invalid_argument("switch " + name_ + ": bad SL→VL entry");
  for (unsigned in = 0; in <= nports(); ++in) pair_sl2vl_[pair(in, out_port)][sl] = vl;
}

void IbSwitch::set_sl2vl(unsigned in_port, unsigned out_port, uint8_t sl, uint8_t vl) {
  PortQos check = qos_.at(out_port - 1);  // the output port's operational VLs decide
  if (in_port > nports() || !check.set_sl2vl(sl, vl))
    throw std::invalid_argument("switch " + name_ + ": bad SL→VL entry for port pair " + std::to_string(in_port) +
                                " -> " + std::to_string(out_port));
  pair_sl2vl_[pair(in_port, out_port)][sl] = vl;
}

void IbSwitch::set_vlarb(unsigned out_port, const VlArbTable& high, const VlArbTable& low,
                         uint8_t high_limit) {
  if (!qos_.at(out_port - 1).set_vlarb(high, low, high_limit))
    throw std::invalid_argument("switch " + name_ + ": bad VL arbitration table for port " +
                                std::to_string(out_port));
}

void IbSwitch::on_rx(void* self, Port& in, rte_mbuf* m, unsigned cls) {
  auto& sw = *static_cast<IbSwitch*>(self);
  // The ingress port classified the frame by its LRH, so the LRH is there.
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  Port* out = sw.egress(in, sw.lft(wire::lrh_dlid(f)));
  if (!out) return sw.relay_error(in, m, cls);
  unsigned out_cls = kMgmtClass;
  if (cls != kMgmtClass) {
    const uint8_t vl = sw.pair_sl2vl_[sw.pair(in.number(), out->number())][wire::lrh_sl(f)];
    if (vl == kVl15) return sw.relay_error(in, m, cls);
    // Moving to another VL rewrites the LRH and its VCRC; a frame whose VCRC
    // is already bad is a link error here. (Frames that keep their VL are not
    // re-checked: the HCA checks.)
    if (vl != cls && wire::ib_frame_set_vl(m, vl) != wire::RxError::kOk) {
      const uint32_t bytes = rte_pktmbuf_pkt_len(m);
      in.counters().rcv_errors.add();
      rte_pktmbuf_free(m);
      return in.release(cls, bytes);
    }
    out_cls = vl;
  }
  sw.forward(in, cls, *out, out_cls, m);
}

}  // namespace vf::dp
