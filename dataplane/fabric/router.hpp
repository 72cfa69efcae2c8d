// The IPv4 router inside an Ethernet switch (a leaf's or spine's L3 part,
// as on the switches RoCE fabrics are built from).
//
// Interfaces: routed ports, which never bridge (a point-to-point link to
// another router, unnumbered: the next hop is that router's MAC, which the
// control plane programs), and at most one gateway interface on a bridged
// VLAN (an SVI: the hosts' default gateway, with an address and prefix).
// Every interface answers to the router's one MAC.
//
// A frame to the router's MAC is routed: IPv4 only, its header checked (as
// RFC 1812 §5.2.2 asks: version, length, checksum), TTL decremented with an
// incremental checksum update, the longest prefix looked up (ipv4_routes.hpp),
// and then either bridged into the gateway's VLAN to the destination host
// -- whose MAC the router resolves with ARP like any host (neighbours.hpp),
// packets waiting meanwhile -- or sent out of an ECMP member's routed port,
// untagged, to that router's MAC. The frame keeps its ingress priority and
// its ingress buffer until it leaves (PFC sees routed traffic like bridged).
// Drops are relay errors on the ingress port, by cause in RouterCounters; the
// router sends no ICMP.
//
// Everything here runs on the lcore; the counters may be read from anywhere.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <bitset>
#include <cstdint>
#include <vector>

#include "core/counter_def.hpp"
#include "dataplane/fabric/counter.hpp"
#include "dataplane/fabric/ipv4_routes.hpp"
#include "dataplane/fabric/neighbours.hpp"
#include "dataplane/fabric/port_vlans.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

class EthSwitch;
class Port;

struct RouterConfig {
  Mac mac{};                 // the router's MAC on every interface
  uint32_t gateway = 0;      // its address on the bridged VLAN; 0 = no gateway interface
  uint8_t prefix_len = 0;    // the gateway's subnet: a connected route
  uint16_t vid = kDefaultVid;  // the VLAN the gateway is on
  std::vector<uint16_t> routed_ports;
  uint32_t hash_seed = 0;    // ECMP (ecmp_hash)
};

struct RouterCounters {
  Counter routed;         // packets forwarded (waiting for ARP included)
  Counter header_errors;  // not IPv4, or a bad version, length or checksum
  Counter ttl_exceeded;   // TTL 0 or 1 on arrival
  Counter no_route;       // no prefix holds the destination
  Counter no_next_hop;    // every ECMP member's link is down
  Counter to_router;      // IP addressed to the router itself (it answers ARP only)
  Counter not_routable;   // on a routed port: another MAC, or neither IPv4 nor ARP
};

// The router's counters as plain values (its own and its gateway's ARP),
// for the control side; kRouterCounters names them.
struct RouterSnapshot {
  uint64_t routed, header_errors, ttl_exceeded, no_route, no_next_hop, to_router, not_routable;
  uint64_t arp_requests, arp_replies, arp_resolved, arp_failed, unresolved_discards;
  uint64_t ar_rerouted, ar_flowlets;  // the switch's adaptive routing (adaptive_routing.hpp)
};
extern const CounterTable kRouterCounters;

class Router final : private NeighbourIface {
 public:
  // `pool`: mbufs for ARP. Throws std::invalid_argument on a routed port out
  // of range, a gateway without a valid prefix, or a VLAN out of 1..4094.
  Router(EthSwitch& sw, Scheduler& sched, rte_mempool* pool, const RouterConfig& cfg);

  const RouterConfig& config() const { return cfg_; }
  const Mac& mac() const override { return cfg_.mac; }
  bool routes_port(unsigned num) const { return num < routed_.size() && routed_.test(num); }

  // Replaces the forwarding table; the gateway's connected route is added
  // here. Throws std::invalid_argument (Ipv4Routes::set, or a next hop on a
  // port that is not routed); the table is unchanged then.
  void set_routes(std::vector<Ipv4Route> routes);
  const Ipv4Routes& routes() const { return routes_; }
  // The hosts the gateway has resolved (ip neigh), IPv4 in host order.
  std::vector<std::pair<uint32_t, Mac>> neighbours() const;
  const NeighbourCounters& neighbour_counters() const { return neigh_.counters(); }
  const RouterCounters& counters() const { return ctr_; }
  RouterSnapshot snapshot() const;
  void reset_counters();

  // ---- fast path (EthSwitch::on_rx)
  // A frame that arrived on routed port `in`.
  void from_routed_port(Port& in, rte_mbuf* m, unsigned cls, bool tagged);
  // A frame in the gateway's VLAN: routed or answered (true; consumed), or
  // not the router's business (false; m untouched, to be bridged).
  bool from_bridge(Port& in, rte_mbuf* m, unsigned cls, uint16_t vid, bool tagged);

 private:
  // `bridged`: it came from the gateway's VLAN (ARP is answered there only).
  void route(Port& in, rte_mbuf* m, unsigned cls, bool tagged, bool bridged);
  void to_neighbours(Port& in, rte_mbuf* m, unsigned cls);
  const NextHop* pick(const Ipv4Route& r, uint32_t hash) const;
  const NextHop* pick_adaptive(const Port& in, const Ipv4Route& r, uint32_t hash, unsigned cls);
  void drop(Port& in, rte_mbuf* m, unsigned cls, Counter& why);
  // NeighbourIface: the gateway interface.
  uint16_t vlan_tag() const override { return 0; }  // tagged by the egress port, as bridged frames
  bool owns(const Gid& ip) const override;
  Gid source(bool ipv4) const override;
  void transmit(rte_mbuf* m, unsigned cls) override;

  EthSwitch& sw_;
  const RouterConfig cfg_;
  std::bitset<256> routed_;
  Ipv4Routes routes_;
  Neighbours neigh_;
  RouterCounters ctr_;
};

}  // namespace vf::dp
