/* Work-request opcodes as a vHCA supports them: one table that the provider's
 * post checks and flush completions and the engine's requester all read.
 * Which QP types may post an opcode follows from the wire opcodes each
 * transport has (IBA Vol. 1 table 38); tests/unit/engine/wr_ops_test.cpp
 * checks this table against the wire opcode table (dataplane/wire/opcode.hpp).
 * Local operations (BIND_MW, LOCAL_INV) send nothing: the requester executes
 * them in SQ order. Opcodes without a row (TSO, DRIVER1, ATOMIC_WRITE, ...)
 * are not supported by this device. */
#ifndef VHCA_WR_OPS_H
#define VHCA_WR_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { VHCA_QPT_RC_BIT = 1u << 0, VHCA_QPT_UC_BIT = 1u << 1, VHCA_QPT_UD_BIT = 1u << 2 };

/* Which member of ibv_send_wr's `wr` union names the remote target. */
enum vhca_wr_target { VHCA_WR_TARGET_NONE = 0, VHCA_WR_TARGET_RDMA = 1, VHCA_WR_TARGET_ATOMIC = 2 };

struct vhca_wr_op {
  uint8_t qp_types;  /* VHCA_QPT_*_BIT: the QP types that may post it */
  uint8_t wc_opcode; /* enum ibv_wc_opcode of its send completion */
  uint8_t target;    /* enum vhca_wr_target */
  uint8_t has_imm;   /* carries imm_data */
  uint8_t inline_ok; /* IBV_SEND_INLINE applies (not to READ/atomics: their SGEs receive) */
  uint8_t rd_atomic; /* completes on response data, not on an ACK (READ, atomics) */
  uint8_t local;     /* executed in the HCA, no packet (BIND_MW, LOCAL_INV) */
  const char *name;  /* for tracing: the verbs name without IBV_WR_ */
};

#ifdef __cplusplus
#define VHCA_WR_OPS_ASSERT static_assert
#else
#define VHCA_WR_OPS_ASSERT _Static_assert
#endif
/* The table below is indexed by enum ibv_wr_opcode. */
VHCA_WR_OPS_ASSERT(IBV_WR_RDMA_WRITE == 0 && IBV_WR_RDMA_WRITE_WITH_IMM == 1 && IBV_WR_SEND == 2 &&
                       IBV_WR_SEND_WITH_IMM == 3 && IBV_WR_RDMA_READ == 4 &&
                       IBV_WR_ATOMIC_CMP_AND_SWP == 5 && IBV_WR_ATOMIC_FETCH_AND_ADD == 6 &&
                       IBV_WR_LOCAL_INV == 7 && IBV_WR_BIND_MW == 8 && IBV_WR_SEND_WITH_INV == 9,
                   "ibv_wr_opcode values");
#undef VHCA_WR_OPS_ASSERT

static inline const struct vhca_wr_op *vhca_wr_op_info(unsigned opcode) {
  enum { RC = VHCA_QPT_RC_BIT, UC = VHCA_QPT_UC_BIT, UD = VHCA_QPT_UD_BIT };
  static const struct vhca_wr_op table[] = {
      /* IBV_WR_RDMA_WRITE */
      {RC | UC, IBV_WC_RDMA_WRITE, VHCA_WR_TARGET_RDMA, 0, 1, 0, 0, "RDMA_WRITE"},
      /* IBV_WR_RDMA_WRITE_WITH_IMM */
      {RC | UC, IBV_WC_RDMA_WRITE, VHCA_WR_TARGET_RDMA, 1, 1, 0, 0, "RDMA_WRITE_WITH_IMM"},
      /* IBV_WR_SEND */
      {RC | UC | UD, IBV_WC_SEND, VHCA_WR_TARGET_NONE, 0, 1, 0, 0, "SEND"},
      /* IBV_WR_SEND_WITH_IMM */
      {RC | UC | UD, IBV_WC_SEND, VHCA_WR_TARGET_NONE, 1, 1, 0, 0, "SEND_WITH_IMM"},
      /* IBV_WR_RDMA_READ */
      {RC, IBV_WC_RDMA_READ, VHCA_WR_TARGET_RDMA, 0, 0, 1, 0, "RDMA_READ"},
      /* IBV_WR_ATOMIC_CMP_AND_SWP */
      {RC, IBV_WC_COMP_SWAP, VHCA_WR_TARGET_ATOMIC, 0, 0, 1, 0, "ATOMIC_CMP_AND_SWP"},
      /* IBV_WR_ATOMIC_FETCH_AND_ADD */
      {RC, IBV_WC_FETCH_ADD, VHCA_WR_TARGET_ATOMIC, 0, 0, 1, 0, "ATOMIC_FETCH_AND_ADD"},
      /* IBV_WR_LOCAL_INV: type 2 windows (user MRs cannot be invalidated) */
      {RC | UC, IBV_WC_LOCAL_INV, VHCA_WR_TARGET_NONE, 0, 0, 0, 1, "LOCAL_INV"},
      /* IBV_WR_BIND_MW, and ibv_bind_mw (type 1) */
      {RC | UC, IBV_WC_BIND_MW, VHCA_WR_TARGET_NONE, 0, 0, 0, 1, "BIND_MW"},
      /* IBV_WR_SEND_WITH_INV: RC has the opcodes (IBA table 38), UC and UD do not */
      {RC, IBV_WC_SEND, VHCA_WR_TARGET_NONE, 0, 1, 0, 0, "SEND_WITH_INV"},
  };
  return opcode < sizeof(table) / sizeof(table[0]) ? &table[opcode] : NULL;
}

/* The row of `opcode` if a QP of `type` may post it, else NULL. */
/* RDMA READ/WRITE and atomics: work requests that name remote memory. */
static inline int vhca_wr_op_remote(unsigned opcode) {
  const struct vhca_wr_op *op = vhca_wr_op_info(opcode);
  return op && (op->target == VHCA_WR_TARGET_RDMA || op->target == VHCA_WR_TARGET_ATOMIC);
}

static inline const struct vhca_wr_op *vhca_wr_op_for(enum ibv_qp_type type, unsigned opcode) {
  const unsigned bit = type == IBV_QPT_RC   ? VHCA_QPT_RC_BIT
                       : type == IBV_QPT_UC ? VHCA_QPT_UC_BIT
                       : type == IBV_QPT_UD ? VHCA_QPT_UD_BIT
                                            : 0;
  const struct vhca_wr_op *op = vhca_wr_op_info(opcode);
  return op && (op->qp_types & bit) ? op : NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* VHCA_WR_OPS_H */
