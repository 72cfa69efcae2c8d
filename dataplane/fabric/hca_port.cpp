#include "dataplane/fabric/hca_port.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include "core/multicast.hpp"
#include "dataplane/wire/ib_framing.hpp"
#include "dataplane/wire/lrh.hpp"
#include "dataplane/wire/roce_framing.hpp"
#include "dataplane/wire/transport.hpp"

namespace vf::dp {

namespace {
constexpr uint16_t kIbMulticastBase = 0xC000;  // multicast LIDs and the permissive LID

// RoCEv2 UDP source port in 0xC000..0xFFFF from a 20-bit flow label: the low
// 14 bits XOR the high 6, as Linux folds it, so flows spread over ECMP paths.
uint16_t udp_sport_from_flow(uint32_t fl) {
  const uint32_t low = (fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14);
  return uint16_t(low | 0xC000);
}
}  // namespace


HcaPort::HcaPort(Scheduler& sched, std::string name, rte_mempool* pool, const HcaPortConfig& cfg)
    : sched_(sched),
      pool_(pool),
      cfg_(cfg),
      port_(sched, std::move(name), cfg.link_layer, cfg.port),
      gateway_gid_(cfg.ipv4_gateway ? v4_mapped_gid(cfg.ipv4_gateway) : Gid{}),
      neighbours_(sched, *this, pool),
      space_timer_(&HcaPort::on_space_timer, this),
      loopback_(kLoopbackDepth),
      loopback_timer_(&HcaPort::on_loopback_timer, this),
      rx_held_(cfg.rx_rate_bps ? kRxHeldDepth : 1),
      rx_timer_(&HcaPort::on_rx_timer, this) {
  if (cfg.qos.data_vls == 0 || cfg.qos.data_vls > kNumDataClasses)
    throw std::invalid_argument("HCA port " + port_.name() + ": data_vls must be 1..8");
  if (cfg.lmc > 7) throw std::invalid_argument("HCA port " + port_.name() + ": LMC must be 0..7");
  if (!mtu_code(cfg.mtu))
    throw std::invalid_argument("HCA port " + port_.name() + ": MTU must be 256, 512, 1024, 2048 or 4096");
  cfg_.qos = default_port_qos(cfg.qos.data_vls);
  if (cfg_.link_layer == LinkLayer::kInfiniBand) port_.set_qos(&cfg_.qos);
  port_.set_owner(this, &HcaPort::on_rx, &HcaPort::on_tx_done);
}

HcaPort::~HcaPort() {
  sched_.disarm(space_timer_);
  sched_.disarm(loopback_timer_);
  while (!loopback_.empty()) rte_pktmbuf_free(loopback_.pop());
  sched_.disarm(rx_timer_);
  while (!rx_held_.empty()) rte_pktmbuf_free(rx_held_.pop().m);
}

void HcaPort::set_lid(uint16_t lid, uint8_t lmc) {
  if (lmc > 7) throw std::invalid_argument("HCA port " + name() + ": LMC must be 0..7");
  cfg_.lid = lid;
  cfg_.lmc = lmc;
}

void HcaPort::set_sl2vl(uint8_t sl, uint8_t vl) {
  if (!cfg_.qos.set_sl2vl(sl, vl)) throw std::invalid_argument("HCA port " + name() + ": bad SL→VL entry");
}

void HcaPort::set_state(PortState state, PhysState phys) {
  cfg_.state = state;
  cfg_.phys_state = phys;
}

void HcaPort::link_changed(bool up, PhysState phys_down) {
  if (!up) {
    drop_held_rx();
    neighbours_.flush();  // the kernel forgets its neighbours on carrier loss
    return set_state(PortState::kDown, phys_down);
  }
  set_state(cfg_.link_layer == LinkLayer::kInfiniBand ? PortState::kInit : PortState::kActive, PhysState::kLinkUp);
}

void HcaPort::set_vlarb(const VlArbTable& high, const VlArbTable& low, uint8_t high_limit) {
  if (!cfg_.qos.set_vlarb(high, low, high_limit))
    throw std::invalid_argument("HCA port " + name() + ": bad VL arbitration table");
}

void HcaPort::set_gid(unsigned index, const Gid& gid) {
  if (index >= 256) throw std::invalid_argument("HCA port " + name() + ": GID index must be < 256");
  if (cfg_.gids.size() <= index) cfg_.gids.resize(index + 1);
  cfg_.gids[index] = gid;
}

void HcaPort::set_neighbour(const Gid& gid, const Mac& mac) { neighbours_.set_permanent(gid, mac); }
void HcaPort::remove_neighbour(const Gid& gid) { neighbours_.remove(gid); }

// ---------------------------------------------------------------- transmit

rte_mbuf* HcaPort::alloc() { return rte_pktmbuf_alloc(pool_); }

unsigned HcaPort::tx_class(const Route& route) const {
  if (cfg_.link_layer == LinkLayer::kInfiniBand) {
    if (route.vl15) [[unlikely]]
      return kMgmtClass;
    const uint8_t vl = cfg_.qos.sl2vl[route.sl & 0xF];
    return vl == kVl15 ? kMgmtClass : vl;
  }
  const EthQos& q = cfg_.port.eth;
  if (q.trust_dscp) return q.dscp2prio[tclass(route) >> 2] & 7;
  return cfg_.vlan ? route.sl & 7 : 0;
}

bool HcaPort::can_transmit(const Route& route) const {
  const unsigned cls = tx_class(route);
  if (port_.class_queued(cls) < cfg_.port.queue_pkts) return true;
  refused_ |= 1u << cls;
  return false;
}

void HcaPort::drop_tx(rte_mbuf* m, Counter& why) {
  why.add();
  port_.counters().xmit_discards.add();
  rte_pktmbuf_free(m);
}

void HcaPort::transmit(rte_mbuf* m, const Route& route) {
  if (!cfg_.passes_data()) return drop_tx(m, port_down_drops_);
  // Loopback is decided where framing already looks the destination up: a
  // LID compare on IB, a neighbour-table miss on RoCE (no per-packet GID scan).
  bool own = false;
  const Gid* unresolved = nullptr;
  const bool framed =
      cfg_.link_layer == LinkLayer::kInfiniBand ? frame_ib(m, route, own) : frame_roce(m, route, own, unresolved);
  if (!framed) return;
  if (own) [[unlikely]]
    return loop_back(m);
  if (route.mcast_loopback) [[unlikely]] {
    // The copy is made after framing, so the receive side checks the CRCs
    // of exactly what went on the wire.
    if (rte_mbuf* c = rte_pktmbuf_copy(m, pool_, 0, UINT32_MAX))
      loop_back(c);
    else
      loopback_drops_.add();
  }
  if (unresolved) [[unlikely]]
    return neighbours_.park(*unresolved, m, tx_class(route));
  port_.enqueue(tx_class(route), m);
}

void HcaPort::resolve(const Route& route, std::function<void(int err)> done) {
  // What frame_roce() would look up; a bad GID index fails there, as before.
  if (cfg_.link_layer != LinkLayer::kEthernet || !route.is_global || route.sgid_index >= cfg_.gids.size() ||
      is_multicast_gid(route.dgid.data()) || is_own_gid(route))
    return done(0);
  const Gid* hop = next_hop(route);
  if (!hop) return done(ENETUNREACH);
  neighbours_.resolve(*hop, std::move(done));
}

bool HcaPort::frame_ib(rte_mbuf* m, const Route& av, bool& own) {
  own = is_own_lid(av.dlid);
  wire::IbRoute r;
  r.sl = av.vl15 ? 0 : av.sl & 0xF;
  r.vl = av.vl15 ? kVl15 : cfg_.qos.sl2vl[r.sl];
  if (r.vl == kVl15 && !av.vl15) return drop_tx(m, tx_no_route_), false;  // apps' SLs never reach VL15
  const uint16_t path_mask = uint16_t((1u << cfg_.lmc) - 1);
  r.slid = uint16_t((cfg_.lid & ~path_mask) | (av.src_path_bits & path_mask));
  if (av.vl15 && cfg_.lid == 0) r.slid = 0xFFFF;
  r.dlid = av.dlid;
  if (av.is_global) {
    if (av.sgid_index >= cfg_.gids.size()) return drop_tx(m, tx_no_route_), false;
    r.grh = true;
    std::memcpy(r.sgid, cfg_.gids[av.sgid_index].data(), 16);
    std::memcpy(r.dgid, av.dgid.data(), 16);
    r.traffic_class = av.traffic_class;
    r.hop_limit = av.hop_limit;
    r.flow_label = av.flow_label & 0xFFFFF;
  }
  if (!wire::ib_encapsulate(m, r)) return drop_tx(m, tx_frame_errors_), false;
  return true;
}

const Gid* HcaPort::next_hop(const Route& r) const {
  if (cfg_.ipv4_prefix_len == 0 || !is_v4_mapped(r.dgid)) return &r.dgid;
  const Gid& sgid = cfg_.gids[r.sgid_index];
  const uint32_t mask = ~0u << (32 - cfg_.ipv4_prefix_len);
  if (!is_v4_mapped(sgid) || ((v4_of(r.dgid) ^ v4_of(sgid)) & mask) == 0) return &r.dgid;
  return cfg_.ipv4_gateway ? &gateway_gid_ : nullptr;
}

bool HcaPort::owns(const Gid& ip) const { return std::find(cfg_.gids.begin(), cfg_.gids.end(), ip) != cfg_.gids.end(); }

Gid HcaPort::source(bool ipv4) const {
  for (const Gid& g : cfg_.gids)
    if (g != Gid{} && is_v4_mapped(g) == ipv4) return g;
  return Gid{};
}

bool HcaPort::frame_roce(rte_mbuf* m, const Route& av, bool& own, const Gid*& unresolved) {
  if (!av.is_global || av.sgid_index >= cfg_.gids.size()) return drop_tx(m, tx_no_route_), false;
  const Gid& dgid = av.dgid;
  Mac dst{};  // zeros until the neighbour answers (Neighbours::park)
  if (is_multicast_gid(dgid.data())) [[unlikely]] {
    // A group's frames go to its group MAC on the local segment: no
    // neighbour, no gateway (the routers here do not forward multicast).
    multicast_mac(dgid.data(), dst.data());
  } else {
    const Gid* hop = next_hop(av);
    if (!hop) return drop_tx(m, tx_no_route_), false;  // off the subnet, no gateway: ENETUNREACH
    bool resolved = neighbours_.lookup(*hop, dst);
    // A link-local GID resolves to its MAC without a lookup, our own included.
    own = resolved ? dst == cfg_.mac : is_own_gid(av);
    if (own) {
      dst = cfg_.mac;
      resolved = true;
    }
    if (!resolved) unresolved = hop;
  }
  wire::RoceRoute r;
  std::memcpy(r.src_mac, cfg_.mac.data(), 6);
  std::memcpy(r.dst_mac, dst.data(), 6);
  r.vlan = cfg_.vlan;
  r.vid = cfg_.vlan_id;
  r.pcp = uint8_t(tx_class(av));
  std::memcpy(r.sgid, cfg_.gids[av.sgid_index].data(), 16);
  std::memcpy(r.dgid, dgid.data(), 16);
  r.traffic_class = tclass(av);
  r.hop_limit = av.hop_limit;
  uint32_t fl = av.flow_label & 0xFFFFF;
  if (fl == 0 && rte_pktmbuf_data_len(m) >= wire::kBthLen) {
    const uint32_t dqpn = wire::bth_dqpn(rte_pktmbuf_mtod(m, const uint8_t*));
    fl = (dqpn ^ (dqpn >> 20)) & 0xFFFFF;
  }
  r.udp_sport = udp_sport_from_flow(fl);
  if (!wire::roce_encapsulate(m, r)) return drop_tx(m, tx_frame_errors_), false;
  return true;
}

void HcaPort::on_tx_done(void* self, Port&) {
  auto& h = *static_cast<HcaPort*>(self);
  uint32_t roomy = 0;
  for (uint32_t r = h.refused_; r; r &= r - 1) {
    const unsigned cls = unsigned(__builtin_ctz(r));
    if (h.port_.class_queued(cls) < h.cfg_.port.queue_pkts) roomy |= 1u << cls;
  }
  if (roomy) {
    h.refused_ &= ~roomy;
    if (h.space_fn_) h.sched_.arm(h.space_timer_, h.sched_.now());
  }
}

void HcaPort::on_space_timer(Timer& t, Nanos) {
  auto& h = CtxTimer::owner<HcaPort>(t);
  if (h.space_fn_) h.space_fn_(h.space_ctx_);
}

// ---------------------------------------------------------------- receive

bool HcaPort::for_us(const rte_mbuf* m) const {
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  if (cfg_.link_layer == LinkLayer::kInfiniBand) {
    const uint16_t dlid = wire::lrh_dlid(f);  // the Port classified by the LRH: it is there
    if (dlid >= kIbMulticastBase) return true;  // multicast / permissive: the engine decides
    const uint16_t path_mask = uint16_t((1u << cfg_.lmc) - 1);
    return cfg_.lid != 0 && (dlid & ~path_mask) == (cfg_.lid & ~path_mask);
  }
  // Our MAC, or a group address (bit 0 of the first octet).
  return std::memcmp(f, cfg_.mac.data(), 6) == 0 || (f[0] & 1);
}

void HcaPort::on_rx(void* self, Port& p, rte_mbuf* m, unsigned cls) {
  auto& h = *static_cast<HcaPort*>(self);
  // The NIC's MAC filter comes before its buffer: flooded frames for other
  // stations neither wait for the host nor push back on the link.
  if (h.cfg_.rx_rate_bps && h.for_us(m)) return h.hold_rx(m, cls);
  // The engine consumes the packet now: the receive buffer frees at once.
  p.release(cls, rte_pktmbuf_pkt_len(m));
  h.receive_frame(m, &p.counters());
}

void HcaPort::receive_frame(rte_mbuf* m, PortCounters* wire) {
  if (!cfg_.passes_data()) {
    port_down_drops_.add();
    rte_pktmbuf_free(m);
    return;
  }
  if (!for_us(m)) {
    rx_not_for_us_.add();
    // IB: a DLID that is not ours is a receive error. Ethernet: flooded
    // unicast for another station, which a NIC's MAC filter drops silently.
    if (wire && cfg_.link_layer == LinkLayer::kInfiniBand) wire->rcv_errors.add();
    rte_pktmbuf_free(m);
    return;
  }
  if (cfg_.link_layer == LinkLayer::kEthernet && neighbours_.receive(m)) return;
  wire::RxMeta meta;
  const wire::RxError e = cfg_.link_layer == LinkLayer::kInfiniBand ? wire::ib_decapsulate(m, &meta)
                                                                    : wire::roce_decapsulate(m, &meta);
  if (e != wire::RxError::kOk) {
    rx_errors_[unsigned(e)].add();
    if (wire) wire->rcv_errors.add();
    rte_pktmbuf_free(m);
    return;
  }
  if (!rx_fn_) {
    rx_no_receiver_.add();
    if (wire) wire->rcv_discards.add();
    rte_pktmbuf_free(m);
    return;
  }
  rx_fn_(rx_ctx_, m, meta);
}

HcaPortSnapshot HcaPort::snapshot(Nanos now) const {
  HcaPortSnapshot s{};
  s.port = port_.snapshot(now);
  s.tx_no_route = tx_no_route_.get();
  s.tx_frame_errors = tx_frame_errors_.get();
  s.rx_not_for_us = rx_not_for_us_.get();
  s.rx_no_receiver = rx_no_receiver_.get();
  s.port_down_drops = port_down_drops_.get();
  s.loopback_pkts = loopback_pkts_.get();
  s.loopback_drops = loopback_drops_.get();
  s.rx_discards_phy = rx_discards_phy_.get();
  const NeighbourCounters& n = neighbours_.counters();
  s.neigh_solicits_sent = n.solicits_sent.get();
  s.neigh_replies_sent = n.replies_sent.get();
  s.neigh_resolved = n.resolved.get();
  s.neigh_failed = n.failed.get();
  s.neigh_unresolved_discards = n.unresolved_discards.get();
  s.neigh_rx_invalid = n.rx_invalid.get();
  for (unsigned i = 0; i < wire::kRxErrorCount; ++i) s.rx_errors[i] = rx_errors_[i].get();
  return s;
}

void HcaPort::reset_counters(Nanos now) {
  reset(port_.counters(), now);
  for (Counter* k : {&tx_no_route_, &tx_frame_errors_, &rx_not_for_us_, &rx_no_receiver_, &port_down_drops_,
                     &loopback_pkts_, &loopback_drops_, &rx_discards_phy_})
    k->set(0);
  for (Counter& k : rx_errors_) k.set(0);
  neighbours_.reset_counters();
}

namespace {
constexpr CounterDef kHcaPortDefs[] = {
    VF_COUNTER(HcaPortSnapshot, tx_no_route, "tx_no_route", "tx_no_route", kPackets,
               "packets dropped before framing: bad SGID index, RoCE without GRH, SL to VL15"),
    VF_COUNTER(HcaPortSnapshot, tx_frame_errors, "tx_frame_errors", "tx_frame_errors", kPackets,
               "packets the encapsulation refused (segmented, too long, no head- or tailroom)"),
    VF_COUNTER(HcaPortSnapshot, rx_not_for_us, "rx_not_for_us", "rx_not_for_us", kPackets,
               "frames addressed to another LID (a PortRcvError) or MAC (flooded unicast, dropped as a NIC's filter does)"),
    VF_COUNTER(HcaPortSnapshot, rx_no_receiver, "rx_no_receiver", "rx_no_receiver", kPackets,
               "frames that arrived before an engine was attached"),
    VF_COUNTER(HcaPortSnapshot, port_down_drops, "port_down_drops", "port_down_drops", kPackets,
               "frames refused either way while the port was administratively down"),
    VF_COUNTER(HcaPortSnapshot, loopback_pkts, "loopback_pkts", "loopback_packets", kPackets,
               "packets to the port's own LID or GID, turned round inside the HCA (not on the wire)"),
    VF_COUNTER(HcaPortSnapshot, loopback_drops, "loopback_drops", "loopback_drops", kPackets,
               "looped-back packets dropped because the loopback queue was full"),
    VF_COUNTER(HcaPortSnapshot, rx_discards_phy, "rx_discards_phy", "rx_discards_phy", kPackets,
               "received frames dropped because the NIC's receive buffer was full (a host slower than its link)"),
    VF_COUNTER(HcaPortSnapshot, neigh_solicits_sent, "neigh_solicits_sent", "neigh_solicits_sent", kPackets,
               "ARP requests and IPv6 Neighbour Solicitations sent to resolve a destination MAC"),
    VF_COUNTER(HcaPortSnapshot, neigh_replies_sent, "neigh_replies_sent", "neigh_replies_sent", kPackets,
               "ARP replies and Neighbour Advertisements sent for the port's own addresses"),
    VF_COUNTER(HcaPortSnapshot, neigh_resolved, "neigh_resolved", "neigh_resolved", kEvents,
               "neighbours whose MAC was learned from the wire"),
    VF_COUNTER(HcaPortSnapshot, neigh_failed, "neigh_failed", "neigh_failed", kEvents,
               "neighbours that did not answer 3 solicitations 1 s apart"),
    VF_COUNTER(HcaPortSnapshot, neigh_unresolved_discards, "unresolved_discards", "neigh_unresolved_discards",
               kPackets, "packets dropped waiting for a neighbour: it never answered, or over 101 were waiting"),
    VF_COUNTER(HcaPortSnapshot, neigh_rx_invalid, "neigh_rx_invalid", "neigh_rx_invalid", kPackets,
               "ARP and ICMPv6 frames that are malformed or not Neighbour Discovery"),
};
static_assert(valid_counter_table<HcaPortSnapshot>(kHcaPortDefs));

// HcaPortSnapshot::rx_errors[e]: named "rx_" + wire::rx_error_name(e).
constexpr CounterDef rx_error_row(wire::RxError e, std::string_view name, std::string_view help) {
  return {name, name, CounterUnit::kPackets, help,
          offsetof(HcaPortSnapshot, rx_errors) + sizeof(uint64_t) * size_t(e)};
}
using wire::RxError;
constexpr CounterDef kRxErrorDefs[] = {
    rx_error_row(RxError::kTruncated, "rx_truncated", "frames shorter than their own length fields"),
    rx_error_row(RxError::kNonContiguous, "rx_non_contiguous", "multi-segment frames framing cannot parse"),
    rx_error_row(RxError::kBadLength, "rx_bad_length", "frames whose length fields disagree or are too small"),
    rx_error_row(RxError::kBadVersion, "rx_bad_version", "frames with a wrong LRH, GRH or IP version"),
    rx_error_row(RxError::kBadLnh, "rx_bad_lnh", "IB frames whose LRH LNH is raw or non-IBA IP"),
    rx_error_row(RxError::kBadNextHeader, "rx_bad_next_header", "IB frames whose GRH NxtHdr is not IBA transport"),
    rx_error_row(RxError::kBadVcrc, "rx_bad_vcrc", "IB frames with a bad VCRC"),
    rx_error_row(RxError::kBadIcrc, "rx_bad_icrc", "frames with a bad ICRC"),
    rx_error_row(RxError::kBadEtherType, "rx_bad_ethertype", "Ethernet frames that are neither IPv4 nor IPv6"),
    rx_error_row(RxError::kBadIpChecksum, "rx_bad_ip_checksum", "IPv4 headers with a bad checksum"),
    rx_error_row(RxError::kFragmented, "rx_fragmented", "IPv4 fragments (RoCEv2 is never fragmented)"),
    rx_error_row(RxError::kNotRoce, "rx_not_roce", "IP frames that are not UDP to port 4791"),
    rx_error_row(RxError::kBadUdpChecksum, "rx_bad_udp_checksum", "non-zero UDP checksums that do not match"),
};
static_assert(std::size(kRxErrorDefs) == wire::kRxErrorCount - 1, "one row per RxError but kOk");
static_assert(valid_counter_table<HcaPortSnapshot>(kRxErrorDefs));
}  // namespace

const CounterTable kHcaPortCounters{kHcaPortDefs};
const CounterTable kRxErrorCounters{kRxErrorDefs};

}  // namespace vf::dp
