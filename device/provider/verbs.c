/* Slow-path verbs: each is one request to fabricd. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vhca.h"

#define CMD(ctx, code, req, rsp) vhca_cmd(ctx, code, &(req), sizeof(req), &(rsp), sizeof(rsp), NULL, 0)

static int vhca_query_device_ex(struct ibv_context *ibctx, const struct ibv_query_device_ex_input *input,
                                struct ibv_device_attr_ex *attr, size_t attr_size) {
  if (input && input->comp_mask) return EINVAL;
  if (attr_size < sizeof(attr->orig_attr)) return EINVAL;
  struct vhca_req_hdr req = {0};
  struct vhca_query_device_rsp rsp;
  int ret = CMD(to_vctx(ibctx), VHCA_CMD_QUERY_DEVICE, req, rsp);
  if (ret) return ret;
  /* Extended attributes we do not support read as zero. */
  memset(attr, 0, attr_size < sizeof(*attr) ? attr_size : sizeof(*attr));
  attr->orig_attr = rsp.attr;
  return 0;
}

static int vhca_query_port(struct ibv_context *ibctx, uint8_t port, struct ibv_port_attr *attr) {
  struct vhca_query_port_req req = {.port_num = port};
  struct vhca_query_port_rsp rsp;
  int ret = CMD(to_vctx(ibctx), VHCA_CMD_QUERY_PORT, req, rsp);
  if (ret) return ret;
  *attr = rsp.attr;
  return 0;
}

static struct ibv_pd *vhca_alloc_pd(struct ibv_context *ibctx) {
  struct vhca_req_hdr req = {0};
  struct vhca_alloc_pd_rsp rsp;
  int ret = CMD(to_vctx(ibctx), VHCA_CMD_ALLOC_PD, req, rsp);
  if (ret) {
    errno = ret;
    return NULL;
  }
  struct vhca_pd *pd = calloc(1, sizeof(*pd));
  if (!pd) {
    struct vhca_handle_req d = {.handle = rsp.pd_handle};
    struct vhca_empty_rsp e;
    CMD(to_vctx(ibctx), VHCA_CMD_DEALLOC_PD, d, e);
    errno = ENOMEM;
    return NULL;
  }
  pd->ibv_pd.context = ibctx;
  pd->ibv_pd.handle = rsp.pd_handle;
  return &pd->ibv_pd;
}

static int destroy_handle(struct ibv_context *ibctx, uint32_t cmd, uint32_t handle) {
  struct vhca_handle_req req = {.handle = handle};
  struct vhca_empty_rsp rsp;
  return CMD(to_vctx(ibctx), cmd, req, rsp);
}

static int vhca_dealloc_pd(struct ibv_pd *pd) {
  int ret = destroy_handle(pd->context, VHCA_CMD_DEALLOC_PD, pd->handle);
  if (!ret) free(pd);
  return ret;
}

static struct ibv_mr *vhca_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
                                  int access) {
  if (hca_va != (uintptr_t)addr) { /* IOVA-based MRs are not supported */
    errno = EOPNOTSUPP;
    return NULL;
  }
  struct vhca_reg_mr_req req = {.pd_handle = pd->handle, .access = (uint32_t)access,
                                .addr = (uintptr_t)addr, .length = length};
  struct vhca_reg_mr_rsp rsp;
  int ret = CMD(to_vctx(pd->context), VHCA_CMD_REG_MR, req, rsp);
  if (ret) {
    errno = ret;
    return NULL;
  }
  struct vhca_mr *mr = calloc(1, sizeof(*mr));
  if (!mr) {
    destroy_handle(pd->context, VHCA_CMD_DEREG_MR, rsp.mr_handle);
    errno = ENOMEM;
    return NULL;
  }
  mr->vmr.ibv_mr.handle = rsp.mr_handle;
  mr->vmr.ibv_mr.lkey = rsp.lkey;
  mr->vmr.ibv_mr.rkey = rsp.rkey;
  mr->vmr.mr_type = IBV_MR_TYPE_MR;
  mr->vmr.access = access;
  return &mr->vmr.ibv_mr;
}

static int vhca_dereg_mr(struct verbs_mr *vmr) {
  int ret = destroy_handle(vmr->ibv_mr.context, VHCA_CMD_DEREG_MR, vmr->ibv_mr.handle);
  if (!ret) free(vmr);
  return ret;
}

static struct ibv_cq *vhca_create_cq(struct ibv_context *ibctx, int cqe,
                                     struct ibv_comp_channel *channel, int comp_vector) {
  if (cqe < 1 || comp_vector < 0) {
    errno = EINVAL;
    return NULL;
  }
  struct vhca_create_cq_req req = {.cqe = (uint32_t)cqe, .comp_vector = (uint32_t)comp_vector};
  struct vhca_create_cq_rsp rsp;
  int fd = -1;
  int ret = vhca_cmd(to_vctx(ibctx), VHCA_CMD_CREATE_CQ, &req, sizeof(req), &rsp, sizeof(rsp), &fd, 1);
  if (ret) {
    errno = ret;
    return NULL;
  }
  struct vhca_cq *cq = calloc(1, sizeof(*cq));
  if (!cq || (ret = vhca_ring_map(&cq->ring, fd, rsp.entries, sizeof(struct vhca_cqe)))) {
    close(fd);
    free(cq);
    destroy_handle(ibctx, VHCA_CMD_DESTROY_CQ, rsp.cq_handle);
    errno = cq ? ret : ENOMEM;
    return NULL;
  }
  close(fd);
  cq->vcq.cq.handle = rsp.cq_handle;
  cq->vcq.cq.cqe = (int)rsp.entries - 1;
  return &cq->vcq.cq;
}

