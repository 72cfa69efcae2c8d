// A vHCA port's attributes, named after the IBA PortInfo attribute the subnet
// manager reads and sets: one record per port that every reader shares. The
// dataplane frames with it (LID/LMC, SL→VL, GIDs, state), the engine's
// query_port reports it, fabricctl and the runtime sysfs tree show it. The
// HcaPort owns it and is the only writer (the daemon at start-up and on an
// operator's command, later the subnet manager); everyone else holds a const
// reference, so a change is seen everywhere at once.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/port_qos.hpp"
#include "core/types.hpp"

namespace vf {

// IBA PortState / PortPhysicalState (and ibv_port_state's numbering).
enum class PortState : uint8_t { kDown = 1, kInit = 2, kArmed = 3, kActive = 4 };
enum class PhysState : uint8_t { kSleep = 1, kPolling = 2, kDisabled = 3, kLinkUp = 5, kLinkErrorRecovery = 6 };

// The IBA's MTU encoding (PortInfo MTUCap / NeighborMTU; enum ibv_mtu uses
// the same numbers): 256 -> 1 .. 4096 -> 5, 0 for anything else.
constexpr uint8_t mtu_code(uint32_t bytes) {
  for (uint8_t c = 1; c <= 5; ++c)
    if (bytes == 128u << c) return c;
  return 0;
}
constexpr uint32_t mtu_from_code(uint32_t code) { return code >= 1 && code <= 5 ? 128u << code : 0; }

struct PortInfo {
  LinkLayer link_layer = LinkLayer::kInfiniBand;
  PortState state = PortState::kActive;
  PhysState phys_state = PhysState::kLinkUp;
  uint16_t lid = 0;     // IB base LID; the port answers LID .. LID + 2^lmc - 1
  uint8_t lmc = 0;
  uint16_t sm_lid = 0;  // IB
  uint8_t sm_sl = 0;
  uint32_t mtu = 4096;  // active MTU in bytes (IB: the link's; RoCE: what fits the IP MTU)
  uint8_t active_speed = 32;  // ibv_port_attr encodings: 1 SDR .. 32 EDR, 64 HDR, 128 NDR
  uint8_t active_width = 2;   // 1 = 1x, 2 = 4x, 4 = 8x, 8 = 12x
  PortQos qos = default_port_qos(8);  // IB: operational VLs, SL→VL, VL arbitration
  std::vector<Gid> gids;  // GID table by index. IB: [0] = subnet prefix | port GUID.
                          // RoCE: the port's addresses, IPv4 as ::ffff:a.b.c.d.
  Mac mac{};              // Ethernet
  // What query_port and sysfs report; 0 = gids.size() / the link layer's default.
  uint32_t gid_tbl_len = 0;
  uint32_t port_cap_flags = 0;
  // P_Key table by index (bit 15: full member); entries past pkeys.size()
  // up to pkey_tbl_len (0 = pkeys.size()) are 0x0000, invalid. RoCE: 0xFFFF only.
  std::vector<uint16_t> pkeys{0xFFFF};
  uint32_t pkey_tbl_len = 0;
  uint32_t pkey_table_len() const { return pkey_tbl_len ? pkey_tbl_len : uint32_t(pkeys.size()); }

  bool passes_data() const { return state == PortState::kActive; }
};

}  // namespace vf
