// Ethernet II header and the 802.1Q tag, plus what a frame costs on the wire
// beyond its bytes. Our mbufs never hold the FCS: a frame in an mbuf runs from
// the destination MAC to the last payload byte, as a NIC hands it over after
// stripping the CRC. The link model adds FCS, preamble and IFG (wire_bytes.hpp).
//
//   Dst(48) | Src(48) | [TPID 0x8100(16) PCP(3) DEI(1) VID(12)] | EtherType(16)
#pragma once

#include <cstdint>
#include <cstring>

#include "dataplane/wire/bytes.hpp"

namespace vf::wire {

inline constexpr unsigned kEthAddrLen = 6;
inline constexpr unsigned kEthHdrLen = 14;
inline constexpr unsigned kEthTypeOffset = 12;  // also where an 802.1Q tag starts
inline constexpr unsigned kVlanLen = 4;

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;
inline constexpr uint16_t kEtherTypeMacControl = 0x8808;  // PAUSE / PFC
inline constexpr uint16_t kEtherTypeArp = 0x0806;

// Per-frame cost on the wire that is not in the mbuf.
inline constexpr unsigned kEthPreambleSfdLen = 8;
inline constexpr unsigned kEthIfgLen = 12;
inline constexpr unsigned kEthFcsLen = 4;
inline constexpr unsigned kEthMinFrameLen = 64;  // including FCS; shorter frames are padded

inline const uint8_t* eth_dst(const uint8_t* f) { return f; }
inline uint8_t* eth_dst(uint8_t* f) { return f; }
inline const uint8_t* eth_src(const uint8_t* f) { return f + 6; }
inline uint8_t* eth_src(uint8_t* f) { return f + 6; }
// For a tagged frame this is the TPID (0x8100); the real type is after the tag.
inline uint16_t eth_type(const uint8_t* f) { return get16(f + kEthTypeOffset); }

inline bool eth_addr_equal(const uint8_t* a, const uint8_t* b) { return std::memcmp(a, b, kEthAddrLen) == 0; }

inline void eth_set_dst(uint8_t* f, const uint8_t* mac) { std::memcpy(f, mac, kEthAddrLen); }
inline void eth_set_src(uint8_t* f, const uint8_t* mac) { std::memcpy(f + 6, mac, kEthAddrLen); }
inline void eth_set_type(uint8_t* f, uint16_t t) { put16(f + kEthTypeOffset, t); }

// ---- 802.1Q tag, 4 bytes starting at its TPID (frame + kEthTypeOffset). The
// encapsulated EtherType follows the tag.
inline uint16_t vlan_tpid(const uint8_t* t) { return get16(t); }
inline uint8_t vlan_pcp(const uint8_t* t) { return t[2] >> 5; }
inline bool vlan_dei(const uint8_t* t) { return t[2] & 0x10; }
inline uint16_t vlan_vid(const uint8_t* t) { return get16(t + 2) & 0x0FFF; }

inline void vlan_set_tpid(uint8_t* t, uint16_t v) { put16(t, v); }
inline void vlan_set_pcp(uint8_t* t, uint8_t v) { t[2] = uint8_t((t[2] & 0x1F) | (v & 0x7) << 5); }
inline void vlan_set_dei(uint8_t* t, bool v) { t[2] = uint8_t((t[2] & ~0x10) | (v ? 0x10 : 0)); }
inline void vlan_set_vid(uint8_t* t, uint16_t v) {
  put16(t + 2, uint16_t((get16(t + 2) & 0xF000) | (v & 0x0FFF)));
}

}  // namespace vf::wire
