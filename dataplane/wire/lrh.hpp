// IBA Local Route Header (Vol. 1 §7.7): the link-layer header of every native
// IB packet. Switches forward on DLID and rewrite VL hop by hop, which is why
// the VCRC (not the ICRC) is what protects VL.
//
//   byte 0: VL(4) LVer(4) | byte 1: SL(4) resv(2) LNH(2) | DLID(16)
//   | resv(5) PktLen(11) | SLID(16)
#pragma once

#include <cstdint>

#include "dataplane/wire/bytes.hpp"

namespace vf::wire {

inline constexpr unsigned kLrhLen = 8;
// The VCRC trails every IB packet and is not counted in PktLen.
inline constexpr unsigned kVcrcLen = 2;

// LNH: what follows the LRH.
inline constexpr uint8_t kLnhRaw = 0;
inline constexpr uint8_t kLnhIpNonIba = 1;
inline constexpr uint8_t kLnhIbaLocal = 2;   // BTH follows
inline constexpr uint8_t kLnhIbaGlobal = 3;  // GRH follows

// PktLen counts 4-byte words from the first LRH byte up to and including the
// ICRC; 11 bits.
inline constexpr uint16_t kLrhPktLenMax = 0x7FF;
inline constexpr uint8_t kVl15 = 15;  // management VL: never flow controlled
inline constexpr uint16_t kPermissiveLid = 0xFFFF;

inline uint8_t lrh_vl(const uint8_t* h) { return h[0] >> 4; }
inline uint8_t lrh_lver(const uint8_t* h) { return h[0] & 0xF; }
inline uint8_t lrh_sl(const uint8_t* h) { return h[1] >> 4; }
inline uint8_t lrh_lnh(const uint8_t* h) { return h[1] & 0x3; }
inline uint16_t lrh_dlid(const uint8_t* h) { return get16(h + 2); }
inline uint16_t lrh_pktlen(const uint8_t* h) { return get16(h + 4) & kLrhPktLenMax; }
inline uint16_t lrh_slid(const uint8_t* h) { return get16(h + 6); }

inline void lrh_set_vl(uint8_t* h, uint8_t v) { h[0] = uint8_t((h[0] & 0x0F) | (v & 0xF) << 4); }
inline void lrh_set_lver(uint8_t* h, uint8_t v) { h[0] = uint8_t((h[0] & 0xF0) | (v & 0xF)); }
inline void lrh_set_sl(uint8_t* h, uint8_t v) { h[1] = uint8_t((h[1] & 0x0F) | (v & 0xF) << 4); }
inline void lrh_set_lnh(uint8_t* h, uint8_t v) { h[1] = uint8_t((h[1] & ~0x3) | (v & 0x3)); }
inline void lrh_set_dlid(uint8_t* h, uint16_t v) { put16(h + 2, v); }
inline void lrh_set_pktlen(uint8_t* h, uint16_t v) {
  put16(h + 4, uint16_t((get16(h + 4) & ~kLrhPktLenMax) | (v & kLrhPktLenMax)));
}
inline void lrh_set_slid(uint8_t* h, uint16_t v) { put16(h + 6, v); }

}  // namespace vf::wire
