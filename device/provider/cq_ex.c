/* Extended CQs (ibv_create_cq_ex): the CQE ring ibv_poll_cq reads, read in
 * place one CQE at a time between start_poll and end_poll, as mlx5 and rxe
 * do. The ring lock is held from a successful start_poll to end_poll: arming
 * in between is fine (its own lock), ibv_resize_cq or ibv_poll_cq on the same
 * CQ in between deadlocks, as on mlx5. */
#include <errno.h>
#include <string.h>

#include "vhca.h"

/* What a CQE carries; the timestamp is the engine's emulated clock. Wall
 * clock, VLAN, flow tag and tag matching are not offered: EOPNOTSUPP. */
#define VHCA_CQ_EX_WC_FLAGS (IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)

static inline struct vhca_cq *ex_to_vcq(struct ibv_cq_ex *cq) { return (struct vhca_cq *)cq; }

static void wc_to_cqe(const struct ibv_wc *wc, struct vhca_cqe *c) {
  memset(c, 0, sizeof(*c));
  c->wr_id = wc->wr_id;
  c->status = wc->status;
  c->opcode = wc->opcode;
  c->qp_num = wc->qp_num;
}

/* Positions on the oldest CQE; with fabricd gone and the ring empty, on the
 * next flush completion (as poll_cq). ENOENT when there is none. */
static int load_current(struct vhca_cq *cq) {
  struct vhca_ring *ring = &cq->ring;
  if (ring->local != __atomic_load_n(&ring->hdr->producer, __ATOMIC_ACQUIRE)) {
    cq->cur = (const struct vhca_cqe *)(ring->entries + (size_t)(ring->local & ring->mask) * ring->entry_size);
  } else {
    struct ibv_wc wc;
    if (!vhca_is_fatal(to_vctx(cq->vcq.cq.context)) || vhca_flush_cq(&cq->vcq.cq, 1, &wc) != 1) {
      cq->cur = NULL;
      return ENOENT;
    }
    wc_to_cqe(&wc, &cq->flushed);
    cq->cur = &cq->flushed;
  }
  cq->vcq.cq_ex.wr_id = cq->cur->wr_id;
  cq->vcq.cq_ex.status = (enum ibv_wc_status)cq->cur->status;
  return 0;
}

/* Hands the current ring slot back to the engine (a flush completion has
 * none: the flush already retired its WQE). Published at once, so a long
 * batch never makes the ring look fuller to the engine than it is. */
static void retire_current(struct vhca_cq *cq) {
  struct vhca_ring *ring = &cq->ring;
  if (!cq->cur || cq->cur == &cq->flushed) return;
  ring->local++;
  __atomic_store_n(&ring->hdr->consumer, ring->local, __ATOMIC_RELEASE);
  cq->cur = NULL;
}

static int start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr) {
  if (attr && attr->comp_mask) return EINVAL; /* no attribute is defined */
  struct vhca_cq *cq = ex_to_vcq(ibcq);
  pthread_spin_lock(&cq->ring.lock);
  int ret = load_current(cq);
  if (ret) pthread_spin_unlock(&cq->ring.lock); /* ENOENT: the app does not call end_poll */
  return ret;
}

static int next_poll(struct ibv_cq_ex *ibcq) {
  struct vhca_cq *cq = ex_to_vcq(ibcq);
  retire_current(cq);
  return load_current(cq);
}

static void end_poll(struct ibv_cq_ex *ibcq) {
  struct vhca_cq *cq = ex_to_vcq(ibcq);
  retire_current(cq);
  pthread_spin_unlock(&cq->ring.lock);
}

#define CUR(ibcq) (ex_to_vcq(ibcq)->cur)
static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *c) { return (enum ibv_wc_opcode)CUR(c)->opcode; }
static uint32_t read_vendor_err(struct ibv_cq_ex *c) { return CUR(c)->vendor_err; }
static uint32_t read_byte_len(struct ibv_cq_ex *c) { return CUR(c)->byte_len; }
/* Also ibv_wc_read_invalidated_rkey: the same field, as in struct ibv_wc. */
static __be32 read_imm_data(struct ibv_cq_ex *c) { return (__be32)CUR(c)->imm_data; }
static uint32_t read_qp_num(struct ibv_cq_ex *c) { return CUR(c)->qp_num; }
static uint32_t read_src_qp(struct ibv_cq_ex *c) { return CUR(c)->src_qp; }
static unsigned int read_wc_flags(struct ibv_cq_ex *c) { return CUR(c)->wc_flags; }
static uint32_t read_slid(struct ibv_cq_ex *c) { return CUR(c)->slid; }
static uint8_t read_sl(struct ibv_cq_ex *c) { return CUR(c)->sl; }
static uint8_t read_dlid_path_bits(struct ibv_cq_ex *c) { return CUR(c)->dlid_path_bits; }
static uint64_t read_completion_ts(struct ibv_cq_ex *c) { return CUR(c)->completion_ts; }
#undef CUR

struct ibv_cq_ex *vhca_create_cq_ex(struct ibv_context *ibctx, struct ibv_cq_init_attr_ex *attr) {
  /* Parent domains (MASK_PD) and IGNORE_OVERRUN are not offered; single-
   * threaded is a hint this CQ does not need (its lock is uncontended). */
  if ((attr->wc_flags & ~(uint64_t)VHCA_CQ_EX_WC_FLAGS) ||
      (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
      ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
       (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
    errno = EOPNOTSUPP;
    return NULL;
  }
  if (attr->cqe > (uint32_t)INT32_MAX) {
    errno = EINVAL;
    return NULL;
  }
  struct vhca_cq *cq = vhca_open_cq(ibctx, (int)attr->cqe, attr->channel, (int)attr->comp_vector);
  if (!cq) return NULL;
  struct ibv_cq_ex *ex = &cq->vcq.cq_ex;
  ex->start_poll = start_poll;
  ex->next_poll = next_poll;
  ex->end_poll = end_poll;
  ex->read_opcode = read_opcode;
  ex->read_vendor_err = read_vendor_err;
  ex->read_byte_len = read_byte_len;
  ex->read_imm_data = read_imm_data;
  ex->read_qp_num = read_qp_num;
  ex->read_src_qp = read_src_qp;
  ex->read_wc_flags = read_wc_flags;
  ex->read_slid = read_slid;
  ex->read_sl = read_sl;
  ex->read_dlid_path_bits = read_dlid_path_bits;
  ex->read_completion_ts = read_completion_ts;
  return ex; /* libibverbs runs verbs_init_cq (context, channel, mutex, counters) */
}
