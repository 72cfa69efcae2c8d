#include "daemon/mad/mad.hpp"

namespace vf::mad {

uint64_t get_bits(const uint8_t* p, unsigned off, unsigned width) {
  uint64_t v = 0;
  for (unsigned i = 0; i < width; ++i) {
    const unsigned bit = off + i;
    v = v << 1 | ((p[bit / 8] >> (7 - bit % 8)) & 1u);
  }
  return v;
}

void put_bits(uint8_t* p, unsigned off, unsigned width, uint64_t v) {
  for (unsigned i = 0; i < width; ++i) {
    const unsigned bit = off + width - 1 - i;  // least significant bit last
    const uint8_t mask = uint8_t(1u << (7 - bit % 8));
    if ((v >> i) & 1u)
      p[bit / 8] |= mask;
    else
      p[bit / 8] &= uint8_t(~mask);
  }
}

bool expects_response(const Mad& m) {
  switch (method(m)) {
    case kGet:
    case kSet:
    case kGetTable:
    case 0x13:  // GetTraceTable
    case 0x14:  // GetMulti
    case 0x15:  // Delete
    case kReport:
      return true;
    default:
      return false;
  }
}

}  // namespace vf::mad
