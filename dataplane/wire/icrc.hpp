// End-to-end and link-level CRCs of IBA packets (Vol. 1 §7.8; Annex A17 for
// RoCEv2).
//
// ICRC: CRC-32 over every field that no switch or router may change. Variant
// fields are replaced by ones for the computation:
//  - IB local (LNH=2): LRH with VL = 0xF, then BTH with byte 4 (FECN, BECN,
//    resv6 = "resv8a") = 0xFF, then the rest.
//  - IB global (LNH=3) and RoCEv2: the whole LRH = 8 bytes of 0xFF (routers
//    rebuild it; RoCEv2 has none), then the GRH / IPv6 header with TClass,
//    FlowLabel, HopLmt = ones, or the IPv4 header with TOS, TTL and header
//    checksum = ones; for RoCEv2 the UDP checksum = ones; then BTH as above.
// The result is stored least significant byte first (the Linux rxe and
// Mellanox convention), which is the order a bit-reflected CRC is sent in.
//
// VCRC: the 16-bit CRC (crc16_iba) over LRH..ICRC of the packet as sent on the
// current link, stored least significant byte first. Native IB only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dataplane/wire/bytes.hpp"

namespace vf::wire {

// zlib.crc32(b'\xff' * 8): the running CRC after the masked LRH that starts
// the ICRC of every global IB and every RoCEv2 packet.
inline constexpr uint32_t kCrc32Of8Ones = 0x2144DF1C;

// `lrh` starts an IB packet; `len` counts LRH up to the end of the pad (ICRC and
// VCRC excluded). LNH chooses local/global. Requires len >= LRH [+ GRH] + BTH.
uint32_t icrc_ib(const uint8_t* lrh, size_t len);

// `l3` starts the IPv4 or IPv6 header of a RoCEv2 packet (the version nibble
// chooses); `len` counts from there to the end of the pad (ICRC excluded).
// Requires len >= IP header (IHL*4 for IPv4) + UDP + BTH.
uint32_t icrc_roce(const uint8_t* l3, size_t len);

// `lrh` starts an IB packet; `len` counts LRH up to and including the ICRC.
uint16_t vcrc(const uint8_t* lrh, size_t len);

inline uint32_t icrc_load(const uint8_t* p) { return get_le32(p); }
inline void icrc_store(uint8_t* p, uint32_t v) { put_le32(p, v); }
inline uint16_t vcrc_load(const uint8_t* p) { return get_le16(p); }
inline void vcrc_store(uint8_t* p, uint16_t v) { put_le16(p, v); }

}  // namespace vf::wire
