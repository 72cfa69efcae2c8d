// UDP header (RFC 768) and its checksum over the IPv4/IPv6 pseudo-header.
// RoCEv2 rides on UDP destination port 4791; the source port carries flow
// entropy for ECMP.
//
//   SrcPort(16) | DstPort(16) | Length(16) | Checksum(16)
#pragma once

#include <cstddef>
#include <cstdint>

#include "dataplane/wire/bytes.hpp"

namespace vf::wire {

inline constexpr unsigned kUdpHdrLen = 8;
inline constexpr uint16_t kRoceV2Port = 4791;

inline uint16_t udp_sport(const uint8_t* u) { return get16(u); }
inline uint16_t udp_dport(const uint8_t* u) { return get16(u + 2); }
inline uint16_t udp_len(const uint8_t* u) { return get16(u + 4); }
inline uint16_t udp_checksum(const uint8_t* u) { return get16(u + 6); }

inline void udp_set_sport(uint8_t* u, uint16_t v) { put16(u, v); }
inline void udp_set_dport(uint8_t* u, uint16_t v) { put16(u + 2, v); }
inline void udp_set_len(uint8_t* u, uint16_t v) { put16(u + 4, v); }
inline void udp_set_checksum(uint8_t* u, uint16_t v) { put16(u + 6, v); }

// Checksum to store in a datagram of `udp_len` bytes at `u` (its checksum
// field counted as zero) behind the IPv4 header `ip4` / IPv6 header `ip6`.
// Never returns 0: a computed zero is sent as 0xFFFF (0 means "none").
uint16_t udp_checksum_ipv4(const uint8_t* ip4, const uint8_t* u, size_t udp_len);
uint16_t udp_checksum_ipv6(const uint8_t* ip6, const uint8_t* u, size_t udp_len);
// Whether a received datagram's non-zero checksum is right.
bool udp_checksum_ok_ipv4(const uint8_t* ip4, const uint8_t* u, size_t udp_len);
bool udp_checksum_ok_ipv6(const uint8_t* ip6, const uint8_t* u, size_t udp_len);

}  // namespace vf::wire
