// The two CRCs the IBA puts on packets, as chainable running values:
// crc32_ieee(crc32_ieee(0, a), b) == crc32_ieee(0, a ++ b), the convention of
// zlib's crc32(). That lets the ICRC run over a small masked copy of the
// headers on the stack and continue over the payload in place.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vf::wire {

// CRC-32 of IEEE 802.3 (polynomial 0x04C11DB7, reflected, init and final XOR
// all ones). Bit-identical to zlib crc32(); the IBA ICRC uses it.
uint32_t crc32_ieee(uint32_t crc, const uint8_t* p, size_t n);

// The IBA VCRC CRC-16 (polynomial 0x100B, bits processed least significant
// first like the ICRC, init 0xFFFF, final XOR 0xFFFF).
uint16_t crc16_iba(uint16_t crc, const uint8_t* p, size_t n);

// Whether the carry-less-multiply path is in use (for benchmarks and tests).
bool crc_uses_pclmul();
// Forces the portable table path (tests compare both paths); not thread safe.
void crc_force_portable(bool portable);

}  // namespace vf::wire
