/* Fast path: post_send, post_recv and poll_cq touch only shared memory. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "device/abi/vhca_wr_ops.h"
#include "vhca.h"

static inline uint32_t load_acquire(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void store_release(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

/* A bind names its window by handle (one of this context's: checked here),
 * its region by L_Key as hardware does, so the engine refuses another
 * context's region with MW_BIND_ERR rather than finding a namesake. */
static int fill_bind(const struct vhca_qp *qp, const struct ibv_send_wr *wr, struct vhca_send_wqe *w) {
  const struct ibv_mw *mw = wr->bind_mw.mw;
  const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;
  if (!mw || mw->context != qp->vqp.qp.context) return EINVAL;
  vhca_set_bind(w, mw, wr->bind_mw.rkey, b);
  return 0;
}

/* Checks one WR against the QP's limits and writes it into the slot. The
 * errnos are mlx5's: EINVAL for a bad opcode/SGE count/missing AH, ENOMEM for
 * inline data over max_inline_data (mlx5 set_data_inl_seg; rxe says EINVAL). */
static int fill_send_wqe(struct vhca_qp *qp, const struct ibv_send_wr *wr, struct vhca_send_wqe *w) {
  const enum ibv_qp_type type = qp->vqp.qp.qp_type;
  /* Opcodes outside the table fail the post, as in mlx5's. RDMA and atomics
   * on UD are posted and the device completes them IBV_WC_LOC_QP_OP_ERR, as
   * mlx5 hardware and rxe do; their wr.ud is not an AH (it shares a union with
   * wr.rdma), so nothing of it is read. */
  const struct vhca_wr_op *op = vhca_wr_op_for(type, wr->opcode);
  const bool foreign = !op && type == IBV_QPT_UD && vhca_wr_op_remote(wr->opcode);
  if (foreign) op = vhca_wr_op_info(wr->opcode);
  if (!op) return EINVAL;
  if (wr->num_sge < 0 || (wr->num_sge > 0 && !wr->sg_list)) return EINVAL;
  if (type == IBV_QPT_UD && !foreign && !wr->wr.ud.ah) return EINVAL;
  memset(w, 0, offsetof(struct vhca_send_wqe, sge));
  w->wr_id = wr->wr_id;
  w->opcode = (uint8_t)wr->opcode;
  w->send_flags = wr->send_flags;
  if (qp->sq_sig_all) w->send_flags |= IBV_SEND_SIGNALED;
  w->imm_data = wr->imm_data; /* union with invalidate_rkey */
  if (op->target == VHCA_WR_TARGET_RDMA) {
    w->remote_addr = wr->wr.rdma.remote_addr;
    w->rkey = wr->wr.rdma.rkey;
  } else if (op->target == VHCA_WR_TARGET_ATOMIC) {
    w->remote_addr = wr->wr.atomic.remote_addr;
    w->rkey = wr->wr.atomic.rkey;
    w->compare_add = wr->wr.atomic.compare_add;
    w->swap = wr->wr.atomic.swap;
  }
  if (wr->opcode == IBV_WR_BIND_MW) return fill_bind(qp, wr, w);
  if (op->local) return 0; /* LOCAL_INV: the key is all it has */
  if (type == IBV_QPT_UD && !foreign) {
    w->ah_handle = wr->wr.ud.ah->handle;
    w->remote_qpn = wr->wr.ud.remote_qpn;
    w->remote_qkey = wr->wr.ud.remote_qkey;
  }
  /* Atomics carry their operands in the WQE; inline does not apply to them
   * or to READ (the local SGE is where the response lands). */
  const bool inl = (wr->send_flags & IBV_SEND_INLINE) && op->inline_ok;
  if (inl) {
    size_t total = 0;
    for (int i = 0; i < wr->num_sge; i++) {
      const struct ibv_sge *s = &wr->sg_list[i];
      if (s->length > qp->max_inline || total + s->length > qp->max_inline) return ENOMEM;
      memcpy(w->inline_data + total, (const void *)(uintptr_t)s->addr, s->length);
      total += s->length;
    }
    w->inline_len = (uint16_t)total;
    w->num_sge = 0;
    return 0;
  }
  w->send_flags &= ~(uint32_t)IBV_SEND_INLINE;
  if ((uint32_t)wr->num_sge > qp->max_send_sge) return EINVAL;
  w->num_sge = (uint8_t)wr->num_sge;
  for (int i = 0; i < wr->num_sge; i++) {
    w->sge[i].addr = wr->sg_list[i].addr;
    w->sge[i].length = wr->sg_list[i].length;
    w->sge[i].lkey = wr->sg_list[i].lkey;
  }
  return 0;
}

int vhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr) {
  struct vhca_qp *qp = to_vqp(ibqp);
  struct vhca_ring *sq = &qp->sq;
  int ret = 0;
  pthread_spin_lock(&sq->lock);
  uint32_t start = sq->local;
  for (; wr; wr = wr->next) {
    if (sq->local - load_acquire(&sq->hdr->consumer) > sq->mask) {
      ret = ENOMEM; /* full SQ, as mlx5_wq_overflow */
      break;
    }
    struct vhca_send_wqe *w =
        (struct vhca_send_wqe *)(sq->entries + (size_t)(sq->local & sq->mask) * sq->entry_size);
    ret = fill_send_wqe(qp, wr, w);
    if (ret) break;
    sq->local++;
  }
  if (ret) *bad_wr = wr;
  if (sq->local != start) store_release(&sq->hdr->producer, sq->local);
  pthread_spin_unlock(&sq->lock);
  if (sq->local != start) vhca_ring_doorbell(to_vctx(ibqp->context));
  return ret;
}

