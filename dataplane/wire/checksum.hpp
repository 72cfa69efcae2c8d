// The Internet ones-complement checksum (RFC 1071) for IPv4 headers and UDP.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vf::wire {

// Ones-complement sum of `n` bytes taken as big-endian 16-bit words, folded to
// 16 bits and not inverted. An odd trailing byte counts as a word's high byte,
// so only the last of several chained pieces may have odd length.
uint16_t inet_sum(const uint8_t* p, size_t n);

// Ones-complement addition of two folded sums.
inline uint16_t inet_add(uint16_t a, uint16_t b) {
  uint32_t s = uint32_t(a) + b;
  return uint16_t((s & 0xFFFF) + (s >> 16));
}

}  // namespace vf::wire
