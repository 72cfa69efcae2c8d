// IBA transport headers (Vol. 1 ch. 9.2-9.5): BTH and the extended transport
// headers. Shared by IB and RoCEv2 framing; the engine reads and writes them.
#pragma once

#include <cstdint>

#include "dataplane/wire/bytes.hpp"

namespace vf::wire {

inline constexpr unsigned kBthLen = 12;
inline constexpr unsigned kRethLen = 16;
inline constexpr unsigned kAethLen = 4;
inline constexpr unsigned kImmDtLen = 4;
inline constexpr unsigned kIethLen = 4;
inline constexpr unsigned kDethLen = 8;
inline constexpr unsigned kAtomicEthLen = 28;
inline constexpr unsigned kAtomicAckEthLen = 8;
inline constexpr unsigned kIcrcLen = 4;
inline constexpr uint32_t kPsnMask = 0xFFFFFF;
inline constexpr uint32_t kQpnMask = 0xFFFFFF;

// ---- BTH: opcode(8) | SE M PadCnt(2) TVer(4) | P_Key(16) | FECN BECN resv6 | DestQP(24)
//           | AckReq resv7 | PSN(24)
inline uint8_t bth_opcode(const uint8_t* b) { return b[0]; }
inline bool bth_se(const uint8_t* b) { return b[1] & 0x80; }
inline bool bth_mig(const uint8_t* b) { return b[1] & 0x40; }
inline unsigned bth_padcnt(const uint8_t* b) { return (b[1] >> 4) & 3; }
inline unsigned bth_tver(const uint8_t* b) { return b[1] & 0xF; }
inline uint16_t bth_pkey(const uint8_t* b) { return get16(b + 2); }
inline bool bth_fecn(const uint8_t* b) { return b[4] & 0x80; }
inline bool bth_becn(const uint8_t* b) { return b[4] & 0x40; }
inline uint8_t bth_resv8a(const uint8_t* b) { return b[4]; }
inline uint32_t bth_dqpn(const uint8_t* b) { return get24(b + 5); }
inline bool bth_ackreq(const uint8_t* b) { return b[8] & 0x80; }
inline uint32_t bth_psn(const uint8_t* b) { return get24(b + 9); }

inline void bth_set_opcode(uint8_t* b, uint8_t v) { b[0] = v; }
inline void bth_set_se(uint8_t* b, bool v) { b[1] = uint8_t((b[1] & ~0x80) | (v ? 0x80 : 0)); }
inline void bth_set_mig(uint8_t* b, bool v) { b[1] = uint8_t((b[1] & ~0x40) | (v ? 0x40 : 0)); }
inline void bth_set_padcnt(uint8_t* b, unsigned v) { b[1] = uint8_t((b[1] & ~0x30) | ((v & 3) << 4)); }
inline void bth_set_tver(uint8_t* b, unsigned v) { b[1] = uint8_t((b[1] & ~0x0F) | (v & 0xF)); }
inline void bth_set_pkey(uint8_t* b, uint16_t v) { put16(b + 2, v); }
inline void bth_set_fecn(uint8_t* b, bool v) { b[4] = uint8_t((b[4] & ~0x80) | (v ? 0x80 : 0)); }
inline void bth_set_becn(uint8_t* b, bool v) { b[4] = uint8_t((b[4] & ~0x40) | (v ? 0x40 : 0)); }
inline void bth_set_dqpn(uint8_t* b, uint32_t v) { put24(b + 5, v & kQpnMask); }
inline void bth_set_ackreq(uint8_t* b, bool v) { b[8] = uint8_t((b[8] & ~0x80) | (v ? 0x80 : 0)); }
inline void bth_set_psn(uint8_t* b, uint32_t v) { put24(b + 9, v & kPsnMask); }

// ---- RETH: VA(64) | R_Key(32) | DMA length(32)
inline uint64_t reth_va(const uint8_t* h) { return get64(h); }
inline uint32_t reth_rkey(const uint8_t* h) { return get32(h + 8); }
inline uint32_t reth_len(const uint8_t* h) { return get32(h + 12); }
inline void reth_set(uint8_t* h, uint64_t va, uint32_t rkey, uint32_t len) {
  put64(h, va);
  put32(h + 8, rkey);
  put32(h + 12, len);
}

// ---- AETH: Syndrome(8) | MSN(24)
inline uint8_t aeth_syndrome(const uint8_t* h) { return h[0]; }
inline uint32_t aeth_msn(const uint8_t* h) { return get24(h + 1); }
inline void aeth_set(uint8_t* h, uint8_t syndrome, uint32_t msn) {
  h[0] = syndrome;
  put24(h + 1, msn & 0xFFFFFF);
}

// Syndrome: bits 6..5 select ACK(00) / RNR NAK(01) / NAK(11); low 5 bits are the
// credit count, the RNR timer code or the NAK code.
enum class AckType : uint8_t { kAck = 0, kRnrNak = 1, kReserved = 2, kNak = 3 };
inline AckType syndrome_type(uint8_t s) { return AckType((s >> 5) & 3); }
inline uint8_t syndrome_value(uint8_t s) { return s & 0x1F; }
inline uint8_t make_syndrome(AckType t, uint8_t value) {
  return uint8_t((uint8_t(t) << 5) | (value & 0x1F));
}
enum NakCode : uint8_t {
  kNakPsnSeqError = 0,
  kNakInvalidRequest = 1,
  kNakRemoteAccessError = 2,
  kNakRemoteOperationalError = 3,
  kNakInvalidRdRequest = 4,
};
inline constexpr uint8_t kAethCreditsInvalid = 0x1F;

// ---- ImmDt / IETH: 32 bits, carried in network order end to end.
inline uint32_t immdt(const uint8_t* h) { return get32(h); }
inline void immdt_set(uint8_t* h, uint32_t v) { put32(h, v); }

// ---- DETH: Q_Key(32) | resv8 | SrcQP(24)
inline uint32_t deth_qkey(const uint8_t* h) { return get32(h); }
inline uint32_t deth_sqpn(const uint8_t* h) { return get24(h + 5); }
inline void deth_set(uint8_t* h, uint32_t qkey, uint32_t sqpn) {
  put32(h, qkey);
  h[4] = 0;
  put24(h + 5, sqpn & kQpnMask);
}

// ---- AtomicETH: VA(64) | R_Key(32) | Swap/Add(64) | Compare(64)
inline uint64_t atmeth_va(const uint8_t* h) { return get64(h); }
inline uint32_t atmeth_rkey(const uint8_t* h) { return get32(h + 8); }
inline uint64_t atmeth_swap_add(const uint8_t* h) { return get64(h + 12); }
inline uint64_t atmeth_compare(const uint8_t* h) { return get64(h + 20); }
inline void atmeth_set(uint8_t* h, uint64_t va, uint32_t rkey, uint64_t swap_add, uint64_t cmp) {
  put64(h, va);
  put32(h + 8, rkey);
  put64(h + 12, swap_add);
  put64(h + 20, cmp);
}

// ---- AtomicAckETH: original remote data(64)
inline uint64_t atmack_orig(const uint8_t* h) { return get64(h); }
inline void atmack_set(uint8_t* h, uint64_t v) { put64(h, v); }

// PSN arithmetic is modulo 2^24; a - b as a signed distance.
inline int32_t psn_diff(uint32_t a, uint32_t b) { return int32_t((a - b) << 8) >> 8; }

}  // namespace vf::wire
