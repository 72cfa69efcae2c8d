#include "dataplane/fabric/router.hpp"

#include <stdexcept>
#include <string>

#include "dataplane/fabric/eth_switch.hpp"
#include "dataplane/wire/arp.hpp"
#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/frame_peek.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "dataplane/wire/vlan_tag.hpp"

namespace vf::dp {

namespace {
constexpr CounterDef kRouterDefs[] = {
    VF_COUNTER(RouterSnapshot, routed, "routed", "routed", kPackets, "IPv4 packets the router forwarded"),
    VF_COUNTER(RouterSnapshot, header_errors, "ip_header_errors", "ip_header_errors", kPackets,
               "packets to the router's MAC dropped for a bad IPv4 version, length or checksum"),
    VF_COUNTER(RouterSnapshot, ttl_exceeded, "ttl_exceeded", "ttl_exceeded", kPackets,
               "packets dropped because their TTL was 0 or 1 (no ICMP is sent)"),
    VF_COUNTER(RouterSnapshot, no_route, "no_route", "no_route", kPackets,
               "packets dropped because no prefix of the routing table held their destination"),
    VF_COUNTER(RouterSnapshot, no_next_hop, "no_next_hop", "no_next_hop", kPackets,
               "packets dropped because the link of every next hop of their route was down"),
    VF_COUNTER(RouterSnapshot, to_router, "to_router", "to_router", kPackets,
               "IP packets addressed to the router itself, dropped (it answers only ARP)"),
    VF_COUNTER(RouterSnapshot, not_routable, "not_routable", "not_routable", kPackets,
               "frames on a routed port or to the router's MAC that are neither IPv4 nor ARP for it"),
    VF_COUNTER(RouterSnapshot, arp_requests, "router_arp_requests", "router_arp_requests", kPackets,
               "ARP requests the gateway sent to resolve a host"),
    VF_COUNTER(RouterSnapshot, arp_replies, "router_arp_replies", "router_arp_replies", kPackets,
               "ARP replies the gateway sent for its address"),
    VF_COUNTER(RouterSnapshot, arp_resolved, "router_arp_resolved", "router_arp_resolved", kEvents,
               "hosts whose MAC the gateway learned"),
    VF_COUNTER(RouterSnapshot, arp_failed, "router_arp_failed", "router_arp_failed", kEvents,
               "hosts that did not answer 3 ARP requests 1 s apart"),
    VF_COUNTER(RouterSnapshot, unresolved_discards, "router_unresolved_discards", "router_unresolved_discards",
               kPackets, "packets dropped waiting for a host's ARP answer"),
    VF_COUNTER(RouterSnapshot, ar_rerouted, "router_ar_rerouted", "router_ar_rerouted", kPackets,
               "packets adaptive routing sent to another ECMP member than the flow hash's"),
    VF_COUNTER(RouterSnapshot, ar_flowlets, "router_ar_flowlets", "router_ar_flowlets", kEvents,
               "flowlets adaptive routing placed (flowlet mode): a flow's gap expired"),
};
static_assert(valid_counter_table<RouterSnapshot>(kRouterDefs));
}  // namespace

const CounterTable kRouterCounters{kRouterDefs};

RouterSnapshot Router::snapshot() const {
  const NeighbourCounters& n = neigh_.counters();
  return {ctr_.routed.get(),       ctr_.header_errors.get(), ctr_.ttl_exceeded.get(), ctr_.no_route.get(),
          ctr_.no_next_hop.get(),  ctr_.to_router.get(),     ctr_.not_routable.get(), n.solicits_sent.get(),
          n.replies_sent.get(),    n.resolved.get(),         n.failed.get(),          n.unresolved_discards.get(),
          sw_.adaptive_counters().rerouted.get(), sw_.adaptive_counters().flowlets.get()};
}

Router::Router(EthSwitch& sw, Scheduler& sched, rte_mempool* pool, const RouterConfig& cfg)
    : sw_(sw), cfg_(cfg), neigh_(sched, *this, pool) {
  for (const uint16_t p : cfg.routed_ports) {
    if (p == 0 || p > sw.nports()) throw std::invalid_argument("switch " + sw.name() + ": routed port out of range");
    routed_.set(p);
  }
  if (cfg.gateway) {
    if (cfg.prefix_len == 0 || cfg.prefix_len > 30)
      throw std::invalid_argument("switch " + sw.name() + ": the gateway's prefix length must be 1..30");
    if (cfg.vid < 1 || cfg.vid > kMaxVid) throw std::invalid_argument("switch " + sw.name() + ": VLAN must be 1..4094");
  }
  set_routes({});
}

void Router::set_routes(std::vector<Ipv4Route> routes) {
  for (const Ipv4Route& r : routes)
    for (const NextHop& h : r.hops)
      if (!routes_port(h.port))
        throw std::invalid_argument("switch " + sw_.name() + ": next hop on port " + std::to_string(h.port) +
                                    ", which is not a routed port");
  if (cfg_.gateway) {
    Ipv4Route connected;
    connected.len = cfg_.prefix_len;
    connected.prefix = cfg_.gateway & prefix_mask(cfg_.prefix_len);
    connected.connected = true;
    routes.push_back(std::move(connected));
  }
  routes_.set(std::move(routes));
}

std::vector<std::pair<uint32_t, Mac>> Router::neighbours() const {
  std::vector<std::pair<uint32_t, Mac>> out;
  for (const auto& [ip, mac] : neigh_.entries())
    if (is_v4_mapped(ip)) out.emplace_back(v4_of(ip), mac);
  return out;
}

void Router::reset_counters() {
  for (Counter* c : {&ctr_.routed, &ctr_.header_errors, &ctr_.ttl_exceeded, &ctr_.no_route, &ctr_.no_next_hop,
                     &ctr_.to_router, &ctr_.not_routable})
    c->set(0);
  neigh_.reset_counters();
  sw_.reset_adaptive_counters();
}

void Router::drop(Port& in, rte_mbuf* m, unsigned cls, Counter& why) {
  why.add();
  sw_.relay_error(in, m, cls);
}

void Router::from_routed_port(Port& in, rte_mbuf* m, unsigned cls, bool tagged) {
  if (!wire::eth_addr_equal(wire::eth_dst(wire::frame_data(m)), cfg_.mac.data())) [[unlikely]]
    return drop(in, m, cls, ctr_.not_routable);
  route(in, m, cls, tagged, false);
}

bool Router::from_bridge(Port& in, rte_mbuf* m, unsigned cls, uint16_t vid, bool tagged) {
  if (!cfg_.gateway || vid != cfg_.vid) return false;
  const uint8_t* f = wire::frame_data(m);
  if (wire::eth_addr_equal(wire::eth_dst(f), cfg_.mac.data())) {
    route(in, m, cls, tagged, true);
    return true;
  }
  // A broadcast ARP request for the gateway's address is the router's alone
  // to answer; every other broadcast is the bridge's.
  const unsigned l2 = wire::kEthHdrLen + (tagged ? wire::kVlanLen : 0);
  if (!(wire::eth_dst(f)[0] & 1) || wire::get16(f + l2 - 2) != wire::kEtherTypeArp) return false;
  const auto arp = wire::arp_parse(f + l2, rte_pktmbuf_data_len(m) - l2);
  if (!arp || arp->op != wire::kArpRequest || arp->tpa != cfg_.gateway) return false;
  to_neighbours(in, m, cls);
  return true;
}

void Router::to_neighbours(Port& in, rte_mbuf* m, unsigned cls) {
  const uint32_t bytes = rte_pktmbuf_pkt_len(m);
  if (!neigh_.receive(m)) return drop(in, m, cls, ctr_.not_routable);
  in.release(cls, bytes);  // the switch's CPU took it
}

void Router::route(Port& in, rte_mbuf* m, unsigned cls, bool tagged, bool bridged) {
  const unsigned l2 = wire::kEthHdrLen + (tagged ? wire::kVlanLen : 0);
  uint8_t* f = rte_pktmbuf_mtod(m, uint8_t*);
  const unsigned len = rte_pktmbuf_data_len(m);
  const uint16_t type = wire::get16(f + l2 - 2);
  // A reply to the gateway's ARP; on a routed link (unnumbered, next hops
  // programmed) ARP has no business and must not touch the hosts' table.
  if (type == wire::kEtherTypeArp && bridged) return to_neighbours(in, m, cls);
  if (type != wire::kEtherTypeIpv4) return drop(in, m, cls, ctr_.not_routable);
  uint8_t* ip = f + l2;
  if (len < l2 + wire::kIpv4HdrLen || wire::ipv4_version(ip) != 4 || wire::ipv4_ihl(ip) < 5) [[unlikely]]
    return drop(in, m, cls, ctr_.header_errors);
  const unsigned hlen = wire::ipv4_ihl(ip) * 4u;
  const unsigned total = wire::ipv4_total_len(ip);
  if (len < l2 + hlen || total < hlen || l2 + total > len || !wire::ipv4_checksum_ok(ip)) [[unlikely]]
    return drop(in, m, cls, ctr_.header_errors);
  const uint32_t dst = wire::ipv4_dst(ip);
  if (cfg_.gateway && dst == cfg_.gateway) [[unlikely]]
    return drop(in, m, cls, ctr_.to_router);
  if (wire::ipv4_ttl(ip) <= 1) [[unlikely]]
    return drop(in, m, cls, ctr_.ttl_exceeded);
  const Ipv4Route* r = routes_.lookup(dst);
  if (!r) [[unlikely]]
    return drop(in, m, cls, ctr_.no_route);

  if (r->connected) {
    const Gid host = v4_mapped_gid(dst);
    Mac to;
    if (!neigh_.lookup(host, to)) [[unlikely]] {
      // It waits for ARP holding no ingress buffer (the ingress port cannot
      // be paused for a host that may never answer), untagged like every
      // frame the router sends into the VLAN.
      const uint32_t bytes = rte_pktmbuf_pkt_len(m);
      wire::ipv4_decrement_ttl(ip);
      if (tagged) wire::frame_pop_vlan(m);
      wire::eth_set_src(rte_pktmbuf_mtod(m, uint8_t*), cfg_.mac.data());
      in.release(cls, bytes);
      ctr_.routed.add();
      return neigh_.park(host, m, cls);
    }
    wire::ipv4_decrement_ttl(ip);
    wire::eth_set_dst(f, to.data());
    wire::eth_set_src(f, cfg_.mac.data());
    ctr_.routed.add();
    return sw_.bridge(&in, m, cls, cfg_.vid, tagged);
  }

  const uint32_t hash = ecmp_hash(ip, len - l2, cfg_.hash_seed);
  const NextHop* hop = sw_.config().adaptive.mode == AdaptiveMode::kOff || r->hops.size() < 2
                           ? pick(*r, hash)
                           : pick_adaptive(in, *r, hash, cls);
  if (!hop) [[unlikely]]
    return drop(in, m, cls, ctr_.no_next_hop);
  wire::ipv4_decrement_ttl(ip);
  int8_t grown = 0;
  if (tagged) {  // routed ports carry untagged frames
    wire::frame_pop_vlan(m);
    grown = -int8_t(wire::kVlanLen);
    f = rte_pktmbuf_mtod(m, uint8_t*);
  }
  wire::eth_set_dst(f, hop->mac.data());
  wire::eth_set_src(f, cfg_.mac.data());
  ctr_.routed.add();
  sw_.forward_routed(in, cls, hop->port, m, grown);
}

// The member the hash names; only when its link is down, one of the live
// ones -- so a member's failure moves its own flows and no others.
const NextHop* Router::pick(const Ipv4Route& r, uint32_t hash) const {
  const NextHop& first = r.hops[hash % r.hops.size()];
  if (sw_.link_up(first.port)) return &first;
  unsigned live = 0;
  for (const NextHop& h : r.hops) live += sw_.link_up(h.port);
  if (live == 0) return nullptr;
  unsigned k = hash % live;
  for (const NextHop& h : r.hops)
    if (sw_.link_up(h.port) && k-- == 0) return &h;
  return nullptr;
}

// The hash's member is the static choice; the switch's adaptive mode may
// send the packet (or its flowlet) to a less loaded member instead.
const NextHop* Router::pick_adaptive(const Port& in, const Ipv4Route& r, uint32_t hash, unsigned cls) {
  const unsigned n = unsigned(r.hops.size());
  uint16_t ports[256];
  for (unsigned i = 0; i < n; ++i) ports[i] = r.hops[i].port;
  const unsigned chosen =
      sw_.adaptive_port(in, ports, n, hash % n, hash, [cls](const Port&) { return cls; });
  for (const NextHop& h : r.hops)
    if (h.port == chosen) return sw_.link_up(h.port) ? &h : pick(r, hash);
  return pick(r, hash);
}

bool Router::owns(const Gid& ip) const { return cfg_.gateway && ip == v4_mapped_gid(cfg_.gateway); }

Gid Router::source(bool ipv4) const { return ipv4 && cfg_.gateway ? v4_mapped_gid(cfg_.gateway) : Gid{}; }

void Router::transmit(rte_mbuf* m, unsigned cls) { sw_.bridge(nullptr, m, cls, cfg_.vid, false); }

}  // namespace vf::dp
