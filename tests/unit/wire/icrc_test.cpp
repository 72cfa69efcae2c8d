// ICRC and VCRC against computations that share no code with the library:
// the masked byte arrays in sample_frames.hpp are written out by hand from the
// IBA rules, CRC'd with the naive reference, and pinned to values computed at
// authoring time by other tools.
#include <gtest/gtest.h>

#include <vector>

#include "crc_reference.hpp"
#include "dataplane/wire/icrc.hpp"
#include "field_test_util.hpp"
#include "sample_frames.hpp"

namespace vf::wire {
namespace {

using namespace test::samples;
using Bytes = std::vector<uint8_t>;

TEST(Icrc, OnesStandInForTheLrh) {
  const uint8_t ones[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(kCrc32Of8Ones, test::reference_crc32(ones, 8));
}

TEST(Icrc, IbLocalKnownAnswer) {
  EXPECT_EQ(test::reference_crc32(kIbLocalMasked.data(), kIbLocalMasked.size()), kIbLocalIcrc);
  EXPECT_EQ(icrc_ib(kIbLocal.data(), kIbLocal.size()), kIbLocalIcrc);
  uint8_t stored[4];
  icrc_store(stored, kIbLocalIcrc);
  EXPECT_EQ(stored[0], 0x96);  // as the MPGA packet carries it
  EXPECT_EQ(stored[1], 0x25);
  EXPECT_EQ(stored[2], 0xB7);
  EXPECT_EQ(stored[3], 0x5A);
  EXPECT_EQ(icrc_load(stored), kIbLocalIcrc);
}

TEST(Icrc, IbGlobalKnownAnswer) {
  EXPECT_EQ(test::reference_crc32(kIbGlobalMasked.data(), kIbGlobalMasked.size()), kIbGlobalIcrc);
  EXPECT_EQ(icrc_ib(kIbGlobal.data(), kIbGlobal.size()), kIbGlobalIcrc);
}

TEST(Icrc, RoceV4KnownAnswer) {
  EXPECT_EQ(test::reference_crc32(kRoceV4Masked.data(), kRoceV4Masked.size()), kRoceV4Icrc);
  EXPECT_EQ(icrc_roce(kRoceV4.data(), kRoceV4.size()), kRoceV4Icrc);
}

TEST(Icrc, RoceV6KnownAnswer) {
  EXPECT_EQ(test::reference_crc32(kRoceV6Masked.data(), kRoceV6Masked.size()), kRoceV6Icrc);
  EXPECT_EQ(icrc_roce(kRoceV6.data(), kRoceV6.size()), kRoceV6Icrc);
}

// Which bits may change in flight without changing the ICRC, from the IBA
// rules, as (first bit, width) over the packet; every other header bit must
// change it. `skip` lists structural bits (LNH, IP version, IHL) that change
// how the packet is parsed rather than a field's value.
struct Variant {
  unsigned bit_off, width;
};

template <class F>
void check_variance(const Bytes& pkt, size_t hdr_bytes, const std::vector<Variant>& variant,
                    const std::vector<Variant>& skip, F icrc) {
  std::vector<uint8_t> var(pkt.size(), 0), skp(pkt.size(), 0);
  for (auto v : variant) test::mark_bits(var, v.bit_off, v.width);
  for (auto v : skip) test::mark_bits(skp, v.bit_off, v.width);
  const uint32_t base = icrc(pkt);
  for (unsigned bit = 0; bit < pkt.size() * 8; ++bit) {
    if (bit >= hdr_bytes * 8 && bit % 7 != 0) continue;  // sample the payload
    const uint8_t m = uint8_t(0x80 >> (bit % 8));
    if (skp[bit / 8] & m) continue;
    Bytes p = pkt;
    p[bit / 8] ^= m;
    if (var[bit / 8] & m) {
      EXPECT_EQ(icrc(p), base) << "variant bit " << bit << " changed the ICRC";
    } else {
      EXPECT_NE(icrc(p), base) << "invariant bit " << bit << " left the ICRC alone";
    }
  }
}

uint32_t ib(const Bytes& p) { return icrc_ib(p.data(), p.size()); }
uint32_t roce(const Bytes& p) { return icrc_roce(p.data(), p.size()); }

TEST(Icrc, IbLocalVariantFields) {
  check_variance(kIbLocal, 8 + 12, {{0, 4}, {(8 + 4) * 8, 8}}, {{14, 2}}, ib);
}

TEST(Icrc, IbGlobalVariantFields) {
  check_variance(kIbGlobal, 8 + 40 + 12, {{0, 64}, {64 + 4, 28}, {64 + 56, 8}, {(48 + 4) * 8, 8}},
                 {{14, 2}}, ib);
}

TEST(Icrc, RoceV4VariantFields) {
  check_variance(kRoceV4, 20 + 8 + 12, {{8, 8}, {64, 8}, {80, 16}, {26 * 8, 16}, {32 * 8, 8}},
                 {{0, 8}}, roce);
}

TEST(Icrc, RoceV6VariantFields) {
  check_variance(kRoceV6, 40 + 8 + 12, {{4, 28}, {56, 8}, {46 * 8, 16}, {52 * 8, 8}}, {{0, 4}}, roce);
}

TEST(Vcrc, KnownAnswers) {
  // The MPGA packet with its ICRC, and the global packet with its ICRC:
  //   python3 -c "r=0xFFFF
  //   for b in bytes.fromhex(HEX):
  //    r^=b
  //    for _ in range(8): r=(r>>1)^0xD008 if r&1 else r>>1
  //   print(hex(r^0xFFFF))"
  // with HEX = the 52 bytes above + '9625b75a' -> 0xfa45, and the 76 bytes
  // above + '32515a3b' -> 0x7564.
  Bytes local = kIbLocal;
  local.insert(local.end(), {0x96, 0x25, 0xB7, 0x5A});
  EXPECT_EQ(vcrc(local.data(), local.size()), 0xFA45);
  EXPECT_EQ(test::reference_vcrc(local.data(), local.size()), 0xFA45);
  Bytes global = kIbGlobal;
  global.insert(global.end(), {0x32, 0x51, 0x5A, 0x3B});
  EXPECT_EQ(vcrc(global.data(), global.size()), kIbGlobalVcrc);
  uint8_t stored[2];
  vcrc_store(stored, 0x7564);
  EXPECT_EQ(stored[0], 0x64);
  EXPECT_EQ(stored[1], 0x75);
  EXPECT_EQ(vcrc_load(stored), 0x7564);
}

TEST(Vcrc, CoversEveryBitIncludingVl) {
  Bytes local = kIbLocal;
  local.insert(local.end(), {0x96, 0x25, 0xB7, 0x5A});
  const uint16_t base = vcrc(local.data(), local.size());
  for (unsigned bit = 0; bit < local.size() * 8; ++bit) {
    Bytes p = local;
    p[bit / 8] ^= uint8_t(0x80 >> (bit % 8));
    EXPECT_NE(vcrc(p.data(), p.size()), base) << bit;
  }
}

}  // namespace
}  // namespace vf::wire
