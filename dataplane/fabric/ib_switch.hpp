// An InfiniBand switch: egress port = LFT[DLID]. The LFT is linear, 0xC000
// entries (the unicast LID space), 0xFF = unset, filled by the subnet
// manager. Multicast DLIDs (no MFT yet), unset entries, port 0, ports out of
// range and the ingress port itself are relay errors. Every port has the
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
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/port_qos.hpp"
#include "dataplane/fabric/switch.hpp"

namespace vf::dp {

class IbSwitch final : public Switch {
 public:
  static constexpr uint8_t kNoRoute = 0xFF;
  static constexpr size_t kLftSize = 0xC000;

  IbSwitch(Scheduler& sched, std::string name, const SwitchConfig& cfg);

  void set_lft(uint16_t dlid, uint8_t port);  // kNoRoute clears
  uint8_t lft(uint16_t dlid) const { return dlid < kLftSize ? lft_[dlid] : kNoRoute; }
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

  size_t pair(unsigned in_port, unsigned out_port) const { return size_t(in_port) * nports() + out_port - 1; }

  std::vector<uint8_t> lft_;
  std::vector<PortQos> qos_;  // by port number - 1
  std::vector<std::array<uint8_t, kNumSls>> pair_sl2vl_;  // by pair(in, out)
};

}  // namespace vf::dp
