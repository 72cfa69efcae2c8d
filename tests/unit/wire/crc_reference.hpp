// A deliberately naive CRC, written the way the standards describe it rather
// than the way fast code computes it: the message is a bit stream sent least
// significant bit of each byte first; a register initialised to all ones is
// divided by the (non-reflected) polynomial; the remainder is complemented.
// The returned value is bit-reversed so that storing it least significant
// byte first sends the x^(w-1) coefficient first, as IEEE 802.3 and the IBA
// require. Slow and obviously right; the engines under test must agree.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vf::test {

inline uint32_t reference_crc(const uint8_t* p, size_t n, uint32_t poly, unsigned width) {
  const uint32_t mask = width == 32 ? 0xFFFFFFFFu : (1u << width) - 1;
  uint32_t reg = mask;
  for (size_t i = 0; i < n; ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      const uint32_t in = (p[i] >> bit) & 1;
      const uint32_t top = (reg >> (width - 1)) & 1;
      reg = (reg << 1) & mask;
      if (top ^ in) reg ^= poly;
    }
  }
  reg = ~reg & mask;
  uint32_t rev = 0;
  for (unsigned b = 0; b < width; ++b) rev |= ((reg >> b) & 1) << (width - 1 - b);
  return rev;
}

inline uint32_t reference_crc32(const uint8_t* p, size_t n) { return reference_crc(p, n, 0x04C11DB7, 32); }
inline uint16_t reference_vcrc(const uint8_t* p, size_t n) {
  return uint16_t(reference_crc(p, n, 0x100B, 16));
}

}  // namespace vf::test
