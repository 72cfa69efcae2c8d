// What the management agents answer from: a plain copy of one IB fabric's
// nodes, ports, links and switch tables as they are now, made on the lcore
// (daemon/umad/model_build.hpp) so that the agents themselves (sma.hpp, pma.hpp,
// route.hpp) are pure functions the unit tests drive without a dataplane.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/port_info.hpp"

namespace vf::mad {

// The PMA's counters of one port (IBA names; data in 4-octet words).
struct PortCounterValues {
  uint64_t xmit_data = 0, rcv_data = 0, xmit_pkts = 0, rcv_pkts = 0;
  uint64_t xmit_discards = 0, rcv_errors = 0, rcv_switch_relay_errors = 0;
  uint64_t rcv_discards = 0;  // not a PMA counter of its own: part of PortRcvErrors? no -- see pma.cpp
  uint64_t vl15_dropped = 0, excessive_buffer_overruns = 0, link_downed = 0;
  uint64_t xmit_wait_ticks = 0;
  uint64_t mcast_xmit_pkts = 0, mcast_rcv_pkts = 0;
};

struct ModelPort {
  bool linked = false;  // a cable is configured
  PortState state = PortState::kDown;
  PhysState phys = PhysState::kPolling;
  uint8_t width = 2;     // PortInfo LinkWidthActive: 1 1x, 2 4x, 4 8x, 8 12x
  uint8_t speed = 1;     // LinkSpeedActive: 1 SDR, 2 DDR, 4 QDR
  uint8_t speed_ext = 0; // LinkSpeedExtActive: 0 none, 1 FDR, 2 EDR, 4 HDR, 8 NDR
  uint8_t mtu = 5;       // MTU code of the link (NeighborMTU, MtuCap)
  uint8_t vl_cap = 4;    // VLCap: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7
  uint8_t oper_vls = 4;
  int peer_node = -1;    // index into MadModel::nodes
  uint8_t peer_port = 0;
  PortCounterValues counters;
};

struct ModelNode {
  bool is_switch = false;
  std::string name;
  std::string desc;       // NodeDescription (64 bytes on the wire)
  uint64_t guid = 0;      // node GUID = system image GUID = port GUID (one port / port 0)
  uint16_t lid = 0;       // a CA's port LID; a switch's port 0 LID
  uint8_t lmc = 0;
  uint32_t port_cap_flags = 0;
  std::vector<uint16_t> pkeys;  // P_Key table (CA); a switch's is {0xFFFF}
  uint32_t pkey_table_len = 0;
  std::vector<ModelPort> ports;  // ports[0] is port 1
  std::vector<uint8_t> lft;      // switch: port by DLID, 0xFF for none; up to the highest LID
  PortQos qos;                   // CA: its port's; switch: port 1's (all are alike)
  uint8_t num_ports() const { return uint8_t(ports.size()); }
  const ModelPort* port(unsigned num) const { return num >= 1 && num <= ports.size() ? &ports[num - 1] : nullptr; }
};

struct MadModel {
  std::vector<ModelNode> nodes;
  uint64_t subnet_prefix = 0xfe80000000000000ULL;
  uint16_t sm_lid = 0;
  int sm_node = -1;       // the node the SM runs on
  uint32_t sm_activity = 0;  // sweeps so far (SMInfo ActCount)
  std::optional<size_t> node_by_lid(uint16_t lid) const;
};

}  // namespace vf::mad
