// An InfiniBand switch: egress port = LFT[DLID]. The LFT is linear, 0xC000
// entries (the unicast LID space), 0xFF = unset, filled by the subnet
// manager. Unset entries, port 0, ports out of range and the ingress port
// itself are relay errors. A multicast DLID (an MLID, 0xC000..0xFFFE) is
// looked up in the MulticastForwardingTable instead: a port mask per MLID,
// and the packet is replicated to every port of it except the one it came
// in on (IBA 18.2.4.3.2; a spanning tree's masks name the upstream port
// too); ports whose link is down are skipped. An MLID without an entry, or
// with no port left to take it, is a relay error. Every port has the
// same per-port VL record as an HCA port (core/port_qos.hpp: operational VLs,
// SL→VL, VL arbitration; default_port_qos at start). The egress VL is the
// egress port's SL→VL entry for the packet's SL; an SL mapped to VL15 is a
// relay error too. VL15 packets stay on
// VL15. The VL field travels in the LRH; when the map changes it the switch
// rewrites it and recomputes the VCRC (checking the old one first: a bad VCRC
// is a PortRcvErrors drop).
// SL→VL is the IBA's SLtoVLMappingTable per (input, output) port pair (input
// 0 = the switch's management port): set_sl2vl(out, ...) programs one table
// for every input, set_sl2vl(in, out, ...) one pair (e.g. a VL change where a
// route crosses a dateline). The output port's PortQos::sl2vl records the
// table every input shares.
// Adaptive routing (SwitchConfig::adaptive, adaptive_routing.hpp): the SM
// gives a DLID an AR group, the equal-cost ports towards it (the LFT's port
// among them); a unicast packet to that DLID then takes the group's
// least-loaded port instead of the LFT's. Groups are shared by every DLID
// with the same ports, as a switch's AR group table is.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/counter_def.hpp"
#include "core/port_qos.hpp"
#include "dataplane/fabric/counter.hpp"
#include "dataplane/fabric/switch.hpp"

namespace vf::dp {

// Multicast replication, counted on the lcore.
struct IbSwitchCounters {
  Counter mcast_forwarded;  // multicast packets replicated through the MFT
  Counter mcast_copies;     // copies handed to egress queues, the original included
  Counter mcast_no_room;    // copies not made: the egress queue held queue_pkts packets
  Counter mcast_no_mbuf;    // copies not made: no mbuf
  Counter mcast_bad_vcrc;   // packets dropped before replication: their VCRC failed
  Counter mgmt_received;    // VL15 packets handed to the management port
  Counter mgmt_sent;        // VL15 packets the management port sent
  Counter mgmt_dropped;     // VL15 packets its agent discarded (bad frame, path not followable)
};

// The same, read from the control side; kIbSwitchCounters names them
// (/metrics: {fabric, switch}; cleared by `fabricctl counters reset SWITCH`).
struct IbSwitchSnapshot {
  uint64_t mcast_forwarded, mcast_copies, mcast_no_room, mcast_no_mbuf, mcast_bad_vcrc;
  uint64_t mgmt_received, mgmt_sent, mgmt_dropped;
  uint64_t ar_rerouted, ar_flowlets;  // adaptive routing (adaptive_routing.hpp)
};
extern const CounterTable kIbSwitchCounters;

class IbSwitch final : public Switch {
 public:
  static constexpr uint8_t kNoRoute = 0xFF;
  static constexpr size_t kLftSize = 0xC000;
  static constexpr uint16_t kMlidFirst = 0xC000, kMlidLast = 0xFFFE;  // 0xFFFF is the permissive LID
  using PortMask = std::bitset<256>;  // bit n = port n (bit 0, the management port, unused)

  IbSwitch(Scheduler& sched, std::string name, const SwitchConfig& cfg);

