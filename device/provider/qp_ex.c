/* The extended post API (ibv_create_qp_ex with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
 * ibv_wr_start .. ibv_wr_complete): WQEs written straight into the send ring
 * post_send fills, as mlx5 and rxe build them in place. wr_start takes the SQ
 * lock, each builder claims the next slot, the setters complete it, and
 * wr_complete publishes the whole batch with one producer store and one
 * doorbell -- or, after any error, rolls the batch back and returns it. */
#include <errno.h>
#include <string.h>

#include "device/abi/vhca_wr_ops.h"
#include "vhca.h"

/* Opcodes this device carries (vhca_wr_ops.h); TSO, FLUSH and ATOMIC_WRITE
 * are not offered. */
#define VHCA_QP_EX_SEND_OPS                                                                       \
  (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |         \
   IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW |      \
   IBV_QP_EX_WITH_SEND_WITH_INV)

static inline struct vhca_qp *ex_to_vqp(struct ibv_qp_ex *qpx) { return (struct vhca_qp *)qpx; }

static void fail(struct vhca_qp *qp, int err) {
  if (!qp->wr_err) qp->wr_err = err;
  qp->wr_cur = NULL;
}

/* The WR being built is complete when the next builder or wr_complete comes:
 * a UD WR without an address cannot be sent (post_send's EINVAL). */
static void close_current(struct vhca_qp *qp) {
  if (qp->wr_cur && qp->vqp.qp.qp_type == IBV_QPT_UD && !qp->wr_has_ah) fail(qp, EINVAL);
  qp->wr_cur = NULL;
}

/* Claims the next SQ slot for a WR of `opcode` and fills its header. */
static struct vhca_send_wqe *begin_wr(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode) {
  struct vhca_qp *qp = ex_to_vqp(qpx);
  close_current(qp);
  if (qp->wr_err) return NULL;
  const struct vhca_wr_op *op = vhca_wr_op_for(qp->vqp.qp.qp_type, opcode);
  if (!op) {
    fail(qp, EINVAL);
    return NULL;
  }
  struct vhca_ring *sq = &qp->sq;
  if (sq->local - __atomic_load_n(&sq->hdr->consumer, __ATOMIC_ACQUIRE) > sq->mask) {
    fail(qp, ENOMEM); /* full SQ, as post_send */
    return NULL;
  }
  struct vhca_send_wqe *w = (struct vhca_send_wqe *)(sq->entries + (size_t)(sq->local & sq->mask) * sq->entry_size);
  sq->local++;
  memset(w, 0, offsetof(struct vhca_send_wqe, sge));
  w->wr_id = qpx->wr_id;
  w->opcode = (uint8_t)opcode;
  /* Inline is chosen by ibv_wr_set_inline_data, not by the flag. */
  w->send_flags = qpx->wr_flags & ~(uint32_t)IBV_SEND_INLINE;
  if (qp->sq_sig_all) w->send_flags |= IBV_SEND_SIGNALED;
  qp->wr_cur = w;
  qp->wr_op = op;
  qp->wr_has_ah = 0;
  return w;
}

/* A WR that names remote memory (RDMA and atomics). */
static struct vhca_send_wqe *begin_remote(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode, uint32_t rkey,
                                          uint64_t remote_addr) {
  struct vhca_send_wqe *w = begin_wr(qpx, opcode);
  if (w) {
    w->rkey = rkey;
    w->remote_addr = remote_addr;
  }
  return w;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr) {
  begin_remote(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, __be32 imm) {
  struct vhca_send_wqe *w = begin_remote(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr);
  if (w) w->imm_data = (uint32_t)imm;
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr) {
  begin_remote(qpx, IBV_WR_RDMA_READ, rkey, remote_addr);
}

static void wr_send(struct ibv_qp_ex *qpx) { begin_wr(qpx, IBV_WR_SEND); }

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm) {
  struct vhca_send_wqe *w = begin_wr(qpx, IBV_WR_SEND_WITH_IMM);
  if (w) w->imm_data = (uint32_t)imm;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, uint64_t compare,
                              uint64_t swap) {
  struct vhca_send_wqe *w = begin_remote(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr);
  if (!w) return;
  w->compare_add = compare;
  w->swap = swap;
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, uint64_t add) {
  struct vhca_send_wqe *w = begin_remote(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr);
  if (w) w->compare_add = add;
}

/* A window of this context, bound to a region named by its L_Key (as
 * post_send's BIND_MW; the engine checks the rest in SQ order). */
