#include "dataplane/fabric/ib_switch.hpp"

#include <cstdio>
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
  if (cfg.adaptive.mode != AdaptiveMode::kOff) {
    ar_of_.assign(kLftSize, 0);
    ar_groups_.emplace_back();
  }
}

void IbSwitch::set_ar_group(uint16_t dlid, std::span<const uint8_t> ports) {
  if (dlid >= kLftSize) throw std::invalid_argument("switch " + name_ + ": AR groups cover unicast LIDs only");
  for (const uint8_t p : ports)
    if (p == 0 || p > nports())
      throw std::invalid_argument("switch " + name_ + ": AR group names port " + std::to_string(p) +
                                  ", outside 1.." + std::to_string(nports()));
  if (ar_of_.empty()) return;
  if (ports.size() < 2) {
    ar_of_[dlid] = 0;
    return;
  }
  std::vector<uint8_t> g(ports.begin(), ports.end());
  auto [it, fresh] = ar_index_.try_emplace(std::move(g), uint16_t(ar_groups_.size()));
  if (fresh) {
    if (ar_groups_.size() > UINT16_MAX) {
      ar_index_.erase(it);
      throw std::invalid_argument("switch " + name_ + ": more than 65535 AR groups");
    }
    ar_groups_.push_back(it->first);
  }
  ar_of_[dlid] = it->second;
}

uint8_t IbSwitch::unicast_port(const Port& in, uint16_t dlid, unsigned cls, const uint8_t* lrh) {
  const uint8_t fixed = lft(dlid);
  const std::span<const uint8_t> g = ar_group(dlid);
  if (g.empty() || cls == kMgmtClass) return fixed;  // SMPs follow the LFT, as on hardware
  unsigned first = 0;
  while (first < g.size() && g[first] != fixed) ++first;
  if (first == g.size()) first = 0;
  const uint8_t sl = wire::lrh_sl(lrh);
  // A flow, to a flowlet table, is a (source, destination, SL) triple: what
  // the LRH says without reading further.
  uint32_t flow = (uint32_t(wire::lrh_slid(lrh)) << 16 | dlid) ^ uint32_t(sl) << 28;
  flow ^= flow >> 16;  // mixed: the flowlet table indexes by the low bits
  flow *= 0x7FEB352Du;
  flow ^= flow >> 15;
  flow *= 0x846CA68Bu;
  flow ^= flow >> 16;
  return uint8_t(adaptive_port(in, g.data(), unsigned(g.size()), first, flow,
                               [&](const Port& out) { return out_class(in, out, cls, sl); }));
}

void IbSwitch::set_lft(uint16_t dlid, uint8_t port) {
  if (dlid >= kLftSize) throw std::invalid_argument("switch " + name_ + ": LFT covers unicast LIDs only");
  lft_[dlid] = port;
}

