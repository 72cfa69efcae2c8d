#include "dataplane/wire/checksum.hpp"

#include <bit>
#include <cstring>

namespace vf::wire {

static_assert(std::endian::native == std::endian::little, "little-endian host assumed");

uint16_t inet_sum(const uint8_t* p, size_t n) {
  // Summing native (little-endian) words gives the byte-swapped ones-complement
  // sum (RFC 1071 §2(B)); swapping once at the end is cheaper than per word.
  uint64_t acc = 0;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    acc += w & 0xFFFFFFFF;
    acc += w >> 32;
    p += 8;
    n -= 8;
  }
  if (n >= 4) {
    uint32_t w;
    std::memcpy(&w, p, 4);
    acc += w;
    p += 4;
    n -= 4;
  }
  if (n >= 2) {
    acc += uint32_t(p[0] | p[1] << 8);
    p += 2;
    n -= 2;
  }
  if (n) acc += p[0];  // the high byte of a big-endian word = low byte here
  while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
  return uint16_t(acc << 8 | acc >> 8);
}

}  // namespace vf::wire
