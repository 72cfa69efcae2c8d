#include "dataplane/fabric/eth_switch.hpp"

#include <climits>
#include <stdexcept>

#include "dataplane/wire/frame_peek.hpp"
#include "dataplane/wire/vlan_tag.hpp"

namespace vf::dp {

namespace {
constexpr CounterDef kBridgeDefs[] = {
    VF_COUNTER(BridgeSnapshot, fdb_learned, "fdb_learned", "fdb_learned", kEvents,
               "(VLAN, MAC) entries the bridge learned from source addresses"),
    VF_COUNTER(BridgeSnapshot, fdb_moved, "fdb_moved", "fdb_moved", kEvents,
               "learned stations seen again on another port"),
    VF_COUNTER(BridgeSnapshot, fdb_aged, "fdb_aged", "fdb_aged", kEvents, "FDB entries that aged out"),
    VF_COUNTER(BridgeSnapshot, fdb_table_full, "fdb_table_full", "fdb_table_full", kPackets,
               "source addresses not learned because the FDB was full"),
    VF_COUNTER(BridgeSnapshot, flooded, "flooded", "flooded", kPackets,
               "frames flooded: unknown unicast, broadcast and multicast"),
    VF_COUNTER(BridgeSnapshot, flood_copies, "flood_copies", "flood_copies", kPackets, "copies flooding sent"),
    VF_COUNTER(BridgeSnapshot, flood_no_mbuf, "flood_no_mbuf", "flood_no_mbuf", kPackets,
               "flood copies not made: no mbuf"),
    VF_COUNTER(BridgeSnapshot, flood_no_room, "flood_no_room", "flood_no_room", kPackets,
               "flood copies not made: the egress queue was full"),
    VF_COUNTER(BridgeSnapshot, vlan_filtered, "vlan_filtered", "vlan_filtered", kPackets,
               "frames dropped at ingress: their VLAN is not the port's"),
    VF_COUNTER(BridgeSnapshot, same_port, "same_port", "same_port", kPackets,
               "frames dropped: their destination was learned on the ingress port"),
    VF_COUNTER(BridgeSnapshot, no_egress, "no_egress", "no_egress", kPackets,
               "frames dropped: their destination's port could not take them (link down, VLAN), or no port "
               "of their VLAN could"),
    VF_COUNTER(BridgeSnapshot, no_tag_room, "no_tag_room", "no_tag_room", kPackets,
               "frames and flood copies dropped: no mbuf headroom to push their 802.1Q tag"),
};
static_assert(valid_counter_table<BridgeSnapshot>(kBridgeDefs));
}  // namespace

const CounterTable kBridgeCounters{kBridgeDefs};

BridgeSnapshot EthSwitch::snapshot() const {
  const FdbCounters& f = fdb_.counters();
  return {f.learned.get(),       f.moved.get(),          f.aged.get(),          f.table_full.get(),
          ctr_.flooded.get(),    ctr_.flood_copies.get(), ctr_.flood_no_mbuf.get(), ctr_.flood_no_room.get(),
          ctr_.vlan_filtered.get(), ctr_.same_port.get(), ctr_.no_egress.get(), ctr_.no_tag_room.get()};
}

EthSwitch::EthSwitch(Scheduler& sched, std::string name, const SwitchConfig& cfg)
    : Switch(sched, std::move(name), LinkLayer::kEthernet, cfg, this, &EthSwitch::on_rx), vlans_(cfg.nports) {}

void EthSwitch::reset_counters() {
  fdb_.reset_counters();
  for (Counter* c : {&ctr_.flooded, &ctr_.flood_copies, &ctr_.flood_no_mbuf, &ctr_.flood_no_room, &ctr_.vlan_filtered,
                     &ctr_.same_port, &ctr_.no_egress, &ctr_.no_tag_room})
    c->set(0);
  if (router_) router_->reset_counters();
}

void EthSwitch::add_fdb(const Mac& mac, unsigned port, uint16_t vid) {
  if (port == 0 || port > nports()) throw std::invalid_argument("switch " + name_ + ": FDB port out of range");
  if (vid < 1 || vid > kMaxVid) throw std::invalid_argument("switch " + name_ + ": FDB VLAN must be 1..4094");
  fdb_.add_static(vid, mac, uint16_t(port));
}

void EthSwitch::remove_fdb(const Mac& mac, uint16_t vid) { fdb_.remove(vid, mac); }

void EthSwitch::set_vlans(unsigned num, const PortVlans& v) {
  if (num == 0 || num > nports()) throw std::invalid_argument("switch " + name_ + ": VLAN port out of range");
  vlans_[num - 1] = v;
}

Router& EthSwitch::enable_routing(const RouterConfig& cfg, rte_mempool* pool) {
  if (router_) throw std::invalid_argument("switch " + name_ + " routes already");
  router_ = std::make_unique<Router>(*this, sched_, pool, cfg);
  PortVlans none;
  none.member.reset();
  none.untagged.reset();
  none.pvid = 0;
  for (const uint16_t p : cfg.routed_ports) vlans_[p - 1] = none;
  return *router_;
}

void EthSwitch::on_rx(void* self, Port& in, rte_mbuf* m, unsigned cls) {
  auto& sw = *static_cast<EthSwitch*>(self);
  // The ingress port classified the frame, so its Ethernet header (and its
  // tag, when it has one) is there.
  const uint8_t* f = wire::frame_data(m);
  const bool tagged = wire::frame_tagged(m);
  if (sw.router_ && sw.router_->routes_port(in.number())) return sw.router_->from_routed_port(in, m, cls, tagged);
  const PortVlans& iv = sw.vlans_[in.number() - 1];
  uint16_t vid = tagged ? wire::vlan_vid(f + wire::kEthTypeOffset) : 0;
  if (vid == 0) vid = iv.pvid;
  if (!iv.carries(vid)) [[unlikely]] {
    sw.ctr_.vlan_filtered.add();
    return sw.relay_error(in, m, cls);
  }
  const Nanos now = sw.sched_.now();
  const uint8_t* src = wire::eth_src(f);
  if (learnable_mac(src)) sw.fdb_.learn(vid, src, in.number(), now);
  if (sw.router_ && sw.router_->from_bridge(in, m, cls, vid, tagged)) return;
  const uint8_t* dst = wire::eth_dst(f);
  if (dst[0] & 1) return sw.flood(&in, m, cls, vid, tagged);
  const uint16_t to = sw.fdb_.lookup(vid, dst, now);
  if (to == 0) return sw.flood(&in, m, cls, vid, tagged);
  if (to == in.number()) {
    sw.ctr_.same_port.add();
    return sw.relay_error(in, m, cls);
  }
  Port& out = sw.port_at(to);
  if (!sw.may_leave(out, vid)) {
    sw.ctr_.no_egress.add();
    return sw.relay_error(in, m, cls);
  }
  const int8_t grown = sw.egress_tag(out, m, cls, vid, tagged);
  if (grown == INT8_MIN) [[unlikely]] {
    sw.ctr_.no_tag_room.add();
    return sw.relay_error(in, m, cls);
  }
  sw.forward(in, cls, out, cls, m, grown);
}

// Copies for every port but the last; the last takes the frame itself, so it
// keeps holding the ingress buffer (PFC sees it) and a frame with one
// recipient costs no copy. A copy holds no ingress buffer, so nothing would
// bound it on a lossless (unlimited) queue: copies go only to a queue below
// the port's queue_pkts, whatever its class.
void EthSwitch::bridge(Port* in, rte_mbuf* m, unsigned cls, uint16_t vid, bool tagged) {
  const uint16_t to = fdb_.lookup(vid, wire::eth_dst(wire::frame_data(m)), sched_.now());
  if (to == 0) return flood(in, m, cls, vid, tagged);
  Port& out = port_at(to);
  if (&out == in || !may_leave(out, vid)) {
    ctr_.no_egress.add();
    return drop_from(in, m, cls);
  }
  const int8_t grown = egress_tag(out, m, cls, vid, tagged);
  if (grown == INT8_MIN) [[unlikely]] {
    ctr_.no_tag_room.add();
    return drop_from(in, m, cls);
  }
  forward_from(in, cls, out, m, grown);
}

void EthSwitch::flood(Port* in, rte_mbuf* m, unsigned cls, uint16_t vid, bool tagged) {
  ctr_.flooded.add();
  Port* last = nullptr;
  for (unsigned n = 1; n <= nports(); ++n) {
    Port& out = port_at(n);
    if (&out == in || !may_leave(out, vid)) continue;
    if (last && last->class_queued(cls) >= cfg_.port.queue_pkts) {
      ctr_.flood_no_room.add();
    } else if (last) {
      rte_mbuf* copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
      if (!copy) {
        ctr_.flood_no_mbuf.add();
      } else if (egress_tag(*last, copy, cls, vid, tagged) == INT8_MIN) {
        ctr_.no_tag_room.add();
        rte_pktmbuf_free(copy);
      } else {
        ctr_.flood_copies.add();
        last->enqueue(cls, copy, sched_.now() + cfg_.latency_ns);
      }
    }
    last = &out;
  }
  if (!last) {
    ctr_.no_egress.add();
    return drop_from(in, m, cls);
  }
  const int8_t grown = egress_tag(*last, m, cls, vid, tagged);
  if (grown == INT8_MIN) {
    ctr_.no_tag_room.add();
    return drop_from(in, m, cls);
  }
  ctr_.flood_copies.add();
  forward_from(in, cls, *last, m, grown);
}

int8_t EthSwitch::egress_tag(const Port& out, rte_mbuf* m, unsigned cls, uint16_t vid, bool tagged) const {
  const bool untag = vlans_[out.number() - 1].untagged.test(vid);
  if (untag) {
    if (!tagged) return 0;
    wire::frame_pop_vlan(m);
    return -int8_t(wire::kVlanLen);
  }
  if (tagged) {
    wire::vlan_set_vid(rte_pktmbuf_mtod(m, uint8_t*) + wire::kEthTypeOffset, vid);
    return 0;
  }
  return wire::frame_push_vlan(m, uint8_t(cls & 7), vid) ? int8_t(wire::kVlanLen) : INT8_MIN;
}

}  // namespace vf::dp
