// A fuzzer mutating frames almost never keeps a CRC right, and the checks
// come first, so most inputs would die there. These make a mutated frame's
// CRCs and checksums consistent again (where the frame is long enough for
// them), so the parsing behind the checks is fuzzed as well.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vf::fuzz {

// IB: LNH picks the GRH; ICRC over LRH..pad, then VCRC, at the frame's end.
void fix_ib_crcs(std::vector<uint8_t>& f);
// RoCEv2: after Ethernet (+ one 802.1Q tag), IPv4 header checksum, UDP
// checksum zeroed (accepted), ICRC over IP..pad in the last four bytes.
void fix_roce_crcs(std::vector<uint8_t>& f);

// The frame fuzzers' input: [split][flags] frame; flags bit 0 asks for `fix`.
struct FrameInput {
  size_t split;
  std::vector<uint8_t> frame;
};
FrameInput frame_input(const uint8_t* data, size_t size, void (*fix)(std::vector<uint8_t>&));

}  // namespace vf::fuzz
