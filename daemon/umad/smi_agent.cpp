#include "daemon/umad/smi_agent.hpp"

#include <cstring>

#include "daemon/mad/dr_smp.hpp"
#include "daemon/umad/model_build.hpp"
#include "daemon/mad/sma.hpp"
#include "daemon/fabric/topology.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "dataplane/fabric/ib_switch.hpp"
#include "dataplane/wire/ib_framing.hpp"
#include "dataplane/wire/lrh.hpp"
#include "dataplane/wire/opcode.hpp"
#include "dataplane/wire/transport.hpp"
#include "device/engine/hca.hpp"

namespace vf {
namespace {

constexpr unsigned kMadAt = wire::kBthLen + wire::kDethLen;  // a UD SEND Only's payload

bool is_dr(const mad::Mad& m) { return mad::mgmt_class(m) == mad::kClassSmiDr; }

}  // namespace

SmiAgent::SmiAgent(Topology& topo, const config::Config& cfg, Deliver deliver)
    : topo_(topo),
      cfg_(cfg),
      deliver_(std::move(deliver)),
      refused_(std::make_unique<std::atomic<uint64_t>[]>(topo.vhcas().size())),
      dropped_(std::make_unique<std::atomic<uint64_t>[]>(topo.vhcas().size())) {}

void SmiAgent::attach() {
  for (size_t fi = 0; fi < cfg_.fabrics.size(); ++fi) {
    if (cfg_.fabrics[fi].link_layer != config::LinkLayer::Infiniband) continue;
    for (const auto& s : topo_.fabric(fi).switches()) {
      auto& sw = static_cast<dp::IbSwitch&>(*s);
      switch_fabric_[&sw] = fi;
      sw.set_management(&SmiAgent::on_switch, this);
    }
  }
  vhca_fabric_.assign(topo_.vhcas().size(), 0);
  for (size_t i = 0; i < topo_.vhcas().size(); ++i) {
    const auto& v = topo_.vhcas()[i];
    for (size_t fi = 0; fi < cfg_.fabrics.size(); ++fi)
      if (cfg_.fabrics[fi].name == v.fabric) vhca_fabric_[i] = fi;
    if (v.link_layer != config::LinkLayer::Infiniband) continue;
    topo_.engine(i).on_smi([this, i](const uint8_t* mad, const engine::SmiSource& from) { at_vhca(i, mad, from); });
  }
}

void SmiAgent::add_drops(size_t vhca, UmadStats& s) const {
  if (vhca >= topo_.vhcas().size()) return;
  s.refused += refused_[vhca].load(std::memory_order_relaxed);
  s.unroutable += dropped_[vhca].load(std::memory_order_relaxed);
}

void SmiAgent::count(std::atomic<uint64_t>* per_vhca, size_t fabric, uint16_t requester) {
  if (requester == 0 || requester >= 0xC000) return;  // the permissive LID: nobody to blame
  for (size_t i = 0; i < vhca_fabric_.size(); ++i)
    if (vhca_fabric_[i] == fabric && topo_.port_info(i).lid == requester)
      return void(per_vhca[i].fetch_add(1, std::memory_order_relaxed));
}

bool SmiAgent::answer(size_t fabric, const std::string& node, uint8_t in_port, mad::Mad& m, uint16_t requester) {
  const mad::MadModel model = mad::build_model(topo_, cfg_.fabrics[fabric], fabric, /*with_counters=*/false);
  for (size_t n = 0; n < model.nodes.size(); ++n) {
    if (model.nodes[n].name != node) continue;
    if (mad::sma_process(model, n, in_port, m) == mad::Verdict::kRespond) return true;
    count(refused_.get(), fabric, requester);
    return false;
  }
  drop(fabric, requester);
  return false;
}

bool SmiAgent::send_from_vhca(size_t vhca, const mad::Mad& m, uint16_t dlid) {
  if (topo_.engine(vhca).send_smi(m.data(), dlid)) return true;
  // The port's VL15 queue is full, or the port is down: lost, as on a real port.
  dropped_[vhca].fetch_add(1, std::memory_order_relaxed);
  return false;
}

void SmiAgent::originate(size_t vhca, uint16_t dlid, mad::Mad m) {
  const size_t fabric = vhca_fabric_.at(vhca);
  const std::string& self = topo_.vhcas()[vhca].name;
  const uint16_t own = topo_.port_info(vhca).lid;
  if (is_dr(m)) {
    const mad::DrAction a = mad::dr_start(m);
    if (a.step == mad::DrStep::kOut && a.port == 1) {
      send_from_vhca(vhca, m, wire::kPermissiveLid);
    } else if (a.step == mad::DrStep::kLocal) {  // hop count 0: this port's own SMA
      if (answer(fabric, self, 1, m, own) && mad::dr_respond(m).step == mad::DrStep::kLocal)
        deliver_(vhca, m, wire::kPermissiveLid);
    } else {
      dropped_[vhca].fetch_add(1, std::memory_order_relaxed);  // a CA has port 1 only; no LID-routed parts
    }
    return;
  }
  if (dlid == own && own != 0) {  // to itself: answered inside the HCA
    if (answer(fabric, self, 1, m, own)) deliver_(vhca, m, own);
    return;
  }
  send_from_vhca(vhca, m, dlid);
}

void SmiAgent::at_vhca(size_t vhca, const uint8_t* bytes, const engine::SmiSource& from) {
  mad::Mad m;
  std::memcpy(m.data(), bytes, m.size());
  const size_t fabric = vhca_fabric_.at(vhca);
  if (is_dr(m)) {
    const mad::DrAction a = mad::dr_receive(m, /*is_switch=*/false, 1, 1);
    if (a.step != mad::DrStep::kLocal) return drop(fabric, from.slid);
    if (mad::dr_direction(m)) return deliver_(vhca, m, wire::kPermissiveLid);  // our requester's response
    if (!answer(fabric, topo_.vhcas()[vhca].name, 1, m, from.slid)) return;
    const mad::DrAction back = mad::dr_respond(m);
    if (back.step != mad::DrStep::kOut || back.port != 1) return drop(fabric, from.slid);
    send_from_vhca(vhca, m, wire::kPermissiveLid);
    return;
  }
  if (mad::mgmt_class(m) != mad::kClassSmiLid) return drop(fabric, from.slid);
  if (mad::is_response(m)) return deliver_(vhca, m, from.slid);
  if (from.slid == 0 || from.slid == wire::kPermissiveLid) return;  // no way back
  if (answer(fabric, topo_.vhcas()[vhca].name, 1, m, from.slid)) send_from_vhca(vhca, m, from.slid);
}

void SmiAgent::on_switch(void* self, dp::IbSwitch& sw, unsigned in_port, rte_mbuf* m) {
  auto& agent = *static_cast<SmiAgent*>(self);
  const auto it = agent.switch_fabric_.find(&sw);
  if (it == agent.switch_fabric_.end()) return rte_pktmbuf_free(m);
  agent.at_switch(it->second, sw, in_port, m);
}

void SmiAgent::at_switch(size_t fabric, dp::IbSwitch& sw, unsigned in_port, rte_mbuf* m) {
  // The frame came off a link: every field is checked before the MAD is read.
  wire::RxMeta meta;
  const bool framed = (m->nb_segs == 1 || rte_pktmbuf_linearize(m) == 0) &&
                      wire::ib_decapsulate(m, &meta) == wire::RxError::kOk &&
                      rte_pktmbuf_data_len(m) >= kMadAt + mad::kMadSize;
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  if (!framed || wire::bth_opcode(p) != wire::opcode(wire::Transport::kUD, wire::kSendOnly) ||
      wire::bth_dqpn(p) != engine::kSmiQpn) {
    rte_pktmbuf_free(m);
    sw.count_management_drop();
    return drop(fabric, framed ? meta.slid : 0);
  }
  mad::Mad mad;
  std::memcpy(mad.data(), p + kMadAt, mad.size());
  const uint16_t requester = meta.slid;  // a vHCA's LID while a request travels
  const auto reframe = [&](unsigned port, uint16_t slid, uint16_t dlid) {
    std::memcpy(rte_pktmbuf_mtod(m, uint8_t*) + kMadAt, mad.data(), mad.size());
    if (!send_from_switch(sw, port, m, slid, dlid)) {
      sw.count_management_drop();
      drop(fabric, requester);
    }
  };
  const auto discard = [&] {
    rte_pktmbuf_free(m);
    sw.count_management_drop();
    drop(fabric, requester);
  };
  const uint16_t own = topo_.subnet_manager(fabric) ? topo_.subnet_manager(fabric)->lids().lid(sw.name()) : 0;
  if (is_dr(mad)) {
    const bool returning = mad::dr_direction(mad);
    const mad::DrAction a = mad::dr_receive(mad, /*is_switch=*/true, uint8_t(in_port), sw.nports());
    // Passed on with its LRH as it came: the requester's SLID on the way out.
    if (a.step == mad::DrStep::kOut) return reframe(a.port, meta.slid, wire::kPermissiveLid);
    // A response whose requester would be this switch: none here sends SMPs.
    if (a.step != mad::DrStep::kLocal || returning) return discard();
    if (!answer(fabric, sw.name(), uint8_t(in_port), mad, requester)) return rte_pktmbuf_free(m);  // refused
    const mad::DrAction back = mad::dr_respond(mad);
    if (back.step != mad::DrStep::kOut) return discard();
    return reframe(back.port, wire::kPermissiveLid, wire::kPermissiveLid);
  }
  // LID-routed: a request for this switch; its response goes back to the
  // requester's LID through this switch's own LFT.
  const bool request = mad::mgmt_class(mad) == mad::kClassSmiLid && !mad::is_response(mad);
  const uint8_t out = meta.slid < dp::IbSwitch::kLftSize ? sw.lft(meta.slid) : dp::IbSwitch::kNoRoute;
  if (!request || out == 0 || out == dp::IbSwitch::kNoRoute) return discard();
  if (!answer(fabric, sw.name(), uint8_t(in_port), mad, requester)) return rte_pktmbuf_free(m);  // refused
  reframe(out, own, meta.slid);
}

bool SmiAgent::send_from_switch(dp::IbSwitch& sw, unsigned port, rte_mbuf* m, uint16_t slid, uint16_t dlid) {
  wire::IbRoute r;
  r.vl = wire::kVl15;
  r.slid = slid;
  r.dlid = dlid;
  if (!wire::ib_encapsulate(m, r)) {
    rte_pktmbuf_free(m);
    return false;
  }
  return sw.send_management(port, m);  // false: that port's link is down or its queue full
}

}  // namespace vf
