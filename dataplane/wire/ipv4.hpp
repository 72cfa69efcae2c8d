// IPv4 header (RFC 791), the RoCEv2 L3 header when both GIDs are IPv4-mapped.
//
//   Version(4) IHL(4) | DSCP(6) ECN(2) | TotalLen(16) | Id(16) | Flags(3)
//   FragOffset(13) | TTL(8) | Protocol(8) | Checksum(16) | Src(32) | Dst(32)
//   [options to IHL*4 bytes]
#pragma once

#include <cstdint>

#include "dataplane/wire/bytes.hpp"
#include "dataplane/wire/checksum.hpp"

namespace vf::wire {

inline constexpr unsigned kIpv4HdrLen = 20;  // without options
inline constexpr uint8_t kIpProtoUdp = 17;
// Flags (3 bits): reserved, Don't Fragment, More Fragments.
inline constexpr uint8_t kIpv4FlagDf = 0x2;
inline constexpr uint8_t kIpv4FlagMf = 0x1;
// ECN codepoints (RFC 3168) in the low two TOS bits.
inline constexpr uint8_t kEcnNotEct = 0;
inline constexpr uint8_t kEcnEct1 = 1;
inline constexpr uint8_t kEcnEct0 = 2;
inline constexpr uint8_t kEcnCe = 3;

inline uint8_t ipv4_version(const uint8_t* h) { return h[0] >> 4; }
inline uint8_t ipv4_ihl(const uint8_t* h) { return h[0] & 0xF; }  // in 4-byte words
inline uint8_t ipv4_tos(const uint8_t* h) { return h[1]; }
inline uint8_t ipv4_dscp(const uint8_t* h) { return h[1] >> 2; }
inline uint8_t ipv4_ecn(const uint8_t* h) { return h[1] & 0x3; }
inline uint16_t ipv4_total_len(const uint8_t* h) { return get16(h + 2); }
inline uint16_t ipv4_id(const uint8_t* h) { return get16(h + 4); }
inline uint8_t ipv4_flags(const uint8_t* h) { return h[6] >> 5; }
inline uint16_t ipv4_frag_offset(const uint8_t* h) { return get16(h + 6) & 0x1FFF; }
inline uint8_t ipv4_ttl(const uint8_t* h) { return h[8]; }
inline uint8_t ipv4_proto(const uint8_t* h) { return h[9]; }
inline uint16_t ipv4_checksum(const uint8_t* h) { return get16(h + 10); }
inline uint32_t ipv4_src(const uint8_t* h) { return get32(h + 12); }
inline uint32_t ipv4_dst(const uint8_t* h) { return get32(h + 16); }

inline void ipv4_set_version(uint8_t* h, uint8_t v) { h[0] = uint8_t((h[0] & 0x0F) | (v & 0xF) << 4); }
inline void ipv4_set_ihl(uint8_t* h, uint8_t v) { h[0] = uint8_t((h[0] & 0xF0) | (v & 0xF)); }
inline void ipv4_set_tos(uint8_t* h, uint8_t v) { h[1] = v; }
inline void ipv4_set_dscp(uint8_t* h, uint8_t v) { h[1] = uint8_t((h[1] & 0x3) | (v & 0x3F) << 2); }
inline void ipv4_set_ecn(uint8_t* h, uint8_t v) { h[1] = uint8_t((h[1] & 0xFC) | (v & 0x3)); }
inline void ipv4_set_total_len(uint8_t* h, uint16_t v) { put16(h + 2, v); }
inline void ipv4_set_id(uint8_t* h, uint16_t v) { put16(h + 4, v); }
inline void ipv4_set_flags(uint8_t* h, uint8_t v) { h[6] = uint8_t((h[6] & 0x1F) | (v & 0x7) << 5); }
inline void ipv4_set_frag_offset(uint8_t* h, uint16_t v) {
  put16(h + 6, uint16_t((get16(h + 6) & 0xE000) | (v & 0x1FFF)));
}
inline void ipv4_set_ttl(uint8_t* h, uint8_t v) { h[8] = v; }
inline void ipv4_set_proto(uint8_t* h, uint8_t v) { h[9] = v; }
inline void ipv4_set_checksum(uint8_t* h, uint16_t v) { put16(h + 10, v); }
inline void ipv4_set_src(uint8_t* h, uint32_t v) { put32(h + 12, v); }
inline void ipv4_set_dst(uint8_t* h, uint32_t v) { put32(h + 16, v); }

// Header checksum as it should be stored: computed over IHL*4 bytes with the
// checksum field counted as zero. The caller guarantees IHL*4 readable bytes.
inline uint16_t ipv4_compute_checksum(const uint8_t* h) {
  const unsigned len = ipv4_ihl(h) * 4u;
  const uint16_t s = inet_add(inet_sum(h, 10), inet_sum(h + 12, len > 12 ? len - 12 : 0));
  return uint16_t(~s);
}
inline void ipv4_fill_checksum(uint8_t* h) { ipv4_set_checksum(h, ipv4_compute_checksum(h)); }
// A header whose words, checksum included, sum to all ones is intact.
inline bool ipv4_checksum_ok(const uint8_t* h) { return inet_sum(h, ipv4_ihl(h) * 4u) == 0xFFFF; }
// What a router does to a header it forwards: TTL - 1, the checksum updated
// incrementally (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m = TTL|protocol).
inline void ipv4_decrement_ttl(uint8_t* h) {
  const uint16_t old_word = get16(h + 8);
  h[8] = uint8_t(h[8] - 1);
  const uint16_t new_word = get16(h + 8);
  const uint16_t sum = inet_add(inet_add(uint16_t(~ipv4_checksum(h)), uint16_t(~old_word)), new_word);
  ipv4_set_checksum(h, uint16_t(~sum));
}

}  // namespace vf::wire
