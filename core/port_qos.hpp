// A port's VL attributes, one record per port of every IB element (an HCA
// port's PortInfo embeds it; an IB switch keeps one per port): what the IBA
// spreads over PortInfo (OperationalVLs, VLHighLimit), SLtoVLMappingTable and
// VLArbitrationTable. A switch reads the egress port's record, an HCA port its
// own, so a subnet manager that programs a port changes exactly one record.
//
// VL arbitration (IBA 7.6.9): every IB port's egress arbiter serves these
// tables (dataplane/fabric/arbiter.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>

#include "core/types.hpp"

namespace vf {

// One VLArbitrationTable entry: VL and Weight, the number of 64-byte units
// the VL may send per turn (0 = the entry is skipped).
struct VlArbEntry {
  uint8_t vl = 0;
  uint8_t weight = 0;
  friend bool operator==(const VlArbEntry&, const VlArbEntry&) = default;
};

// A high- or low-priority list. The IBA allows up to 64 entries (VLArbHighCap /
// VLArbLowCap); ConnectX HCAs report 8 of each, one per data VL, and so do we.
// Entries past `size` are not part of the list.
inline constexpr unsigned kVlArbCap = 8;
struct VlArbTable {
  std::array<VlArbEntry, kVlArbCap> entries{};
  uint8_t size = 0;
  // A list of at most kVlArbCap entries (the rest are dropped).
  static constexpr VlArbTable of(std::initializer_list<VlArbEntry> list) {
    VlArbTable t;
    for (const VlArbEntry& e : list)
      if (t.size < kVlArbCap) t.entries[t.size++] = e;
    return t;
  }
  // Appends one entry; false when the list is full.
  constexpr bool add(VlArbEntry e) {
    if (size >= kVlArbCap) return false;
    entries[size++] = e;
    return true;
  }
  friend bool operator==(const VlArbTable&, const VlArbTable&) = default;
};

struct PortQos {
  uint8_t data_vls = 8;                  // OperationalVLs: data VLs 0 .. data_vls-1
  std::array<uint8_t, kNumSls> sl2vl{};  // SL -> VL; kVl15 = the SL may not use this port
  VlArbTable vlarb_high;
  VlArbTable vlarb_low;
  // LimitOfHighPriority: 4096-byte units the high list may send before the
  // low list gets a turn (IBA 7.6.9.1; 255 = unlimited, 0 = one packet).
  uint8_t vlarb_high_limit = 0;

  // Sets one SL→VL entry; false (nothing changed) unless sl < 16 and vl is an
  // operational data VL or VL15.
  bool set_sl2vl(uint8_t sl, uint8_t vl) {
    if (sl >= kNumSls || (vl >= data_vls && vl != kVl15)) return false;
    sl2vl[sl] = vl;
    return true;
  }
  // Replaces the VLArbitration tables; false (nothing changed) when a list
  // is longer than kVlArbCap or an entry with weight names a VL that is not
  // an operational data VL.
  bool set_vlarb(const VlArbTable& high, const VlArbTable& low, uint8_t high_limit) {
    for (const VlArbTable* t : {&high, &low}) {
      if (t->size > kVlArbCap) return false;
      for (unsigned i = 0; i < t->size; ++i)
        if (t->entries[i].weight && t->entries[i].vl >= data_vls) return false;
    }
    vlarb_high = high;
    vlarb_low = low;
    vlarb_high_limit = high_limit;
    return true;
  }
  friend bool operator==(const PortQos&, const PortQos&) = default;
};

// The record a port starts with, before any subnet manager programs it:
//  - SL n -> VL n % data_vls, so every SL has a data VL and 16 SLs spread
//    evenly over 1, 2, 4 or 8 VLs (what the HCA and switch did before).
//  - An empty high-priority list and every data VL once in the low-priority
//    list with weight 64 (64 x 64 B = 4 KiB, one full 4096-MTU packet per
//    turn): equal shares, i.e. the round robin egress does today. opensm's
//    QoS defaults instead put VL0 alone in the high list (weight 4) and
//    VL1..14 in the low list, which would favour VL0; it applies them only
//    with QoS enabled, so they are not a port's power-on state.
//  - LimitOfHighPriority 0 (opensm's default), moot while the high list is empty.
constexpr PortQos default_port_qos(uint8_t data_vls) {
  PortQos q;
  q.data_vls = data_vls;
  for (unsigned sl = 0; sl < kNumSls; ++sl) q.sl2vl[sl] = data_vls ? uint8_t(sl % data_vls) : 0;
  for (uint8_t vl = 0; vl < data_vls && vl < kVlArbCap; ++vl) q.vlarb_low.entries[vl] = {vl, 64};
  q.vlarb_low.size = uint8_t(data_vls < kVlArbCap ? data_vls : kVlArbCap);
  return q;
}

}  // namespace vf