static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
                       const struct ibv_mw_bind_info *b) {
  struct vhca_qp *qp = ex_to_vqp(qpx);
  if (!mw || mw->context != qp->vqp.qp.context || !b) {
    close_current(qp);
    fail(qp, EINVAL);
    return;
  }
  struct vhca_send_wqe *w = begin_wr(qpx, IBV_WR_BIND_MW);
  if (w) vhca_set_bind(w, mw, rkey, b);
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey) {
  struct vhca_send_wqe *w = begin_wr(qpx, IBV_WR_LOCAL_INV);
  if (w) w->imm_data = invalidate_rkey;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey) {
  struct vhca_send_wqe *w = begin_wr(qpx, IBV_WR_SEND_WITH_INV);
  if (w) w->imm_data = invalidate_rkey;
}

/* Builders for operations the device does not offer: create refuses their
 * send_ops_flags, and an app that calls one anyway gets EOPNOTSUPP from
 * wr_complete rather than a jump through NULL. */
static void wr_unsupported(struct ibv_qp_ex *qpx) { fail(ex_to_vqp(qpx), EOPNOTSUPP); }
static void wr_send_tso(struct ibv_qp_ex *q, void *h, uint16_t hs, uint16_t mss) { wr_unsupported(q); }
static void wr_set_xrc_srqn(struct ibv_qp_ex *q, uint32_t srqn) { wr_unsupported(q); }
static void wr_atomic_write(struct ibv_qp_ex *q, uint32_t r, uint64_t a, const void *d) { wr_unsupported(q); }

/* The setters apply to the WR the last builder started; after an error
 * (no current WR) they do nothing and wr_complete reports the error. */
static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey) {
  struct vhca_qp *qp = ex_to_vqp(qpx);
  struct vhca_send_wqe *w = qp->wr_cur;
  if (!w || qp->vqp.qp.qp_type != IBV_QPT_UD) return; /* mlx5 ignores it on connected QPs */
  if (!ah) {
    fail(qp, EINVAL);
    return;
  }
  w->ah_handle = ah->handle;
  w->remote_qpn = remote_qpn;
  w->remote_qkey = remote_qkey;
  qp->wr_has_ah = 1;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg) {
  struct vhca_qp *qp = ex_to_vqp(qpx);
  struct vhca_send_wqe *w = qp->wr_cur;
  if (!w) return;
  if (num_sge > qp->max_send_sge || (num_sge && !sg)) {
    fail(qp, EINVAL);
    return;
  }
  w->send_flags &= ~(uint32_t)IBV_SEND_INLINE;
  w->inline_len = 0;
  w->num_sge = (uint8_t)num_sge;
  for (size_t i = 0; i < num_sge; i++) {
    w->sge[i].addr = sg[i].addr;
    w->sge[i].length = sg[i].length;
    w->sge[i].lkey = sg[i].lkey;
  }
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length) {
  const struct ibv_sge sge = {.addr = addr, .length = length, .lkey = lkey};
  wr_set_sge_list(qpx, 1, &sge);
}

/* Copied now, so the app may reuse its buffers at once. Errnos as post_send:
 * ENOMEM beyond max_inline_data, EINVAL where inline does not apply. */
static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf, const struct ibv_data_buf *bufs) {
  struct vhca_qp *qp = ex_to_vqp(qpx);
  struct vhca_send_wqe *w = qp->wr_cur;
  if (!w) return;
  if (!qp->wr_op->inline_ok || (num_buf && !bufs)) {
    fail(qp, EINVAL);
    return;
  }
  size_t total = 0;
  for (size_t i = 0; i < num_buf; i++) {
    if (bufs[i].length > qp->max_inline - total) {
      fail(qp, ENOMEM);
      return;
    }
    memcpy(w->inline_data + total, bufs[i].addr, bufs[i].length);
    total += bufs[i].length;
  }
  w->num_sge = 0;
  w->inline_len = (uint16_t)total;
  w->send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length) {
  const struct ibv_data_buf buf = {.addr = addr, .length = length};
  wr_set_inline_data_list(qpx, 1, &buf);
}

static void wr_start(struct ibv_qp_ex *qpx) {
  struct vhca_qp *qp = ex_to_vqp(qpx);
  pthread_spin_lock(&qp->sq.lock);
  qp->wr_first = qp->sq.local;
  /* A QP in RESET takes no work: the batch fails at wr_complete, as on mlx5
   * (libibverbs keeps ibv_qp.state as modify_qp set it). */
  qp->wr_err = qp->vqp.qp.state == IBV_QPS_RESET ? EINVAL : 0;
  qp->wr_cur = NULL;
}

static void rollback_and_unlock(struct vhca_qp *qp) {
  qp->sq.local = qp->wr_first;
  qp->wr_cur = NULL;
  pthread_spin_unlock(&qp->sq.lock);
}