void IbSwitch::set_mft(uint16_t mlid, const PortMask& ports) {
  if (mlid < kMlidFirst || mlid > kMlidLast) {
    char lid[8];
    std::snprintf(lid, sizeof lid, "0x%04X", mlid);
    throw std::invalid_argument("switch " + name_ + ": MFT entry for LID " + lid +
                                ", outside the multicast LIDs 0xC000..0xFFFE");
  }
  if (ports.test(0) || (ports >> (nports() + 1)).any())
    throw std::invalid_argument("switch " + name_ + ": MFT port mask names a port outside 1.." +
                                std::to_string(nports()));
  if (ports.none())
    mft_.erase(mlid);
  else
    mft_[mlid] = ports;
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

// A frame whose VCRC fails when its VL is rewritten is a link error on the
// port it came in on.
void IbSwitch::drop_bad_vcrc(Port& in, rte_mbuf* m, unsigned cls) {
  const uint32_t bytes = rte_pktmbuf_pkt_len(m);
  in.counters().rcv_errors.add();
  rte_pktmbuf_free(m);
  in.release(cls, bytes);
}

unsigned IbSwitch::out_class(const Port& in, const Port& out, unsigned cls, uint8_t sl) const {
  if (cls == kMgmtClass) return kMgmtClass;
  return pair_sl2vl_[pair(in.number(), out.number())][sl];
}

void IbSwitch::on_rx(void* self, Port& in, rte_mbuf* m, unsigned cls) {
  auto& sw = *static_cast<IbSwitch*>(self);
  // The ingress port classified the frame by its LRH, so the LRH is there.
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint16_t dlid = wire::lrh_dlid(f);
  if (cls == kMgmtClass && sw.mgmt_fn_ && (dlid == wire::kPermissiveLid || sw.lft(dlid) == 0)) [[unlikely]]
    return sw.to_management(in, m, cls);
  if (dlid >= kMlidFirst && dlid <= kMlidLast) [[unlikely]] {
    const PortMask* ports = sw.mft(dlid);
    if (!ports) return sw.relay_error(in, m, cls);
    return sw.multicast(in, m, cls, *ports);
  }
  Port* out = sw.egress(in, sw.unicast_port(in, dlid, cls, f));
  if (!out) return sw.relay_error(in, m, cls);
  const unsigned out_cls = sw.out_class(in, *out, cls, wire::lrh_sl(f));
  if (out_cls == kVl15) return sw.relay_error(in, m, cls);
  // Moving to another VL rewrites the LRH and its VCRC; a frame whose VCRC
  // is already bad is a link error here. (Frames that keep their VL are not
  // re-checked: the HCA checks.)
  if (out_cls != cls && wire::ib_frame_set_vl(m, uint8_t(out_cls)) != wire::RxError::kOk)
    return sw.drop_bad_vcrc(in, m, cls);
  sw.forward(in, cls, *out, out_cls, m);
}

// Copies for every port but the last, which takes the packet itself and so
// keeps holding the ingress buffer (its credits return when it leaves), as
// the Ethernet bridge floods. A copy holds no ingress buffer, so nothing would
// bound it on a credit-gated queue: copies go only to a queue below the
// port's queue_pkts. Each copy gets the VL of its own (in, out) pair. Where
// any VL changes, the VCRC is checked once before anything is copied: a
// corrupt packet is a link error on its ingress port, never replicated (as
// for unicast, a packet that keeps its VL everywhere is left to the HCA).
void IbSwitch::multicast(Port& in, rte_mbuf* m, unsigned cls, const PortMask& ports) {
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint8_t sl = wire::lrh_sl(f);
  struct Target {
    Port* out;
    unsigned cls;
  } to[PortMask().size()];  // every port a mask can name
  unsigned n = 0;
  bool vl_changes = false;
  for (unsigned p = 1; p <= nports(); ++p) {
    if (!ports.test(p)) continue;
    Port* out = egress(in, p);  // never back out of the ingress port
    if (!out || !out->connected() || !out->link_up()) continue;  // a tree may outlive a link
    const unsigned out_cls = out_class(in, *out, cls, sl);
    if (out_cls == kVl15) continue;  // this SL may not take that port
    to[n++] = {out, out_cls};
    vl_changes |= out_cls != cls;
  }
  if (n == 0) return relay_error(in, m, cls);
  if (vl_changes && wire::ib_frame_set_vl(m, wire::lrh_vl(f)) != wire::RxError::kOk) {  // own VL: a check only
    ctr_.mcast_bad_vcrc.add();
    return drop_bad_vcrc(in, m, cls);
  }
  for (unsigned i = 0; i + 1 < n; ++i) send_copy(cls, *to[i].out, to[i].cls, m);
  const Target& last = to[n - 1];
  if (last.cls != cls && wire::ib_frame_set_vl(m, uint8_t(last.cls)) != wire::RxError::kOk)
    return drop_bad_vcrc(in, m, cls);
  ctr_.mcast_forwarded.add();
  ctr_.mcast_copies.add();
  forward(in, cls, *last.out, last.cls, m);
}

void IbSwitch::to_management(Port& in, rte_mbuf* m, unsigned cls) {
  in.release(cls, rte_pktmbuf_pkt_len(m));  // consumed here, as an HCA consumes
  ctr_.mgmt_received.add();
  mgmt_fn_(mgmt_ctx_, *this, in.number(), m);
}

bool IbSwitch::send_management(unsigned num, rte_mbuf* m) {
  if (num == 0 || num > nports() || !port(num).connected() || !port(num).link_up()) {
    rte_pktmbuf_free(m);
    return false;
  }
  if (!port(num).enqueue(kMgmtClass, m, sched_.now() + cfg_.latency_ns)) return false;  // counted there
  ctr_.mgmt_sent.add();
  return true;
}

IbSwitchSnapshot IbSwitch::snapshot() const {
  return {ctr_.mcast_forwarded.get(), ctr_.mcast_copies.get(), ctr_.mcast_no_room.get(), ctr_.mcast_no_mbuf.get(),
          ctr_.mcast_bad_vcrc.get(), ctr_.mgmt_received.get(), ctr_.mgmt_sent.get(),
          ctr_.mgmt_dropped.get(), adaptive_ctr_.rerouted.get(), adaptive_ctr_.flowlets.get()};
}

void IbSwitch::reset_counters() {
  for (Counter* c : {&ctr_.mcast_forwarded, &ctr_.mcast_copies, &ctr_.mcast_no_room, &ctr_.mcast_no_mbuf,
                     &ctr_.mcast_bad_vcrc, &ctr_.mgmt_received, &ctr_.mgmt_sent, &ctr_.mgmt_dropped})
    c->set(0);
  reset_adaptive_counters();
}

namespace {
constexpr CounterDef kIbSwitchDefs[] = {
    VF_COUNTER(IbSwitchSnapshot, mcast_forwarded, "mcast_forwarded", "mcast_forwarded", kPackets,
               "multicast packets replicated through the MulticastForwardingTable"),
    VF_COUNTER(IbSwitchSnapshot, mcast_copies, "mcast_copies", "mcast_copies", kPackets,
               "multicast copies handed to egress queues, the original included"),
    VF_COUNTER(IbSwitchSnapshot, mcast_no_room, "mcast_no_room", "mcast_no_room", kPackets,
               "multicast copies not made: the egress queue was full"),
    VF_COUNTER(IbSwitchSnapshot, mcast_no_mbuf, "mcast_no_mbuf", "mcast_no_mbuf", kPackets,
               "multicast copies not made: no mbuf"),
    VF_COUNTER(IbSwitchSnapshot, mcast_bad_vcrc, "mcast_bad_vcrc", "mcast_bad_vcrc", kPackets,
               "multicast packets dropped before replication: bad VCRC (also in PortRcvErrors)"),
    VF_COUNTER(IbSwitchSnapshot, mgmt_received, "mgmt_received", "mgmt_received", kPackets,
               "VL15 packets (SMPs) the switch's management port received"),
    VF_COUNTER(IbSwitchSnapshot, mgmt_sent, "mgmt_sent", "mgmt_sent", kPackets,
               "VL15 packets (SMPs) the switch's management port sent or forwarded"),
    VF_COUNTER(IbSwitchSnapshot, mgmt_dropped, "mgmt_dropped", "mgmt_dropped", kPackets,
               "VL15 packets the management port took and discarded (bad frame, a path it cannot follow)"),
    VF_COUNTER(IbSwitchSnapshot, ar_rerouted, "ar_rerouted", "ar_rerouted", kPackets,
               "packets adaptive routing sent to another port of their AR group than the LFT's"),
    VF_COUNTER(IbSwitchSnapshot, ar_flowlets, "ar_flowlets", "ar_flowlets", kEvents,
               "flowlets adaptive routing placed (flowlet mode): a flow's gap expired"),
};
static_assert(valid_counter_table<IbSwitchSnapshot>(kIbSwitchDefs));
}  // namespace

const CounterTable kIbSwitchCounters{kIbSwitchDefs};

void IbSwitch::send_copy(unsigned cls, Port& out, unsigned out_cls, rte_mbuf* m) {
  if (out.class_queued(out_cls) >= cfg_.port.queue_pkts) return ctr_.mcast_no_room.add();
  rte_mbuf* copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
  if (!copy) return ctr_.mcast_no_mbuf.add();
  // A copy whose VL cannot be rewritten has a bad VCRC; the original is
  // checked (and counted in PortRcvErrors) only where its own VL changes.
  if (out_cls != cls && wire::ib_frame_set_vl(copy, uint8_t(out_cls)) != wire::RxError::kOk) {
    ctr_.mcast_bad_vcrc.add();
    return rte_pktmbuf_free(copy);
  }
  ctr_.mcast_copies.add();
  out.enqueue(out_cls, copy, sched_.now() + cfg_.latency_ns);
}

}  // namespace vf::dp
