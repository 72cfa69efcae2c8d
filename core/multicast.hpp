// Multicast addresses as the verbs and the wire see them: which GIDs name a
// group (rdma_is_multicast_addr: an IPv6 / IB multicast GID ff00::/8, or an
// IPv4-mapped 224.0.0.0/4), which LIDs are multicast LIDs (IBA 4.1.2), and
// the Ethernet group MAC a RoCEv2 packet to a group is sent to (RFC 1112:
// 01:00:5e + the low 23 bits; RFC 2464: 33:33 + the low 32 bits).
#pragma once

#include <cstdint>
#include <cstring>

namespace vf {

inline constexpr uint32_t kMulticastQpn = 0xFFFFFF;  // BTH DestQP of a multicast datagram
inline constexpr uint16_t kFirstMulticastLid = 0xC000;
inline constexpr uint16_t kPermissiveLid = 0xFFFF;

inline bool is_v4_mapped_raw(const uint8_t* g) {
  static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  return std::memcmp(g, kPrefix, 12) == 0;
}

inline bool is_multicast_gid(const uint8_t* g) {
  if (g[0] == 0xFF) return true;
  return is_v4_mapped_raw(g) && (g[12] & 0xF0) == 0xE0;
}

inline bool is_multicast_lid(uint16_t lid) { return lid >= kFirstMulticastLid && lid != kPermissiveLid; }

// The group MAC of a multicast GID (is_multicast_gid must hold).
inline void multicast_mac(const uint8_t* g, uint8_t* mac) {
  if (is_v4_mapped_raw(g)) {
    mac[0] = 0x01, mac[1] = 0x00, mac[2] = 0x5E;
    mac[3] = g[13] & 0x7F, mac[4] = g[14], mac[5] = g[15];
    return;
  }
  mac[0] = 0x33, mac[1] = 0x33;
  std::memcpy(mac + 2, g + 12, 4);
}

}  // namespace vf