  void set_lft(uint16_t dlid, uint8_t port);  // kNoRoute clears
  uint8_t lft(uint16_t dlid) const { return dlid < kLftSize ? lft_[dlid] : kNoRoute; }
  // The MFT entry of `mlid`; an empty mask clears it. Throws
  // std::invalid_argument for a LID outside the multicast range or a port
  // the switch does not have.
  void set_mft(uint16_t mlid, const PortMask& ports);
  const PortMask* mft(uint16_t mlid) const {
    const auto it = mft_.find(mlid);
    return it == mft_.end() ? nullptr : &it->second;
  }
  // The management port (port 0, IBA 18.2.4.1): VL15 packets for the switch
  // itself -- a directed-route SMP (permissive DLID) or a LID-routed one whose
  // LFT entry is port 0 -- go whole to `fn` (which owns the mbuf; the
  // ingress buffer is freed at once), on the lcore. Without a hook they are
  // relay errors, as before an agent runs.
  using MgmtFn = void (*)(void* ctx, IbSwitch& sw, unsigned in_port, rte_mbuf* m);
  void set_management(MgmtFn fn, void* ctx) {
    mgmt_fn_ = fn;
    mgmt_ctx_ = ctx;
  }
  // Sends the whole frame `m` from the management port out of port `num` on
  // VL15, after the switching latency; false (m freed) when that port has no
  // link up.
  bool send_management(unsigned num, rte_mbuf* m);
  // The agent discarded a packet the management port took: counted, never silent.
  void count_management_drop() { ctr_.mgmt_dropped.add(); }
  // DLID `dlid`'s AR group: its equal-cost ports (each 1..nports); fewer
  // than two clears it. Throws std::invalid_argument on a port out of range.
  // A switch not in an adaptive mode keeps no groups.
  void set_ar_group(uint16_t dlid, std::span<const uint8_t> ports);
  // DLID `dlid`'s AR group, empty when it has none.
  std::span<const uint8_t> ar_group(uint16_t dlid) const {
    if (dlid >= ar_of_.size() || ar_of_[dlid] == 0) return {};
    return ar_groups_[ar_of_[dlid]];
  }
  const IbSwitchCounters& counters() const { return ctr_; }
  IbSwitchSnapshot snapshot() const;
  void reset_counters();
  void set_sl2vl(unsigned out_port, uint8_t sl, uint8_t vl);
  void set_sl2vl(unsigned in_port, unsigned out_port, uint8_t sl, uint8_t vl);
  uint8_t sl2vl(unsigned out_port, uint8_t sl) const { return qos(out_port).sl2vl[sl & 15]; }
  uint8_t sl2vl(unsigned in_port, unsigned out_port, uint8_t sl) const {
    return pair_sl2vl_.at(pair(in_port, out_port))[sl & 15];
  }
  // Port `out_port`'s VLArbitration tables and LimitOfHighPriority (what an
  // SM programs); throws std::invalid_argument on a table PortQos refuses.
  void set_vlarb(unsigned out_port, const VlArbTable& high, const VlArbTable& low, uint8_t high_limit);
  // Port `num`'s VL record (1..nports).
  const PortQos& qos(unsigned num) const { return qos_.at(num - 1); }

 private:
  static void on_rx(void* self, Port& in, rte_mbuf* m, unsigned cls);
  void multicast(Port& in, rte_mbuf* m, unsigned cls, const PortMask& ports);
  // The class a packet of SL `sl` takes from `in` to `out`, or kVl15 when the
  // SL may not use that pair (a relay error); VL15 packets stay on VL15.
  unsigned out_class(const Port& in, const Port& out, unsigned cls, uint8_t sl) const;
  void send_copy(unsigned cls, Port& out, unsigned out_cls, rte_mbuf* m);
  void drop_bad_vcrc(Port& in, rte_mbuf* m, unsigned cls);

  size_t pair(unsigned in_port, unsigned out_port) const { return size_t(in_port) * nports() + out_port - 1; }

  void to_management(Port& in, rte_mbuf* m, unsigned cls);
  // The LFT's port, or the AR group's choice for this packet.
  uint8_t unicast_port(const Port& in, uint16_t dlid, unsigned cls, const uint8_t* lrh);

  MgmtFn mgmt_fn_ = nullptr;
  void* mgmt_ctx_ = nullptr;
  std::vector<uint8_t> lft_;
  std::unordered_map<uint16_t, PortMask> mft_;  // MLIDs in use are few and sparse
  std::vector<uint16_t> ar_of_;                 // DLID -> AR group (0: none); sized in adaptive modes
  std::vector<std::vector<uint8_t>> ar_groups_;  // [0] unused
  std::map<std::vector<uint8_t>, uint16_t> ar_index_;  // group -> its number
  IbSwitchCounters ctr_;
  std::vector<PortQos> qos_;  // by port number - 1
  std::vector<std::array<uint8_t, kNumSls>> pair_sl2vl_;  // by pair(in, out)
};

}  // namespace vf::dp
