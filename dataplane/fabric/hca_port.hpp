// The HCA side of a link: where the device engine's packets become wire frames
// and back. The engine sees only HostPort (transport packets: BTH .. pad, and
// a Route); this port adds and strips the link and network headers.
//
// Transmit (IB): LRH [+ GRH] from the route — DLID = r.dlid, SLID = own LID |
// src_path_bits (within the LMC), SL = r.sl, VL from the port's SL→VL table
// (default SL n → VL n % data_vls), GRH when r.is_global with the SGID from
// the port's GID table at r.sgid_index.
// Transmit (RoCEv2): r.is_global is required. Source MAC = own, destination
// MAC = the neighbour cache's entry for r.dgid, resolved on the wire by ARP /
// Neighbour Discovery (neighbours.hpp; packets wait while it resolves), IPv4 when both GIDs are ::ffff:a.b.c.d, TOS/traffic class =
// r.traffic_class (DSCP << 2 | ECN; default_tclass when 0), TTL = hop_limit,
// UDP source port from the flow label (or, when 0, the destination QP) folded
// into 0xC000..0xFFFF as Linux does, for ECMP entropy. The frame's priority --
// its egress class here, what the switch and PFC act on -- is, as on mlx5,
// its DSCP through the port's map with trust dscp, and r.sl & 7 with trust
// pcp; with `vlan` set the frame carries an 802.1Q tag with that PCP
// (untagged frames under trust pcp are priority 0).
// The frame goes to the egress class of its VL / priority. A frame that cannot
// be routed or framed is dropped (PortXmitDiscards + tx_no_route /
// tx_frame_errors).
//
// Receive: frames not addressed to this port (IB: DLID outside LID..LID+2^LMC-1,
// unless multicast/permissive; Ethernet: another unicast MAC) are dropped and
// counted (rx_not_for_us, PortRcvErrors). The rest are decapsulated — checks
// fail → rx_errors[RxError], PortRcvErrors — and handed to the receive callback
// with data at the BTH, ICRC removed, pad still present (what Hca::receive
// expects). The callback owns the mbuf.
//
// Transmit space, per class: can_transmit(sl) is false once the egress queue
// of sl's class (VL / priority) holds queue_pkts frames, whatever the other
// classes hold. When room appears again in a class that refused, the
// tx-space callback runs from a zero-delay timer — never synchronously inside
// transmit(), which the engine's re-entrancy contract forbids.
//
// Administrative state (an operator's `port set state down`): a down port
// passes nothing either way, as a disabled physical port; every frame it
// refuses counts in port_down_drops. The state lives in the port's PortInfo
// (core/port_info.hpp), which the engine's query_port and fabricctl read.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "dataplane/fabric/ctx_timer.hpp"
#include "dataplane/fabric/neighbours.hpp"
#include "dataplane/fabric/port.hpp"
#include "dataplane/fabric/ring.hpp"
#include "dataplane/fabric/types.hpp"
#include "dataplane/fabric/wire_time.hpp"
#include "dataplane/wire/rx_error.hpp"
#include "core/port_info.hpp"
#include "dataplane/fabric/host_port.hpp"

