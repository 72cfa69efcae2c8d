// IBA Global Route Header (Vol. 1 §8.3): present when LNH = IBA global. It is
// laid out exactly like an IPv6 header, which is what let RoCE v1 carry it
// over Ethernet and why RoCEv2's ICRC masks the same IPv6 fields.
//
//   IPVer(4) TClass(8) FlowLabel(20) | PayLen(16) NxtHdr(8) HopLmt(8)
//   | SGID(128) | DGID(128)
#pragma once

#include <cstdint>
#include <cstring>

#include "dataplane/wire/bytes.hpp"
#include "dataplane/wire/ipv6.hpp"

namespace vf::wire {

inline constexpr unsigned kGrhLen = 40;
inline constexpr unsigned kGidLen = 16;
inline constexpr uint8_t kGrhIpVer = 6;
// NxtHdr value meaning "an IBA transport header (BTH) follows".
inline constexpr uint8_t kGrhNxtHdrIba = 0x1B;

inline uint8_t grh_ipver(const uint8_t* g) { return ipv6_version(g); }
inline uint8_t grh_tclass(const uint8_t* g) { return ipv6_tclass(g); }
inline uint32_t grh_flow_label(const uint8_t* g) { return ipv6_flow_label(g); }
// Bytes after the GRH up to and including the ICRC (the VCRC is excluded).
inline uint16_t grh_paylen(const uint8_t* g) { return ipv6_payload_len(g); }
inline uint8_t grh_nxthdr(const uint8_t* g) { return ipv6_next_header(g); }
inline uint8_t grh_hoplmt(const uint8_t* g) { return ipv6_hop_limit(g); }
inline const uint8_t* grh_sgid(const uint8_t* g) { return g + 8; }
inline const uint8_t* grh_dgid(const uint8_t* g) { return g + 24; }

inline void grh_set_ipver(uint8_t* g, uint8_t v) { ipv6_set_version(g, v); }
inline void grh_set_tclass(uint8_t* g, uint8_t v) { ipv6_set_tclass(g, v); }
inline void grh_set_flow_label(uint8_t* g, uint32_t v) { ipv6_set_flow_label(g, v); }
inline void grh_set_paylen(uint8_t* g, uint16_t v) { ipv6_set_payload_len(g, v); }
inline void grh_set_nxthdr(uint8_t* g, uint8_t v) { ipv6_set_next_header(g, v); }
inline void grh_set_hoplmt(uint8_t* g, uint8_t v) { ipv6_set_hop_limit(g, v); }
inline void grh_set_sgid(uint8_t* g, const uint8_t* gid) { std::memcpy(g + 8, gid, kGidLen); }
inline void grh_set_dgid(uint8_t* g, const uint8_t* gid) { std::memcpy(g + 24, gid, kGidLen); }

}  // namespace vf::wire
