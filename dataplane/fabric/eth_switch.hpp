// An Ethernet switch: a VLAN-aware learning bridge (IEEE 802.1Q).
//
// Ingress: a frame joins its tag's VLAN, or the port's PVID when untagged or
// priority-tagged; a VLAN the port does not carry is an ingress-filtering
// drop. The source address is learned in the FDB (fdb.hpp). Forwarding: a
// known unicast destination goes to its port; unknown unicast, broadcast and
// multicast are flooded to every other port of the VLAN whose link is up.
// A destination learned on the ingress port itself is filtered (dropped).
// Egress: the frame leaves untagged where the port is an untagged member of
// its VLAN, tagged otherwise; a tag pushed on the way carries the frame's
// priority as its PCP. The egress priority is the ingress priority (trust
// dscp|pcp at the ingress port, eth_qos.hpp).
//
// Drops are relay errors (PortRcvSwitchRelayErrors on the ingress port), by
// cause in BridgeCounters.
//
// A switch may also route IPv4 (enable_routing, router.hpp): its routed
// ports go to the router and never bridge, and in the gateway's VLAN frames
// to the router's MAC (and ARP for the gateway) are the router's.
#pragma once

#include <rte_mempool.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/fabric/fdb.hpp"
#include "dataplane/fabric/port_vlans.hpp"
#include "dataplane/fabric/router.hpp"
#include "dataplane/fabric/switch.hpp"

namespace vf::dp {

struct BridgeCounters {
  Counter flooded;          // frames flooded (unknown unicast, broadcast, multicast)
  Counter flood_copies;     // copies sent by flooding
  Counter flood_no_mbuf;    // copies not made: no mbuf
  Counter flood_no_room;    // copies not made: the egress queue held queue_pkts frames
  Counter vlan_filtered;    // ingress frames of a VLAN the port does not carry
  Counter same_port;        // destination learned on the ingress port
  Counter no_egress;        // known destination whose port cannot take it, or a flood with no port
  Counter no_tag_room;      // frames and flood copies dropped: no headroom to push an 802.1Q tag
};

// A bridge's counters as plain values (the FDB's and the bridge's), for the
// control side; kBridgeCounters names them.
struct BridgeSnapshot {
  uint64_t fdb_learned, fdb_moved, fdb_aged, fdb_table_full;
  uint64_t flooded, flood_copies, flood_no_mbuf, flood_no_room, vlan_filtered, same_port, no_egress, no_tag_room;
};
extern const CounterTable kBridgeCounters;

class EthSwitch final : public Switch {
 public:
  EthSwitch(Scheduler& sched, std::string name, const SwitchConfig& cfg);

  // Static FDB entries (bridge fdb add ... static).
  void add_fdb(const Mac& mac, unsigned port, uint16_t vid = kDefaultVid);
  void remove_fdb(const Mac& mac, uint16_t vid = kDefaultVid);
  void set_ageing(Nanos ageing) { fdb_.set_ageing(ageing); }
  // Port `num`'s VLAN membership (set-up, or on the lcore).
  void set_vlans(unsigned num, const PortVlans& v);
  const PortVlans& vlans(unsigned num) const { return vlans_.at(num - 1); }
  // Forget what was learned on port `num` (its link went down).
  void flush_port(unsigned num) { fdb_.flush_port(uint16_t(num)); }

  // Makes the switch route IPv4 too (set-up only; once). Its routed ports
  // leave every VLAN. Throws std::invalid_argument as Router does.
  Router& enable_routing(const RouterConfig& cfg, rte_mempool* pool);
  Router* router() { return router_.get(); }
  const Router* router() const { return router_.get(); }

  const Fdb& fdb() const { return fdb_; }
  const BridgeCounters& counters() const { return ctr_; }
  BridgeSnapshot snapshot() const;
  // Clears the bridge's, the FDB's and the router's counters (not the ports').
  void reset_counters();

 private:
  friend class Router;
  static void on_rx(void* self, Port& in, rte_mbuf* m, unsigned cls);
  // Sends `m` (addressed) into VLAN `vid`: to its FDB port, else flooded.
  // `in`: the port whose receive buffer it holds, or null (the router's own).
  void bridge(Port* in, rte_mbuf* m, unsigned cls, uint16_t vid, bool tagged);
  void flood(Port* in, rte_mbuf* m, unsigned cls, uint16_t vid, bool tagged);
  void forward_from(Port* in, unsigned cls, Port& out, rte_mbuf* m, int8_t grown) {
    if (in) return forward(*in, cls, out, cls, m, grown);
    out.enqueue(cls, m, sched_.now() + cfg_.latency_ns);
  }
  void drop_from(Port* in, rte_mbuf* m, unsigned cls) {
    if (in) return relay_error(*in, m, cls);
    rte_pktmbuf_free(m);
  }
  void forward_routed(Port& in, unsigned cls, unsigned port, rte_mbuf* m, int8_t grown) {
    forward(in, cls, port_at(port), cls, m, grown);
  }
  bool link_up(unsigned port) {
    const Port& p = port_at(port);
    return p.connected() && p.link_up();
  }
  // Tags or untags `m` for leaving `out` in `vid`; the bytes it grew, or
  // INT8_MIN when it could not be tagged (no headroom).
  int8_t egress_tag(const Port& out, rte_mbuf* m, unsigned cls, uint16_t vid, bool tagged) const;
  bool may_leave(const Port& out, uint16_t vid) const {
    return out.connected() && out.link_up() && vlans_[out.number() - 1].carries(vid);
  }

  Fdb fdb_;
  std::vector<PortVlans> vlans_;
  BridgeCounters ctr_;
  std::unique_ptr<Router> router_;
};

}  // namespace vf::dp
