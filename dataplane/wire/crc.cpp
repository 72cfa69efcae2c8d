// Two engines behind one interface:
//  - slice-by-8 tables (portable, ~1 byte/cycle/table-lookup chain), used for
//    short inputs such as a masked header copy and for tails;
//  - PCLMULQDQ folding for inputs of 64 bytes and more. It folds 16-byte blocks
//    towards the end of the input with constants x^k mod P, which preserves the
//    input's value mod P, and hands the last folded block to the tables. That
//    final step replaces the usual Barrett reduction, so one routine serves any
//    reflected CRC of width <= 32: here both the ICRC and the VCRC.
#include "dataplane/wire/crc.hpp"

#include <array>
#include <bit>
#include <cstring>

#include <immintrin.h>

namespace vf::wire {
namespace {

static_assert(std::endian::native == std::endian::little, "little-endian host assumed");

using Table = std::array<std::array<uint32_t, 256>, 8>;

// A reflected CRC register: bit i holds the coefficient of x^(W-1-i).
template <unsigned W, uint32_t kPolyReflected>
struct Crc {
  static constexpr uint32_t step(uint32_t s) { return s & 1 ? (s >> 1) ^ kPolyReflected : s >> 1; }

  // t[k][b]: register after byte b followed by k zero bytes, from zero.
  static constexpr Table make_table() {
    Table t{};
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t s = b;
      for (int i = 0; i < 8; ++i) s = step(s);
      t[0][b] = s;
    }
    for (int k = 1; k < 8; ++k)
      for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
    return t;
  }

  // x^n mod P as a 64-bit PCLMUL operand: the coefficient of x^m sits at bit
  // 63-m, so the register value is shifted up by 64-W.
  static constexpr uint64_t xpow(unsigned n) {
    uint32_t s = 1u << (W - 1);
    while (n--) s = step(s);
    return uint64_t(s) << (64 - W);
  }

  static constexpr Table kTable = make_table();
  // A 128-bit block B = Lo*x^64 + Hi moved D bits later is
  // Lo*x^(64+D) + Hi*x^D. Carry-less products of reflected operands come out
  // multiplied by x once more, hence the -1 in the exponents.
  static constexpr uint64_t kFold512Lo = xpow(64 + 512 - 1);
  static constexpr uint64_t kFold512Hi = xpow(512 - 1);
  static constexpr uint64_t kFold128Lo = xpow(64 + 128 - 1);
  static constexpr uint64_t kFold128Hi = xpow(128 - 1);
};

using Crc32 = Crc<32, 0xEDB88320u>;
using Crc16 = Crc<16, 0xD008u>;  // 0x100B bit-reversed over 16 bits

inline uint32_t table_update(const Table& t, uint32_t s, const uint8_t* p, size_t n) {
  while (n >= 8) {
    uint64_t x;
    std::memcpy(&x, p, 8);
    x ^= s;  // the register lines up with the next W/8 input bytes
    s = t[7][x & 0xFF] ^ t[6][(x >> 8) & 0xFF] ^ t[5][(x >> 16) & 0xFF] ^ t[4][(x >> 24) & 0xFF] ^
        t[3][(x >> 32) & 0xFF] ^ t[2][(x >> 40) & 0xFF] ^ t[1][(x >> 48) & 0xFF] ^ t[0][x >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) s = (s >> 8) ^ t[0][(s ^ *p++) & 0xFF];
  return s;
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i x, __m128i k, __m128i next) {
  const __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
  const __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

// Requires n >= 64.
template <class C>
__attribute__((target("pclmul,sse4.1"))) uint32_t fold_update(uint32_t s, const uint8_t* p, size_t n) {
  auto load = [](const uint8_t* q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); };
  const __m128i k512 = _mm_set_epi64x(int64_t(C::kFold512Hi), int64_t(C::kFold512Lo));
  const __m128i k128 = _mm_set_epi64x(int64_t(C::kFold128Hi), int64_t(C::kFold128Lo));

  // A register value equals the same value XORed into the first input bytes.
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(int(s)));
  __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
  p += 64;
  n -= 64;
  while (n >= 64) {
    x0 = fold(x0, k512, load(p));
    x1 = fold(x1, k512, load(p + 16));
    x2 = fold(x2, k512, load(p + 32));
    x3 = fold(x3, k512, load(p + 48));
    p += 64;
    n -= 64;
  }
  __m128i x = fold(fold(fold(x0, k128, x1), k128, x2), k128, x3);
  while (n >= 16) {
    x = fold(x, k128, load(p));
    p += 16;
    n -= 16;
  }
  alignas(16) uint8_t last[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(last), x);
  return table_update(C::kTable, table_update(C::kTable, 0, last, 16), p, n);
}

bool detect_pclmul() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

// Zero-initialised before dynamic initialisation, so a call from another
// translation unit's static constructor safely takes the table path.
bool g_pclmul = detect_pclmul();

constexpr size_t kFoldMin = 64;

template <class C>
inline uint32_t update(uint32_t s, const uint8_t* p, size_t n) {
  if (n >= kFoldMin && g_pclmul) return fold_update<C>(s, p, n);
  return table_update(C::kTable, s, p, n);
}

}  // namespace

uint32_t crc32_ieee(uint32_t crc, const uint8_t* p, size_t n) { return ~update<Crc32>(~crc, p, n); }

uint16_t crc16_iba(uint16_t crc, const uint8_t* p, size_t n) {
  return uint16_t(~update<Crc16>(uint16_t(~crc), p, n));
}

bool crc_uses_pclmul() { return g_pclmul; }
void crc_force_portable(bool portable) { g_pclmul = !portable && detect_pclmul(); }

}  // namespace vf::wire
