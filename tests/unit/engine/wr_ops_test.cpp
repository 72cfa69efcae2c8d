// The work-request table the provider and the engine share
// (device/abi/vhca_wr_ops.h) against the wire opcode table: a QP type may
// post an opcode exactly when its transport has every wire opcode the
// request becomes (IBA Vol. 1 table 38), and the request's properties are
// those of its packets.
#include <gtest/gtest.h>

#include "dataplane/wire/opcode.hpp"
#include "device/abi/vhca_wr_ops.h"
#include "device/engine/opcodes.hpp"

namespace vf::engine {
namespace {

using namespace vf::wire;

bool transport_has_all(Transport t, const WrOpInfo& w) {
  for (uint8_t low : {w.first, w.middle, w.last, w.only})
    if (!opcode_valid(opcode(t, Op(low)))) return false;
  return true;
}

TEST(WrOps, LegalityFollowsTheWireOpcodes) {
  unsigned rows = 0;
  for (unsigned op = 0; op < 32; ++op) {
    const vhca_wr_op* row = vhca_wr_op_info(op);
    const WrOpInfo* wire = wr_op_info(uint8_t(op));
    ASSERT_EQ(row != nullptr, wire != nullptr) << op;
    if (!row) continue;
    ++rows;
    SCOPED_TRACE(row->name);
    EXPECT_EQ(vhca_wr_op_for(IBV_QPT_RAW_PACKET, op), nullptr);
    if (row->local) continue;  // no packets: LocalOperationsSendNothing
    EXPECT_EQ(vhca_wr_op_for(IBV_QPT_RC, op) != nullptr, transport_has_all(Transport::kRC, *wire));
    EXPECT_EQ(vhca_wr_op_for(IBV_QPT_UC, op) != nullptr, transport_has_all(Transport::kUC, *wire));
    // UD messages are single packets: only the Only opcode is ever sent.
    EXPECT_EQ(vhca_wr_op_for(IBV_QPT_UD, op) != nullptr,
              opcode_valid(opcode(Transport::kUD, Op(wire->only))));
  }
  // WRITE, WRITE_WITH_IMM, SEND, SEND_WITH_IMM, READ, CMP_AND_SWP, FETCH_ADD,
  // LOCAL_INV, BIND_MW, SEND_WITH_INV
  EXPECT_EQ(rows, 10u);
  EXPECT_EQ(vhca_wr_op_info(IBV_WR_TSO), nullptr);
}

// BIND_MW and LOCAL_INV are executed by the HCA: connected QPs only (a type 2
// window is tied to one, IBA 10.6.7.2), nothing inline, no remote target.
TEST(WrOps, LocalOperationsSendNothing) {
  for (unsigned op : {IBV_WR_LOCAL_INV, IBV_WR_BIND_MW}) {
    const vhca_wr_op* row = vhca_wr_op_info(op);
    ASSERT_NE(row, nullptr);
    SCOPED_TRACE(row->name);
    EXPECT_TRUE(row->local);
    EXPECT_NE(vhca_wr_op_for(IBV_QPT_RC, op), nullptr);
    EXPECT_NE(vhca_wr_op_for(IBV_QPT_UC, op), nullptr);
    EXPECT_EQ(vhca_wr_op_for(IBV_QPT_UD, op), nullptr);
    EXPECT_FALSE(row->inline_ok || row->rd_atomic || row->has_imm);
    EXPECT_EQ(row->target, VHCA_WR_TARGET_NONE);
  }
  EXPECT_EQ(vhca_wr_op_info(IBV_WR_BIND_MW)->wc_opcode, IBV_WC_BIND_MW);
  EXPECT_EQ(vhca_wr_op_info(IBV_WR_LOCAL_INV)->wc_opcode, IBV_WC_LOCAL_INV);
  // SEND with Invalidate is a SEND on the wire: its last packet has the IETH.
  EXPECT_FALSE(vhca_wr_op_info(IBV_WR_SEND_WITH_INV)->local);
  EXPECT_TRUE(op_desc(opcode(Transport::kRC, Op(wr_op_info(IBV_WR_SEND_WITH_INV)->last))).flags & kHasIeth);
}

TEST(WrOps, PropertiesAreThoseOfThePackets) {
  for (unsigned op = 0; op < 32; ++op) {
    const vhca_wr_op* row = vhca_wr_op_info(op);
    if (!row || row->local) continue;
    SCOPED_TRACE(row->name);
    const WrOpInfo& w = *wr_op_info(uint8_t(op));
    const uint16_t last = op_desc(opcode(Transport::kRC, Op(w.last))).flags;
    const uint16_t first = op_desc(opcode(Transport::kRC, Op(w.first))).flags;
    EXPECT_EQ(bool(row->has_imm), bool(last & kHasImm));
    EXPECT_EQ(bool(row->rd_atomic), bool(first & (kIsRead | kIsAtomic)));
    EXPECT_EQ(bool(row->inline_ok), bool(first & kHasPayload));  // the request carries the data
    const unsigned target = (first & kHasReth)        ? VHCA_WR_TARGET_RDMA
                            : (first & kHasAtomicEth) ? VHCA_WR_TARGET_ATOMIC
                                                      : VHCA_WR_TARGET_NONE;
    EXPECT_EQ(row->target, target);
  }
  EXPECT_EQ(vhca_wr_op_info(IBV_WR_RDMA_READ)->wc_opcode, IBV_WC_RDMA_READ);
  EXPECT_EQ(vhca_wr_op_info(IBV_WR_SEND_WITH_IMM)->wc_opcode, IBV_WC_SEND);
  EXPECT_EQ(vhca_wr_op_info(IBV_WR_ATOMIC_FETCH_AND_ADD)->wc_opcode, IBV_WC_FETCH_ADD);
}

}  // namespace
}  // namespace vf::engine