static int vhca_destroy_cq(struct ibv_cq *ibcq) {
  int ret = destroy_handle(ibcq->context, VHCA_CMD_DESTROY_CQ, ibcq->handle);
  if (ret) return ret;
  vhca_ring_unmap(&to_vcq(ibcq)->ring);
  free(to_vcq(ibcq));
  return 0;
}

static struct ibv_qp *vhca_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr) {
  struct vhca_create_qp_req req = {
      .pd_handle = pd->handle,
      .send_cq_handle = attr->send_cq ? attr->send_cq->handle : 0,
      .recv_cq_handle = attr->recv_cq ? attr->recv_cq->handle : 0,
      .srq_handle = attr->srq ? attr->srq->handle : 0,
      .qp_type = attr->qp_type,
      .sq_sig_all = (uint32_t)attr->sq_sig_all,
      .cap = attr->cap,
  };
  if (!attr->send_cq || !attr->recv_cq) {
    errno = EINVAL;
    return NULL;
  }
  struct vhca_create_qp_rsp rsp;
  int fds[2] = {-1, -1};
  int ret = vhca_cmd(to_vctx(pd->context), VHCA_CMD_CREATE_QP, &req, sizeof(req), &rsp, sizeof(rsp), fds, 2);
  if (ret) {
    errno = ret;
    return NULL;
  }
  struct vhca_qp *qp = calloc(1, sizeof(*qp));
  if (!qp) ret = ENOMEM;
  if (!ret) ret = vhca_ring_map(&qp->sq, fds[0], rsp.sq_entries, sizeof(struct vhca_send_wqe));
  if (!ret) ret = vhca_ring_map(&qp->rq, fds[1], rsp.rq_entries, sizeof(struct vhca_recv_wqe));
  close(fds[0]);
  close(fds[1]);
  if (ret) {
    if (qp) {
      vhca_ring_unmap(&qp->sq);
      free(qp);
    }
    destroy_handle(pd->context, VHCA_CMD_DESTROY_QP, rsp.qp_handle);
    errno = ret;
    return NULL;
  }
  struct ibv_qp *q = &qp->vqp.qp;
  q->context = pd->context;
  q->qp_context = attr->qp_context;
  q->pd = pd;
  q->send_cq = attr->send_cq;
  q->recv_cq = attr->recv_cq;
  q->srq = attr->srq;
  q->handle = rsp.qp_handle;
  q->qp_num = rsp.qp_num;
  q->state = IBV_QPS_RESET;
  q->qp_type = attr->qp_type;
  q->events_completed = 0;
  pthread_mutex_init(&q->mutex, NULL);
  pthread_cond_init(&q->cond, NULL);
  qp->max_send_sge = rsp.cap.max_send_sge;
  qp->max_recv_sge = rsp.cap.max_recv_sge;
  qp->max_inline = rsp.cap.max_inline_data;
  qp->sq_sig_all = attr->sq_sig_all;
  attr->cap = rsp.cap;
  return q;
}

static int vhca_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask) {
  struct vhca_modify_qp_req req = {.qp_handle = qp->handle, .attr_mask = (uint32_t)attr_mask, .attr = *attr};
  struct vhca_empty_rsp rsp;
  return CMD(to_vctx(qp->context), VHCA_CMD_MODIFY_QP, req, rsp);
}

static int vhca_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
                         struct ibv_qp_init_attr *init_attr) {
  struct vhca_query_qp_req req = {.qp_handle = qp->handle, .attr_mask = (uint32_t)attr_mask};
  struct vhca_query_qp_rsp rsp;
  int ret = CMD(to_vctx(qp->context), VHCA_CMD_QUERY_QP, req, rsp);
  if (ret) return ret;
  *attr = rsp.attr;
  memset(init_attr, 0, sizeof(*init_attr));
  init_attr->qp_context = qp->qp_context;
  init_attr->send_cq = qp->send_cq;
  init_attr->recv_cq = qp->recv_cq;
  init_attr->srq = qp->srq;
  init_attr->qp_type = qp->qp_type;
  init_attr->cap = rsp.init.cap;
  init_attr->sq_sig_all = (int)rsp.init.sq_sig_all;
  return 0;
}

static int vhca_destroy_qp(struct ibv_qp *ibqp) {
  struct vhca_handle_req req = {.handle = ibqp->handle};
  struct vhca_destroy_qp_rsp rsp;
  int ret = CMD(to_vctx(ibqp->context), VHCA_CMD_DESTROY_QP, req, rsp);
  if (ret) return ret;
  struct vhca_qp *qp = to_vqp(ibqp);
  vhca_ring_unmap(&qp->sq);
  vhca_ring_unmap(&qp->rq);
  pthread_mutex_destroy(&ibqp->mutex);
  pthread_cond_destroy(&ibqp->cond);
  free(qp);
  return 0;
}

const struct verbs_context_ops vhca_ctx_ops = {
    .query_device_ex = vhca_query_device_ex,
    .query_port = vhca_query_port,
    .alloc_pd = vhca_alloc_pd,
    .dealloc_pd = vhca_dealloc_pd,
    .reg_mr = vhca_reg_mr,
    .dereg_mr = vhca_dereg_mr,
    .create_cq = vhca_create_cq,
    .destroy_cq = vhca_destroy_cq,
    .poll_cq = vhca_poll_cq,
    .create_qp = vhca_create_qp,
    .modify_qp = vhca_modify_qp,
    .query_qp = vhca_query_qp,
    .destroy_qp = vhca_destroy_qp,
    .post_send = vhca_post_send,
    .post_recv = vhca_post_recv,
    .free_context = vhca_free_context,
};
