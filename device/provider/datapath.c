/* Fast path: post_send, post_recv and poll_cq touch only shared memory. */
#include <errno.h>
#include <string.h>

#include "vhca.h"

static inline uint32_t load_acquire(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void store_release(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

static int fill_send_wqe(struct vhca_qp *qp, const struct ibv_send_wr *wr, struct vhca_send_wqe *w) {
  memset(w, 0, offsetof(struct vhca_send_wqe, sge));
  w->wr_id = wr->wr_id;
  w->opcode = (uint8_t)wr->opcode;
  w->send_flags = wr->send_flags;
  if (qp->sq_sig_all) w->send_flags |= IBV_SEND_SIGNALED;
  w->imm_data = wr->imm_data; /* union with invalidate_rkey */
  switch (wr->opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
      w->remote_addr = wr->wr.rdma.remote_addr;
      w->rkey = wr->wr.rdma.rkey;
      break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      w->remote_addr = wr->wr.atomic.remote_addr;
      w->rkey = wr->wr.atomic.rkey;
      w->compare_add = wr->wr.atomic.compare_add;
      w->swap = wr->wr.atomic.swap;
      break;
    default:
      break;
  }
  if (qp->vqp.qp.qp_type == IBV_QPT_UD && wr->wr.ud.ah) {
    w->ah_handle = wr->wr.ud.ah->handle;
    w->remote_qpn = wr->wr.ud.remote_qpn;
    w->remote_qkey = wr->wr.ud.remote_qkey;
  }
  if (wr->num_sge < 0) return EINVAL;
  if (wr->send_flags & IBV_SEND_INLINE) {
    size_t total = 0;
    for (int i = 0; i < wr->num_sge; i++) {
      const struct ibv_sge *s = &wr->sg_list[i];
      if (total + s->length > qp->max_inline) return EINVAL;
      memcpy(w->inline_data + total, (const void *)(uintptr_t)s->addr, s->length);
      total += s->length;
    }
    w->inline_len = (uint16_t)total;
    w->num_sge = 0;
    return 0;
  }
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
      ret = ENOMEM;
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

int vhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr) {
  struct vhca_qp *qp = to_vqp(ibqp);
  struct vhca_ring *rq = &qp->rq;
  int ret = 0;
  pthread_spin_lock(&rq->lock);
  uint32_t start = rq->local;
  for (; wr; wr = wr->next) {
    if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_recv_sge) {
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
  if (rq->local != start) vhca_ring_doorbell(to_vctx(ibqp->context));
  return ret;
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
  return n;
}
