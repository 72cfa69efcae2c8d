// The opcode table against IBA Vol. 1 table 38 and §9.2-9.5, written out here.
#include <gtest/gtest.h>

#include <map>

#include "dataplane/wire/opcode.hpp"

namespace vf::wire {
namespace {

TEST(Opcode, ComposeDecompose) {
  EXPECT_EQ(opcode(Transport::kRC, kSendOnly), 0x04);
  EXPECT_EQ(opcode(Transport::kUC, kWriteOnly), 0x2A);
  EXPECT_EQ(opcode(Transport::kUD, kSendOnlyImm), 0x65);
  EXPECT_EQ(opcode(Transport::kRC, kAtomicAck), 0x12);
  EXPECT_EQ(kOpcodeCnp, 0x81);
  for (unsigned o = 0; o < 256; ++o) {
    const auto opc = uint8_t(o);
    EXPECT_EQ(opcode(opcode_transport(opc), opcode_op(opc)), opc);
  }
}

// Transport header bytes after the BTH, from the spec's per-opcode layouts.
TEST(Opcode, ExtHeaderLengths) {
  const std::map<uint8_t, unsigned> expected = {
      {0x00, 0},  {0x01, 0},  {0x02, 0},  {0x03, 4},  {0x04, 0},  {0x05, 4},  {0x06, 16},
      {0x07, 0},  {0x08, 0},  {0x09, 4},  {0x0A, 16}, {0x0B, 20}, {0x0C, 16}, {0x0D, 4},
      {0x0E, 0},  {0x0F, 4},  {0x10, 4},  {0x11, 4},  {0x12, 12}, {0x13, 28}, {0x14, 28},
      {0x16, 4},  {0x17, 4},                                                    // RC
      {0x20, 0},  {0x23, 4},  {0x24, 0},  {0x25, 4},  {0x26, 16}, {0x2A, 16}, {0x2B, 20},  // UC
      {0x64, 8},  {0x65, 12},                                                   // UD: DETH first
      {0x81, 0},                                                                // CNP
  };
  for (const auto& [opc, len] : expected) {
    SCOPED_TRACE(int(opc));
    EXPECT_TRUE(opcode_valid(opc));
    EXPECT_EQ(ext_headers_len(opc), len);
  }
}

TEST(Opcode, Validity) {
  unsigned rc = 0, uc = 0, ud = 0, other = 0;
  for (unsigned o = 0; o < 256; ++o) {
    if (!opcode_valid(uint8_t(o))) continue;
    switch (o >> 5) {
      case 0: ++rc; break;
      case 1: ++uc; break;
      case 3: ++ud; break;
      default: ++other; break;
    }
  }
  EXPECT_EQ(rc, 23u);  // 0x00-0x14, 0x16, 0x17
  EXPECT_EQ(uc, 12u);  // SEND and WRITE, 0x20-0x2B
  EXPECT_EQ(ud, 2u);   // 0x64, 0x65
  EXPECT_EQ(other, 1u);  // CNP
  EXPECT_FALSE(opcode_valid(0x15));
  EXPECT_FALSE(opcode_valid(0x2C));  // UC has no RDMA READ
  EXPECT_FALSE(opcode_valid(0x71));  // UD has no ACK
  EXPECT_FALSE(opcode_valid(0x80));
}

TEST(Opcode, FlagsAreConsistent) {
  for (unsigned op = 0; op < 32; ++op) {
    const OpInfo info = op_info(uint8_t(op));
    if (!info.valid) continue;
    SCOPED_TRACE(op);
    const uint16_t f = info.flags;
    EXPECT_NE(bool(f & kIsRequest), bool(f & kIsResponse));
    EXPECT_EQ(__builtin_popcount(f & (kIsSend | kIsWrite | kIsRead | kIsAtomic)), op == kAck ? 0 : 1);
    EXPECT_EQ(bool(f & kIsMiddle), !(f & (kIsFirst | kIsLast)));
    EXPECT_FALSE((f & kHasImm) && (f & kHasIeth));
    EXPECT_FALSE((f & kIsAtomic) && (f & kHasPayload));
    EXPECT_TRUE(!(f & (kIsSend | kIsWrite)) || !(f & kIsRequest) || (f & kHasPayload));
  }
  EXPECT_TRUE(op_info(kReadRespFirst).flags & kHasAeth);
  EXPECT_FALSE(op_info(kReadRespMiddle).flags & kHasAeth);
  EXPECT_TRUE(op_info(kReadRequest).flags & kHasReth);
  EXPECT_FALSE(op_info(kReadRequest).flags & kHasPayload);
}

// Header offsets after the BTH, in the IBA's order (Vol. 1 9.2-9.4).
TEST(Opcode, HeaderLayout) {
  const HdrLayout& wimm = layout(opcode(Transport::kRC, kWriteOnlyImm));
  EXPECT_EQ(wimm.reth, 0);
  EXPECT_EQ(wimm.imm, 16);
  EXPECT_EQ(wimm.payload, 20);
  EXPECT_EQ(wimm.aeth, kAbsent);
  const HdrLayout& ud = layout(opcode(Transport::kUD, kSendOnlyImm));
  EXPECT_EQ(ud.deth, 0);
  EXPECT_EQ(ud.imm, 8);
  EXPECT_EQ(ud.payload, 12);
  const HdrLayout& atomic_ack = layout(opcode(Transport::kRC, kAtomicAck));
  EXPECT_EQ(atomic_ack.aeth, 0);
  EXPECT_EQ(atomic_ack.atomic_ack_eth, 4);
  EXPECT_EQ(layout(opcode(Transport::kRC, kCompareSwap)).atomic_eth, 0);
  EXPECT_EQ(layout(opcode(Transport::kRC, kReadRespMiddle)).aeth, kAbsent);
  EXPECT_EQ(layout(opcode(Transport::kRC, kSendLastInv)).imm, 0);  // IETH where ImmDt would be
  // Every present header ends at or before the payload, none overlap.
  for (unsigned o = 0; o < 256; ++o) {
    const OpDesc& d = op_desc(uint8_t(o));
    if (!d.valid) {
      EXPECT_EQ(d.at.payload, 0) << o;
      continue;
    }
    const HdrLayout& a = d.at;
    unsigned sum = 0;
    for (auto [at, len] : {std::pair<uint8_t, unsigned>{a.deth, kDethLen}, {a.reth, kRethLen},
                           {a.atomic_eth, kAtomicEthLen}, {a.aeth, kAethLen},
                           {a.atomic_ack_eth, kAtomicAckEthLen}, {a.imm, kImmDtLen}}) {
      if (at == kAbsent) continue;
      EXPECT_LE(at + len, a.payload) << o;
      sum += len;
    }
    EXPECT_EQ(sum, a.payload) << o;
  }
}

TEST(Opcode, NamesForTracing) {
  EXPECT_STREQ(op_desc(0x04).name, "SEND Only");
  EXPECT_STREQ(op_desc(0x2B).name, "RDMA WRITE Only with Immediate");
  EXPECT_STREQ(op_desc(0x11).name, "Acknowledge");
  EXPECT_STREQ(op_desc(0x81).name, "CNP");
  EXPECT_STREQ(op_desc(0x15).name, "reserved");
  EXPECT_STREQ(transport_name(opcode_transport(0x65)), "UD");
}

}  // namespace
}  // namespace vf::wire
