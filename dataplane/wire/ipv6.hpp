// IPv6 fixed header (RFC 8200), the RoCEv2 L3 header for non-IPv4 GIDs. The
// IB GRH has the same layout (see grh.hpp).
//
//   Version(4) TClass(8) FlowLabel(20) | PayloadLen(16) NextHdr(8) HopLimit(8)
//   | Src(128) | Dst(128)
#pragma once

#include <cstdint>
#include <cstring>

#include "dataplane/wire/bytes.hpp"

namespace vf::wire {

inline constexpr unsigned kIpv6HdrLen = 40;
inline constexpr unsigned kIpv6AddrLen = 16;
inline constexpr uint32_t kFlowLabelMask = 0xFFFFF;

inline uint8_t ipv6_version(const uint8_t* h) { return h[0] >> 4; }
inline uint8_t ipv6_tclass(const uint8_t* h) { return uint8_t((h[0] & 0xF) << 4 | h[1] >> 4); }
inline uint32_t ipv6_flow_label(const uint8_t* h) { return get24(h + 1) & kFlowLabelMask; }
inline uint16_t ipv6_payload_len(const uint8_t* h) { return get16(h + 4); }
inline uint8_t ipv6_next_header(const uint8_t* h) { return h[6]; }
inline uint8_t ipv6_hop_limit(const uint8_t* h) { return h[7]; }
inline const uint8_t* ipv6_src(const uint8_t* h) { return h + 8; }
inline const uint8_t* ipv6_dst(const uint8_t* h) { return h + 24; }

inline void ipv6_set_version(uint8_t* h, uint8_t v) { h[0] = uint8_t((h[0] & 0x0F) | (v & 0xF) << 4); }
inline void ipv6_set_tclass(uint8_t* h, uint8_t v) {
  h[0] = uint8_t((h[0] & 0xF0) | v >> 4);
  h[1] = uint8_t((h[1] & 0x0F) | (v & 0xF) << 4);
}
inline void ipv6_set_flow_label(uint8_t* h, uint32_t v) {
  put24(h + 1, (get24(h + 1) & ~kFlowLabelMask) | (v & kFlowLabelMask));
}
inline void ipv6_set_payload_len(uint8_t* h, uint16_t v) { put16(h + 4, v); }
inline void ipv6_set_next_header(uint8_t* h, uint8_t v) { h[6] = v; }
inline void ipv6_set_hop_limit(uint8_t* h, uint8_t v) { h[7] = v; }
inline void ipv6_set_src(uint8_t* h, const uint8_t* addr) { std::memcpy(h + 8, addr, kIpv6AddrLen); }
inline void ipv6_set_dst(uint8_t* h, const uint8_t* addr) { std::memcpy(h + 24, addr, kIpv6AddrLen); }

}  // namespace vf::wire