namespace vf::dp {

// The port's PortInfo (its qos starts as default_port_qos(qos.data_vls)) plus
// what only the dataplane needs.
struct HcaPortConfig : PortInfo {
  bool vlan = false;      // Ethernet: 802.1Q-tag frames so the priority travels
  uint16_t vlan_id = 0;
  // RoCE: the IP traffic class (DSCP << 2 | ECN) of packets whose address
  // vector leaves it 0, as mlx5's tc/1/traffic_class and rdma_cm's default
  // ToS set it (106: DSCP 26, ECT(0)); 0 keeps the application's.
  uint8_t default_tclass = 0;
  // RoCE over IPv4: the host's subnet and default gateway (`ip route`). A
  // destination outside the subnet is sent to the gateway's MAC; none
  // (prefix length 0) puts every destination on the link.
  uint8_t ipv4_prefix_len = 0;
  uint32_t ipv4_gateway = 0;  // 0: none (off-subnet destinations are unreachable)
  // How fast the host takes received frames off the NIC (a PCIe- or
  // memory-bound host, a busy receiver): 0 = at once. Slower, frames wait
  // in the NIC's receive buffer (hca_rx_buffer.cpp) and hold their receive
  // accounting -- so PFC (XOFF) or IB credits push back on the link -- and a
  // frame of a priority without flow control that finds `rx_buffer_bytes`
  // held is dropped (rx_discards_phy, as mlx5 counts it).
  uint64_t rx_rate_bps = 0;
  uint32_t rx_buffer_bytes = 256 * 1024;
  PortConfig port;        // egress queue sizes
};

struct HcaPortSnapshot {
  PortSnapshot port;
  uint64_t tx_no_route;      // bad SGID index, RoCE without GRH, SL → VL15
  uint64_t tx_frame_errors;  // encapsulation refused the packet (segmented, too long, no room)
  uint64_t rx_not_for_us;
  uint64_t rx_no_receiver;   // no receive callback set
  uint64_t port_down_drops;  // refused either way while administratively down
  uint64_t loopback_pkts;    // sent to this port's own LID / GID, looped back inside the HCA
  uint64_t loopback_drops;   // the loopback queue was full
  uint64_t rx_discards_phy;  // received frames dropped: the NIC's receive buffer was full (rx_rate)
  uint64_t neigh_solicits_sent, neigh_replies_sent, neigh_resolved, neigh_failed;  // neighbours.hpp
  uint64_t neigh_unresolved_discards, neigh_rx_invalid;
  std::array<uint64_t, wire::kRxErrorCount> rx_errors;  // by wire::RxError (index 0 unused)
};

// The HCA port's own counters in an HcaPortSnapshot (its Port's are in
// kPortCounters, read from HcaPortSnapshot::port).
extern const CounterTable kHcaPortCounters;
// HcaPortSnapshot::rx_errors, one row per wire::RxError but kOk, named
// "rx_" + wire::rx_error_name (the reasons inside PortRcvErrors).
extern const CounterTable kRxErrorCounters;

class HcaPort final : public HostPort, private NeighbourIface {
 public:
  // Looped-back packets wait for the next drain (the same lcore turn); an
  // engine sends at most a burst of them per poll.
  static constexpr uint32_t kLoopbackDepth = 4096;
  // Frames a slow host (rx_rate_bps) may leave waiting, whatever their bytes.
  static constexpr uint32_t kRxHeldDepth = 8192;
  using RxFn = void (*)(void* ctx, rte_mbuf* m, const wire::RxMeta& meta);
  using TxSpaceFn = void (*)(void* ctx);

  // `pool`: where alloc() takes mbufs (needs >= 66 bytes headroom and 6 bytes
  // tailroom beyond the engine's packet; the DPDK default headroom is 128).
  HcaPort(Scheduler& sched, std::string name, rte_mempool* pool, const HcaPortConfig& cfg);
  ~HcaPort() override;

  // ---- set-up (before the lcore runs, or on it)
  void set_receiver(RxFn fn, void* ctx) {
    rx_fn_ = fn;
    rx_ctx_ = ctx;
  }
  void set_tx_space(TxSpaceFn fn, void* ctx) {
    space_fn_ = fn;
    space_ctx_ = ctx;
  }
  void set_lid(uint16_t lid, uint8_t lmc = 0);
  void set_sl2vl(uint8_t sl, uint8_t vl);
  void set_vlarb(const VlArbTable& high, const VlArbTable& low, uint8_t high_limit);
  void set_gid(unsigned index, const Gid& gid);
  void set_neighbour(const Gid& gid, const Mac& mac);
  void remove_neighbour(const Gid& gid);
  // IBA port state: only an ACTIVE port passes data. The subnet manager
  // moves an IB port Init -> Armed -> Active; the record changes, the link
  // does not (that is link_changed).
  void set_state(PortState state, PhysState phys);
  // The physical link went down or trained up (Fabric::set_link_up): down ->
  // Down with `phys_down` (Disabled: an operator's `port set state down`;
  // Polling: the far end or the cable is gone); up -> LinkUp and Init on IB,
  // where the subnet manager activates the port, Active on Ethernet, which
  // has none.
  void link_changed(bool up, PhysState phys_down);
  bool passes_data() const { return cfg_.passes_data(); }

  const std::string& name() const { return port_.name(); }
  LinkLayer link_layer() const { return cfg_.link_layer; }
  const HcaPortConfig& config() const { return cfg_; }
  uint16_t lid() const { return cfg_.lid; }
  const PortInfo& info() const override { return cfg_; }
  Port& port() { return port_; }
  const Port& port() const { return port_; }

