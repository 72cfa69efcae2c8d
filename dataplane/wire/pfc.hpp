// IEEE 802.1Qbb Priority-based Flow Control frame: an 802.3 MAC Control frame
// (EtherType 0x8808) to the reserved multicast 01:80:C2:00:00:01, never tagged
// and never forwarded by a bridge.
//
//   Dst 01:80:C2:00:00:01 | Src | 0x8808 | Opcode 0x0101 (16)
//   | class-enable vector (16: high octet reserved, bit n = priority n)
//   | time[0] .. time[7] (16 each, in pause quanta) | zero pad to 60 bytes
//
// A quantum is 512 bit times at the link's speed; a time of 0 for an enabled
// class means "resume" (XON). Bits not set in the vector leave that class's
// pause state alone. 802.3x PAUSE (opcode 0x0001) is the same family without
// classes; a PFC port does not act on it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace vf::wire {

inline constexpr uint8_t kPfcDst[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
inline constexpr uint16_t kMacControlPause = 0x0001;  // 802.3x
inline constexpr uint16_t kMacControlPfc = 0x0101;    // 802.1Qbb
inline constexpr unsigned kPfcFrameLen = 60;  // in an mbuf: no FCS; the minimum frame
inline constexpr unsigned kPfcBodyLen = 20;   // opcode + vector + 8 timers
inline constexpr unsigned kPauseQuantumBits = 512;

struct PfcFrame {
  uint8_t enable = 0;  // class-enable vector (priorities 0..7)
  std::array<uint16_t, 8> quanta{};
  bool operator==(const PfcFrame&) const = default;
};

// Writes a whole PFC frame (kPfcFrameLen bytes) from `src`.
void pfc_put(uint8_t* f, const uint8_t* src_mac, const PfcFrame& p);

enum class PfcError : uint8_t {
  kOk,
  kLength,     // shorter than a MAC Control frame with a PFC body
  kDst,        // not the reserved MAC Control address
  kTagged,     // MAC Control frames are never 802.1Q-tagged
  kEtherType,  // not 0x8808 at all (not a MAC Control frame)
  kOpcode,     // a MAC Control opcode this port does not act on (802.3x PAUSE, ...)
};
const char* pfc_error_name(PfcError e);

// Checks a received frame (data from the destination MAC, no FCS) and fills
// `out` when it is a PFC frame. The vector's reserved high octet is ignored,
// as 802.1Qbb says a receiver does.
PfcError pfc_parse(const uint8_t* f, size_t len, PfcFrame& out);

// How long `quanta` pause quanta last at `rate_bps` (rounded up).
constexpr uint64_t pause_quanta_ns(uint16_t quanta, uint64_t rate_bps) {
  return (uint64_t(quanta) * kPauseQuantumBits * 1'000'000'000ULL + rate_bps - 1) / rate_bps;
}

}  // namespace vf::wire
