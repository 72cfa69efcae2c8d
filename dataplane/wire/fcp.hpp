// IBA flow-control packet (Vol. 1 §7.9.4): the 6-byte link packet a port
// sends its neighbour per data VL, carrying this end's transmit count and the
// credit limit of this end's receive buffer for that VL.
//
//   byte 0: Op(4) FCTBS[11:8](4) | byte 1: FCTBS[7:0]
//   byte 2: VL(4) FCCL[11:8](4)  | byte 3: FCCL[7:0]  | LPCRC(16)
//
// Op 0 = normal, 1 = flow control init (sent while the link initialises).
// FCTBS: blocks (64 bytes) this end sent on the VL since the link came up,
// modulo 4096. FCCL: the credit limit this end grants the peer on the VL,
// modulo 4096. LPCRC: the VCRC's CRC-16 over the first four bytes, stored
// least significant byte first like the VCRC.
//
// On the physical wire a link packet starts with its own delimiter (SLP, not
// SDP); the emulated wire carries frames without symbols, so a 6-byte frame
// is a link packet -- no data packet is that short (LRH + VCRC alone is 10).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace vf::wire {

inline constexpr unsigned kFcpLen = 6;
inline constexpr unsigned kBlockBytes = 64;    // credit unit
inline constexpr uint16_t kCreditMask = 0xFFF;  // FCTBS / FCCL / ABR are modulo 4096
inline constexpr uint16_t kCreditWindow = 2048;  // at most this far ahead

enum class FcpOp : uint8_t { kNormal = 0, kInit = 1 };

struct Fcp {
  FcpOp op = FcpOp::kNormal;
  uint16_t fctbs = 0;  // 12 bits
  uint8_t vl = 0;
  uint16_t fccl = 0;  // 12 bits
  bool operator==(const Fcp&) const = default;
};

// Credit blocks a packet of `bytes` (LRH..VCRC) occupies.
constexpr uint32_t packet_blocks(uint32_t bytes) { return (bytes + kBlockBytes - 1) / kBlockBytes; }

// Writes the 6 bytes, LPCRC included.
void fcp_put(uint8_t* b, const Fcp& f);

enum class FcpError : uint8_t { kOk, kLength, kLpcrc, kOp };
// Checks length, LPCRC and Op (2-15 are reserved); fills `out` when kOk.
FcpError fcp_parse(const uint8_t* b, size_t len, Fcp& out);

// The IBA's sender test: may a packet of `blocks` go when this end has sent
// `fctbs` blocks and the peer granted up to `fccl`? (FCCL - (FCTBS + blocks))
// mod 4096 <= 2048.
constexpr bool credit_allows(uint16_t fctbs, uint16_t fccl, uint32_t blocks) {
  return uint16_t((fccl - (fctbs + blocks)) & kCreditMask) <= kCreditWindow;
}

}  // namespace vf::wire