  // ---- HostPort (fast path)
  rte_mbuf* alloc() override;
  bool can_transmit(const Route& route) const override;
  void transmit(rte_mbuf* m, const Route& route) override;
  void resolve(const Route& route, std::function<void(int err)> done) override;
  // The egress class packets on `route` use (IB: their SL's VL, kMgmtClass
  // for VL15; Ethernet with trust dscp: the priority of their DSCP, with
  // trust pcp: their PCP (sl & 7) when tagged, else 0).
  unsigned tx_class(const Route& route) const;
  // The IP traffic class RoCE packets on `route` carry.
  uint8_t tclass(const Route& route) const {
    return route.traffic_class ? route.traffic_class : cfg_.default_tclass;
  }

  HcaPortSnapshot snapshot(Nanos now) const;
  // Clears the port's counters and its own (dp::reset; fabricctl counters reset).
  void reset_counters(Nanos now);

 private:
  static void on_rx(void* self, Port& p, rte_mbuf* m, unsigned cls);
  // A frame for this port (from the wire: `wire` counts errors; looped back: null).
  void receive_frame(rte_mbuf* m, PortCounters* wire);
  // hca_loopback.cpp: packets to the port's own LID (IB) or GID (RoCE) turn
  // round inside the HCA, as on hardware: never on the wire or the switch.
  bool is_own_lid(uint16_t dlid) const;
  bool is_own_gid(const Route& r) const;
  void loop_back(rte_mbuf* m);
  static void on_loopback_timer(Timer& t, Nanos now);
  // hca_rx_buffer.cpp: received frames wait for a host slower than the link.
  struct HeldRx {
    rte_mbuf* m;
    uint8_t cls;
  };
  void hold_rx(rte_mbuf* m, unsigned cls);
  bool flow_controlled(unsigned cls) const;
  static void on_rx_timer(Timer& t, Nanos now);
  void drop_held_rx();
  static void on_tx_done(void* self, Port& p);
  static void on_space_timer(Timer& t, Nanos now);
  bool for_us(const rte_mbuf* m) const;
  // Add the link and network headers; false (counted, m freed) when they cannot.
  // `own`: the destination is this port itself (loopback).
  bool frame_ib(rte_mbuf* m, const Route& r, bool& own);
  // `unresolved`: the neighbour (destination or gateway) whose MAC is unknown
  // yet (Neighbours::park); null when the frame is addressed.
  bool frame_roce(rte_mbuf* m, const Route& r, bool& own, const Gid*& unresolved);
  // The neighbour a RoCE packet goes to: its destination on the subnet, else
  // the gateway (in gateway_gid_); null when off-subnet without a gateway.
  const Gid* next_hop(const Route& r) const;
  // NeighbourIface: the host's NIC.
  const Mac& mac() const override { return cfg_.mac; }
  uint16_t vlan_tag() const override { return cfg_.vlan ? cfg_.vlan_id : 0; }
  bool owns(const Gid& ip) const override;
  Gid source(bool ipv4) const override;
  void transmit(rte_mbuf* m, unsigned cls) override { port_.enqueue(cls, m); }
  void drop_tx(rte_mbuf* m, Counter& why);

  Scheduler& sched_;
  rte_mempool* pool_;
  HcaPortConfig cfg_;
  Port port_;
  Gid gateway_gid_{};
  Neighbours neighbours_;

  RxFn rx_fn_ = nullptr;
  void* rx_ctx_ = nullptr;
  TxSpaceFn space_fn_ = nullptr;
  void* space_ctx_ = nullptr;
  mutable uint32_t refused_ = 0;  // classes can_transmit said no to; announce room later
  CtxTimer space_timer_;
  Ring<rte_mbuf*> loopback_;
  CtxTimer loopback_timer_;
  Ring<HeldRx> rx_held_;
  uint64_t rx_unbounded_bytes_ = 0;  // held of classes without flow control (what rx_buffer_bytes bounds)
  WireTime rx_free_at_{};  // when the host can take the next frame
  CtxTimer rx_timer_;
  Counter rx_discards_phy_;

  Counter tx_no_route_;
  Counter tx_frame_errors_;
  Counter rx_not_for_us_;
  Counter rx_no_receiver_;
  Counter port_down_drops_;
  Counter loopback_pkts_;
  Counter loopback_drops_;
  std::array<Counter, wire::kRxErrorCount> rx_errors_;
};

}  // namespace vf::dp
