// The CRC engines against zlib and against a naive reference, on both the
// carry-less-multiply path and the portable table path.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <vector>

#include "crc_reference.hpp"
#include "dataplane/wire/crc.hpp"

namespace vf::wire {
namespace {

// Runs each test once per engine.
class Crc : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { crc_force_portable(GetParam()); }
  void TearDown() override { crc_force_portable(false); }
};

std::vector<uint8_t> random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

const uint8_t kCheck[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};

TEST_P(Crc, CheckValues) {
  // CRC-32/ISO-HDLC check value from the CRC catalogue.
  EXPECT_EQ(crc32_ieee(0, kCheck, 9), 0xCBF43926u);
  // VCRC parameters over "123456789", computed at authoring time with an
  // independent bitwise Python loop:
  //   python3 -c "r=0xFFFF
  //   for b in b'123456789':
  //    r^=b
  //    for _ in range(8): r=(r>>1)^0xD008 if r&1 else r>>1
  //   print(hex(r^0xFFFF))"          -> 0xa3d
  EXPECT_EQ(crc16_iba(0, kCheck, 9), 0x0A3D);
  EXPECT_EQ(crc32_ieee(0, nullptr, 0), 0u);
  EXPECT_EQ(crc16_iba(0, nullptr, 0), 0u);
}

TEST_P(Crc, Crc32MatchesZlibAtEveryLengthAndAlignment) {
  const auto data = random_bytes(4200, 1);
  std::mt19937 rng(2);
  for (size_t off = 0; off < 8; ++off) {
    for (size_t n = 0; n <= 1100; ++n) {
      const uint32_t seed = off == 0 ? 0 : uint32_t(rng());
      ASSERT_EQ(crc32_ieee(seed, data.data() + off, n), crc32(seed, data.data() + off, uInt(n)))
          << "off " << off << " n " << n;
    }
  }
  for (size_t n : {2048u, 4096u, 4100u, 4111u}) {
    ASSERT_EQ(crc32_ieee(0, data.data(), n), crc32(0, data.data(), uInt(n))) << n;
  }
}

TEST_P(Crc, MatchReferenceDivision) {
  const auto data = random_bytes(600, 3);
  for (size_t n = 0; n <= 600; n += (n < 140 ? 1 : 23)) {
    ASSERT_EQ(crc32_ieee(0, data.data(), n), test::reference_crc32(data.data(), n)) << n;
    ASSERT_EQ(crc16_iba(0, data.data(), n), test::reference_vcrc(data.data(), n)) << n;
  }
}

TEST_P(Crc, ChainsLikeOneRun) {
  const auto data = random_bytes(3000, 4);
  for (size_t split : {0u, 1u, 7u, 48u, 63u, 64u, 65u, 1000u, 2999u, 3000u}) {
    EXPECT_EQ(crc32_ieee(crc32_ieee(0, data.data(), split), data.data() + split, 3000 - split),
              crc32_ieee(0, data.data(), 3000));
    EXPECT_EQ(crc16_iba(crc16_iba(0, data.data(), split), data.data() + split, 3000 - split),
              crc16_iba(0, data.data(), 3000));
  }
}

// Storing the CRC least significant byte first makes the CRC over data + CRC
// a constant (the "residue"), the property receivers of LSB-first CRCs use.
// Constants computed with python3 (zlib.crc32 for CRC-32, the loop above for
// the VCRC) over random data followed by the little-endian CRC.
TEST_P(Crc, LittleEndianStorageGivesResidue) {
  for (size_t n : {0u, 1u, 13u, 64u, 100u, 777u}) {
    auto d = random_bytes(n, unsigned(n) + 10);
    const uint32_t c32 = crc32_ieee(0, d.data(), n);
    const uint16_t c16 = crc16_iba(0, d.data(), n);
    auto d32 = d;
    for (int i = 0; i < 4; ++i) d32.push_back(uint8_t(c32 >> (8 * i)));
    auto d16 = d;
    d16.push_back(uint8_t(c16));
    d16.push_back(uint8_t(c16 >> 8));
    EXPECT_EQ(crc32_ieee(0, d32.data(), d32.size()), 0x2144DF1Cu);
    EXPECT_EQ(crc16_iba(0, d16.data(), d16.size()), 0xAA90);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, Crc, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "Portable" : "Fastest"; });

TEST(CrcEngine, UsesCarrylessMultiplyWhenAvailable) {
  crc_force_portable(false);
  EXPECT_EQ(crc_uses_pclmul(), __builtin_cpu_supports("pclmul") != 0);
}

}  // namespace
}  // namespace vf::wire
