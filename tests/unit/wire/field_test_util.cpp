#include "field_test_util.hpp"

#include <gtest/gtest.h>

#include <random>

namespace vf::test {

uint64_t read_bits(const uint8_t* h, unsigned bit_off, unsigned width) {
  uint64_t v = 0;
  for (unsigned i = bit_off; i < bit_off + width; ++i) v = v << 1 | ((h[i / 8] >> (7 - i % 8)) & 1);
  return v;
}

void mark_bits(std::vector<uint8_t>& mask, unsigned bit_off, unsigned width) {
  for (unsigned i = bit_off; i < bit_off + width; ++i) mask[i / 8] |= uint8_t(0x80 >> (i % 8));
}

namespace {

uint64_t all_ones(unsigned width) { return width == 64 ? ~0ull : (1ull << width) - 1; }

// The header sits inside a larger buffer whose guard bytes must never change.
constexpr unsigned kGuard = 16;

struct Buf {
  std::vector<uint8_t> bytes;
  unsigned len;
  Buf(unsigned n, uint8_t fill) : bytes(n + 2 * kGuard, 0xA5), len(n) {
    std::fill(bytes.begin() + kGuard, bytes.begin() + kGuard + n, fill);
  }
  uint8_t* h() { return bytes.data() + kGuard; }
  void expect_guards(const std::string& what) const {
    for (unsigned i = 0; i < kGuard; ++i) {
      EXPECT_EQ(bytes[i], 0xA5) << what << ": wrote before the header";
      EXPECT_EQ(bytes[kGuard + len + i], 0xA5) << what << ": wrote past the header";
    }
  }
};

}  // namespace

void check_fields(const std::vector<FieldSpec>& fields) {
  std::mt19937_64 rng(42);
  for (const FieldSpec& f : fields) {
    SCOPED_TRACE(f.name);
    ASSERT_LE(f.bit_off + f.width, f.hdr_len * 8);
    std::vector<uint8_t> mask(f.hdr_len, 0);
    mark_bits(mask, f.bit_off, f.width);

    // Getter against the bit description, on random headers.
    for (int i = 0; i < 64; ++i) {
      Buf b(f.hdr_len, 0);
      for (unsigned j = 0; j < f.hdr_len; ++j) b.h()[j] = uint8_t(rng());
      EXPECT_EQ(f.get(b.h()), read_bits(b.h(), f.bit_off, f.width));
    }
    if (!f.set) continue;

    // All ones on zero: exactly the field's bits become set.
    {
      Buf b(f.hdr_len, 0x00);
      f.set(b.h(), all_ones(f.width));
      for (unsigned j = 0; j < f.hdr_len; ++j) EXPECT_EQ(b.h()[j], mask[j]) << "byte " << j;
      EXPECT_EQ(f.get(b.h()), all_ones(f.width));
      b.expect_guards(f.name);
    }
    // Zero on all ones: exactly the field's bits become clear.
    {
      Buf b(f.hdr_len, 0xFF);
      f.set(b.h(), 0);
      for (unsigned j = 0; j < f.hdr_len; ++j) EXPECT_EQ(b.h()[j], uint8_t(~mask[j])) << "byte " << j;
      EXPECT_EQ(f.get(b.h()), 0u);
      b.expect_guards(f.name);
    }
    // Random values on random headers: round-trip, neighbours untouched, and
    // values wider than the field are cut to it rather than spilling over.
    for (int i = 0; i < 256; ++i) {
      Buf b(f.hdr_len, 0);
      for (unsigned j = 0; j < f.hdr_len; ++j) b.h()[j] = uint8_t(rng());
      const std::vector<uint8_t> before(b.h(), b.h() + f.hdr_len);
      const uint64_t wide = rng();
      const uint64_t v = wide & all_ones(f.width);
      f.set(b.h(), wide);
      EXPECT_EQ(f.get(b.h()), v);
      EXPECT_EQ(read_bits(b.h(), f.bit_off, f.width), v);
      for (unsigned j = 0; j < f.hdr_len; ++j)
        EXPECT_EQ(b.h()[j] & ~mask[j], before[j] & ~mask[j]) << "neighbour bits in byte " << j;
      b.expect_guards(f.name);
    }
  }
}

}  // namespace vf::test
