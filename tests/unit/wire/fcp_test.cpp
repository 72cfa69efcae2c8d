// The IBA flow-control packet and the credit arithmetic modulo 4096.
#include "dataplane/wire/fcp.hpp"

#include <gtest/gtest.h>

#include <array>

#include "dataplane/wire/bytes.hpp"
#include "dataplane/wire/crc.hpp"

namespace vf::wire {
namespace {

TEST(Fcp, FieldsLandWhereTheIbaPutsThem) {
  std::array<uint8_t, kFcpLen> b{};
  fcp_put(b.data(), Fcp{FcpOp::kInit, 0xABC, 5, 0x123});
  EXPECT_EQ(b[0], 0x1A);  // Op 1, FCTBS[11:8]
  EXPECT_EQ(b[1], 0xBC);
  EXPECT_EQ(b[2], 0x51);  // VL 5, FCCL[11:8]
  EXPECT_EQ(b[3], 0x23);
  // LPCRC: the VCRC's CRC over the first four bytes, low byte first.
  const uint16_t crc = crc16_iba(0, b.data(), 4);
  EXPECT_EQ(b[4], crc & 0xFF);
  EXPECT_EQ(b[5], crc >> 8);
}

TEST(Fcp, RoundTripsEveryVlAndCountExtreme) {
  for (uint8_t vl = 0; vl < 16; ++vl)
    for (uint16_t n : {0, 1, 2047, 2048, 4095}) {
      const Fcp f{vl % 2 ? FcpOp::kInit : FcpOp::kNormal, n, vl, uint16_t(4095 - n)};
      std::array<uint8_t, kFcpLen> b{};
      fcp_put(b.data(), f);
      Fcp out;
      ASSERT_EQ(fcp_parse(b.data(), b.size(), out), FcpError::kOk);
      EXPECT_EQ(out, f);
    }
}

TEST(Fcp, CountsAreTwelveBits) {
  std::array<uint8_t, kFcpLen> b{};
  fcp_put(b.data(), Fcp{FcpOp::kNormal, 0xFFFF, 0, 0xF001});
  Fcp out;
  ASSERT_EQ(fcp_parse(b.data(), b.size(), out), FcpError::kOk);
  EXPECT_EQ(out.fctbs, 0xFFF);
  EXPECT_EQ(out.fccl, 0x001);
  EXPECT_EQ(out.op, FcpOp::kNormal) << "FCTBS's high bits must not leak into Op";
}

TEST(Fcp, DamageIsRefused) {
  std::array<uint8_t, kFcpLen> good{};
  fcp_put(good.data(), Fcp{FcpOp::kNormal, 100, 0, 300});
  Fcp out;
  for (unsigned byte = 0; byte < kFcpLen; ++byte)
    for (unsigned bit = 0; bit < 8; ++bit) {
      auto b = good;
      b[byte] ^= uint8_t(1u << bit);
      EXPECT_EQ(fcp_parse(b.data(), b.size(), out), FcpError::kLpcrc) << byte << "." << bit;
    }
  EXPECT_EQ(fcp_parse(good.data(), kFcpLen - 1, out), FcpError::kLength);
  EXPECT_EQ(fcp_parse(good.data(), kFcpLen + 1, out), FcpError::kLength);
  // A reserved Op with a correct LPCRC.
  auto b = good;
  b[0] = uint8_t(0x20 | (b[0] & 0x0F));
  put_le16(b.data() + 4, crc16_iba(0, b.data(), 4));
  EXPECT_EQ(fcp_parse(b.data(), b.size(), out), FcpError::kOp);
}

TEST(Fcp, BlocksRoundUpTo64Bytes) {
  EXPECT_EQ(packet_blocks(1), 1u);
  EXPECT_EQ(packet_blocks(64), 1u);
  EXPECT_EQ(packet_blocks(65), 2u);
  EXPECT_EQ(packet_blocks(4096 + 26), 65u);  // a full 4096-MTU packet, LRH..VCRC
}

TEST(Fcp, TheSenderTestIsModulo4096) {
  // (FCCL - (FCTBS + blocks)) mod 4096 <= 2048.
  EXPECT_FALSE(credit_allows(0, 0, 1)) << "nothing granted";
  EXPECT_TRUE(credit_allows(0, 10, 10)) << "exactly the limit";
  EXPECT_FALSE(credit_allows(0, 10, 11));
  // Across the wrap: sent 4090, granted up to 10 (= 4106 mod 4096).
  EXPECT_TRUE(credit_allows(4090, 10, 16));
  EXPECT_FALSE(credit_allows(4090, 10, 17));
  // The whole window and one beyond it.
  EXPECT_TRUE(credit_allows(100, 100 + 2048, 2048));
  EXPECT_TRUE(credit_allows(3000, (3000 + 2048) & kCreditMask, 2048));
  EXPECT_FALSE(credit_allows(3000, (3000 + 2048) & kCreditMask, 2049));
  // A limit behind what was sent (a stale FCP) grants nothing.
  EXPECT_FALSE(credit_allows(500, 400, 1));
}

}  // namespace
}  // namespace vf::wire