static int wr_complete(struct ibv_qp_ex *qpx) {
  struct vhca_qp *qp = ex_to_vqp(qpx);
  close_current(qp);
  const int err = qp->wr_err;
  if (err) {
    rollback_and_unlock(qp);
    return err;
  }
  const int posted = qp->sq.local != qp->wr_first;
  if (posted) __atomic_store_n(&qp->sq.hdr->producer, qp->sq.local, __ATOMIC_RELEASE);
  pthread_spin_unlock(&qp->sq.lock);
  if (posted) vhca_ring_doorbell(to_vctx(qp->vqp.qp.context));
  return 0;
}

static void wr_abort(struct ibv_qp_ex *qpx) { rollback_and_unlock(ex_to_vqp(qpx)); }

static void set_ops(struct ibv_qp_ex *x) {
  x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
  x->wr_atomic_fetch_add = wr_atomic_fetch_add;
  x->wr_bind_mw = wr_bind_mw;
  x->wr_local_inv = wr_local_inv;
  x->wr_rdma_read = wr_rdma_read;
  x->wr_rdma_write = wr_rdma_write;
  x->wr_rdma_write_imm = wr_rdma_write_imm;
  x->wr_send = wr_send;
  x->wr_send_imm = wr_send_imm;
  x->wr_send_inv = wr_send_inv;
  x->wr_send_tso = wr_send_tso;
  x->wr_set_ud_addr = wr_set_ud_addr;
  x->wr_set_xrc_srqn = wr_set_xrc_srqn;
  x->wr_set_inline_data = wr_set_inline_data;
  x->wr_set_inline_data_list = wr_set_inline_data_list;
  x->wr_set_sge = wr_set_sge;
  x->wr_set_sge_list = wr_set_sge_list;
  x->wr_start = wr_start;
  x->wr_complete = wr_complete;
  x->wr_abort = wr_abort;
  x->wr_atomic_write = wr_atomic_write;
}

/* The send_ops_flags a QP of `type` may ask for: those of the opcodes it can post. */
static uint64_t send_ops_for(enum ibv_qp_type type) {
  uint64_t ok = 0;
  for (unsigned op = IBV_WR_RDMA_WRITE; op <= IBV_WR_SEND_WITH_INV; op++)
    if (vhca_wr_op_for(type, op)) ok |= 1ull << op; /* IBV_QP_EX_WITH_* has the opcode's bit */
  return ok;
}
_Static_assert(IBV_QP_EX_WITH_RDMA_READ == 1 << IBV_WR_RDMA_READ &&
                   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD == 1 << IBV_WR_ATOMIC_FETCH_AND_ADD &&
                   IBV_QP_EX_WITH_BIND_MW == 1 << IBV_WR_BIND_MW &&
                   IBV_QP_EX_WITH_SEND_WITH_INV == 1 << IBV_WR_SEND_WITH_INV,
               "send_ops_flags bits follow the opcodes");

struct ibv_qp *vhca_create_qp_ex(struct ibv_context *ibctx, struct ibv_qp_init_attr_ex *attr) {
  const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  /* XRC domains, TSO, RSS indirection and hashing, and every create flag
   * but BLOCK_SELF_MCAST_LB: not offered. */
  const uint32_t flags = (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) ? attr->create_flags : 0;
  if ((attr->comp_mask & ~known) || (flags & ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB)) {
    errno = EOPNOTSUPP;
    return NULL;
  }
  if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd || attr->pd->context != ibctx) {
    errno = EINVAL;
    return NULL;
  }
  const int ex = !!(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
  if (ex && (attr->send_ops_flags & ~(uint64_t)VHCA_QP_EX_SEND_OPS)) {
    errno = EOPNOTSUPP;
    return NULL;
  }
  struct ibv_qp_init_attr base = {.qp_context = attr->qp_context,
                                  .send_cq = attr->send_cq,
                                  .recv_cq = attr->recv_cq,
                                  .srq = attr->srq,
                                  .cap = attr->cap,
                                  .qp_type = attr->qp_type,
                                  .sq_sig_all = attr->sq_sig_all};
  /* An opcode the QP type cannot carry (READ on UD ...), as mlx5: EOPNOTSUPP. */
  if (ex && (attr->send_ops_flags & ~send_ops_for(attr->qp_type)) &&
      (attr->qp_type == IBV_QPT_RC || attr->qp_type == IBV_QPT_UC || attr->qp_type == IBV_QPT_UD)) {
    errno = EOPNOTSUPP;
    return NULL;
  }
  struct vhca_qp *qp = vhca_open_qp(attr->pd, &base, flags);
  if (!qp) return NULL;
  attr->cap = base.cap;
  if (ex) {
    qp->vqp.comp_mask |= VERBS_QP_EX;
    set_ops(&qp->vqp.qp_ex);
  }
  return &qp->vqp.qp;
}