/* Receive WQEs go to an RQ or an SRQ ring alike. */
static int post_recv_ring(struct vhca_context *ctx, struct vhca_ring *rq, uint32_t max_sge,
                          struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr) {
  int ret = 0;
  pthread_spin_lock(&rq->lock);
  uint32_t start = rq->local;
  for (; wr; wr = wr->next) {
    if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge || (wr->num_sge > 0 && !wr->sg_list)) {
      ret = EINVAL;
      break;
    }
    if (rq->local - load_acquire(&rq->hdr->consumer) > rq->mask) {
      ret = ENOMEM;
      break;
    }
    struct vhca_recv_wqe *w =
        (struct vhca_recv_wqe *)(rq->entries + (size_t)(rq->local & rq->mask) * rq->entry_size);
    w->wr_id = wr->wr_id;
    w->num_sge = (uint32_t)wr->num_sge;
    w->reserved = 0;
    for (int i = 0; i < wr->num_sge; i++) {
      w->sge[i].addr = wr->sg_list[i].addr;
      w->sge[i].length = wr->sg_list[i].length;
      w->sge[i].lkey = wr->sg_list[i].lkey;
    }
    rq->local++;
  }
  if (ret) *bad_wr = wr;
  if (rq->local != start) store_release(&rq->hdr->producer, rq->local);
  pthread_spin_unlock(&rq->lock);
  if (rq->local != start) vhca_ring_doorbell(ctx);
  return ret;
}

int vhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr) {
  struct vhca_qp *qp = to_vqp(ibqp);
  if (ibqp->srq || !qp->rq.hdr) { /* receives come from the SRQ: mlx5 says EINVAL */
    *bad_wr = wr;
    return EINVAL;
  }
  return post_recv_ring(to_vctx(ibqp->context), &qp->rq, qp->max_recv_sge, wr, bad_wr);
}

int vhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr) {
  struct vhca_srq *srq = to_vsrq(ibsrq);
  return post_recv_ring(to_vctx(ibsrq->context), &srq->ring, srq->max_sge, wr, bad_wr);
}

/* The engine raises one event per change of arm_sn, for the next CQE that
 * qualifies under `arm`; `arm` is written before the release of arm_sn so the
 * engine never pairs a new serial with an old mode. */
int vhca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only) {
  struct vhca_cq *cq = to_vcq(ibcq);
  struct vhca_ring *ring = &cq->ring;
  pthread_spin_lock(&cq->arm_lock);
  /* A request for the next completion stays armed until it fires: a
   * solicited-only request made meanwhile is already covered by it (IBA
   * 11.4.2.2; rxe and mlx5 keep the wider arm). */
  if (solicited_only && __atomic_load_n(&ring->hdr->arm, __ATOMIC_RELAXED) == VHCA_CQ_ARM_NEXT &&
      load_acquire(&ring->hdr->fired_sn) != cq->arm_sn) {
    pthread_spin_unlock(&cq->arm_lock);
    return 0;
  }
  __atomic_store_n(&ring->hdr->arm, solicited_only ? VHCA_CQ_ARM_SOLICITED : VHCA_CQ_ARM_NEXT,
                   __ATOMIC_RELAXED);
  store_release(&ring->hdr->arm_sn, ++cq->arm_sn);
  /* Store-load ordering against the engine: it publishes a CQE and then reads
   * arm_sn; we publish arm_sn and the app then polls the producer. Without a
   * full fence on both sides each can miss the other's store and the app
   * sleeps on a completion that raised no event (the engine's fence is
   * in cq_post). */
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  pthread_spin_unlock(&cq->arm_lock);
  /* No doorbell: the engine looks at the arm only when it adds a CQE (IBA
   * 11.4.2.4: the event is for the next completion), so a sleeping engine
   * has nothing to re-check. */
  return 0;
}

static void cqe_to_wc(const struct vhca_cqe *c, struct ibv_wc *wc) {
  wc->wr_id = c->wr_id;
  wc->status = (enum ibv_wc_status)c->status;
  wc->opcode = (enum ibv_wc_opcode)c->opcode;
  wc->vendor_err = c->vendor_err;
  wc->byte_len = c->byte_len;
  wc->imm_data = c->imm_data;
  wc->qp_num = c->qp_num;
  wc->src_qp = c->src_qp;
  wc->wc_flags = c->wc_flags;
  wc->pkey_index = c->pkey_index;
  wc->slid = c->slid;
  wc->sl = c->sl;
  wc->dlid_path_bits = c->dlid_path_bits;
}

int vhca_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc) {
  struct vhca_ring *ring = &to_vcq(ibcq)->ring;
  int n = 0;
  pthread_spin_lock(&ring->lock);
  uint32_t producer = load_acquire(&ring->hdr->producer);
  while (n < ne && ring->local != producer) {
    const struct vhca_cqe *c =
        (const struct vhca_cqe *)(ring->entries + (size_t)(ring->local & ring->mask) * ring->entry_size);
    cqe_to_wc(c, &wc[n++]);
    ring->local++;
  }
  if (n) store_release(&ring->hdr->consumer, ring->local);
  pthread_spin_unlock(&ring->lock);
  /* What fabricd completed comes first; then, with fabricd gone, the rest. */
  if (n < ne && vhca_is_fatal(to_vctx(ibcq->context))) n += vhca_flush_cq(ibcq, ne - n, wc + n);
  return n;
}
