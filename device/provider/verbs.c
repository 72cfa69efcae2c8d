/* Slow-path verbs: each is one request to fabricd. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "device/abi/vhca_comp_channel.h"
#include "vhca.h"

/* The device clock the CQE timestamps use (emulated ns, hca_core_clock
 * 1 GHz), as mlx5 returns its free-running counter: in raw_clock.tv_nsec. */
static int vhca_query_rt_values(struct ibv_context *ibctx, struct ibv_values_ex *values) {
  if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK) return EINVAL;
  uint32_t done = 0;
  if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
    struct vhca_req_hdr req;
    struct vhca_query_clock_rsp rsp;
    int ret = CMD(to_vctx(ibctx), VHCA_CMD_QUERY_CLOCK, req, rsp);
    if (ret) return ret;
    values->raw_clock.tv_sec = 0;
    values->raw_clock.tv_nsec = (long)rsp.now_ns;
    done |= IBV_VALUES_MASK_RAW_CLOCK;
  }
  values->comp_mask = done;
  return 0;
}

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
#define HAS_FIELD(f) (attr_size >= offsetof(struct ibv_device_attr_ex, f) + sizeof(attr->f))
  /* CQE timestamps count emulated nanoseconds (cq_ex.c): a 1 GHz clock
   * whose 64 bits do not wrap in a lab's lifetime. */
  if (HAS_FIELD(hca_core_clock)) {
    attr->completion_timestamp_mask = UINT64_MAX;
    attr->hca_core_clock = 1000000; /* kHz */
  }
  /* The kernel reports the base capability flags in the extended word too. */
  if (HAS_FIELD(device_cap_flags_ex)) attr->device_cap_flags_ex = rsp.attr.device_cap_flags;
  if (HAS_FIELD(phys_port_cnt_ex)) attr->phys_port_cnt_ex = rsp.attr.phys_port_cnt;
#undef HAS_FIELD
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
  return vhca_fail(CMD(to_vctx(ibctx), cmd, req, rsp));
}

static int vhca_dealloc_pd(struct ibv_pd *pd) {
  int ret = destroy_handle(pd->context, VHCA_CMD_DEALLOC_PD, pd->handle);
  if (!ret) free(pd);
  return ret;
}

static struct ibv_mr *vhca_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
                                  int access) {
  /* hca_va is the IOVA (ibv_reg_mr passes the address itself); with
   * IBV_ACCESS_ZERO_BASED the engine names the region from 0 instead. */
  struct vhca_reg_mr_req req = {.pd_handle = pd->handle, .access = (uint32_t)access,
                                .addr = (uintptr_t)addr, .length = length, .iova = hca_va};
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

/* libibverbs has checked the flag combinations and updates mr->pd, addr and
 * length on success; it does not set errno for a provider's failure. */
static int vhca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length,
                         int access) {
  /* A PD of another context: its handle means nothing (or another PD) here. */
  if ((flags & IBV_REREG_MR_CHANGE_PD) && (!pd || pd->context != vmr->ibv_mr.context)) {
    errno = EINVAL;
    return EINVAL;
  }
  struct vhca_rereg_mr_req req = {.mr_handle = vmr->ibv_mr.handle,
                                  .flags = (uint32_t)flags,
                                  .pd_handle = (flags & IBV_REREG_MR_CHANGE_PD) && pd ? pd->handle : 0,
                                  .access = (uint32_t)access,
                                  .addr = (uintptr_t)addr,
                                  .length = length};
  struct vhca_rereg_mr_rsp rsp;
  int ret = CMD(to_vctx(vmr->ibv_mr.context), VHCA_CMD_REREG_MR, req, rsp);
  if (ret) {
    errno = ret;
    return ret;
  }
  vmr->ibv_mr.lkey = rsp.lkey;
  vmr->ibv_mr.rkey = rsp.rkey;
  if (flags & IBV_REREG_MR_CHANGE_ACCESS) vmr->access = access;
  return 0;
}

static int vhca_dereg_mr(struct verbs_mr *vmr) {
  int ret = destroy_handle(vmr->ibv_mr.context, VHCA_CMD_DEREG_MR, vmr->ibv_mr.handle);
  if (!ret) free(vmr);
  return ret;
}

void vhca_wait_events(pthread_mutex_t *mutex, pthread_cond_t *cond, const uint32_t *completed,
                      uint32_t reported) {
  pthread_mutex_lock(mutex);
  while (*completed != reported) pthread_cond_wait(cond, mutex);
  pthread_mutex_unlock(mutex);
}

/* A channel reaches us only from the preload shim: libibverbs' own
 * ibv_create_comp_channel cannot work on a vHCA context. uverbs also refuses
 * a channel of another context (ib_uverbs_lookup_comp_file). */
static int channel_write_fd(struct ibv_context *ibctx, struct ibv_comp_channel *channel) {
  if (channel->context != ibctx) return -1;
  const struct vhca_comp_channel *vch = (const struct vhca_comp_channel *)channel;
  if (vch->magic != VHCA_COMP_CHANNEL_MAGIC) return -1;
  return __atomic_load_n(&vch->write_fd, __ATOMIC_ACQUIRE); /* -1 once fabricd went away */
}

struct vhca_cq *vhca_open_cq(struct ibv_context *ibctx, int cqe, struct ibv_comp_channel *channel,
                             int comp_vector) {
  if (cqe < 1 || comp_vector < 0) {
    errno = EINVAL;
    return NULL;
  }
  int send[2] = {-1, -1}; /* the channel's write end and fabricd's own read end */
  if (channel && (send[0] = channel_write_fd(ibctx, channel)) < 0) {
    errno = EINVAL;
    return NULL;
  }
  if (channel && (send[1] = vhca_daemon_read_end(channel->fd)) < 0) return NULL;
  /* Allocated first: its address is the user_handle events carry. */
  struct vhca_cq *cq = calloc(1, sizeof(*cq));
  if (!cq) {
    if (send[1] >= 0) close(send[1]);
    errno = ENOMEM;
    return NULL;
  }
  pthread_spin_init(&cq->arm_lock, PTHREAD_PROCESS_PRIVATE);
  struct vhca_create_cq_req req = {.cqe = (uint32_t)cqe, .comp_vector = (uint32_t)comp_vector,
                                   .user_handle = (uintptr_t)&cq->vcq.cq,
                                   .has_channel = channel ? 1 : 0};
  struct vhca_create_cq_rsp rsp;
  int fd = -1;
  int ret = vhca_cmd_fds(to_vctx(ibctx), VHCA_CMD_CREATE_CQ, &req, sizeof(req), send,
                         channel ? 2 : 0, &rsp, sizeof(rsp), &fd, 1);
  if (send[1] >= 0) close(send[1]);
  if (ret) {
    free(cq);
    errno = ret;
    return NULL;
  }
  ret = fd < 0 ? EPROTO : vhca_ring_map(&cq->ring, fd, rsp.entries, sizeof(struct vhca_cqe));
  if (fd >= 0) close(fd);
  if (ret) {
    struct vhca_handle_req d = {.handle = rsp.cq_handle};
    struct vhca_destroy_cq_rsp dr;
    CMD(to_vctx(ibctx), VHCA_CMD_DESTROY_CQ, d, dr);
    free(cq);
    errno = ret;
    return NULL;
  }
  cq->vcq.cq.handle = rsp.cq_handle;
  cq->vcq.cq.cqe = (int)rsp.entries - 1;
  cq->vcq.cq.channel = channel; /* ibv_create_cq sets it too; go_fatal needs it now */
  vhca_track_cq(to_vctx(ibctx), cq);
  return cq;
}

static struct ibv_cq *vhca_create_cq(struct ibv_context *ibctx, int cqe,
                                     struct ibv_comp_channel *channel, int comp_vector) {
  struct vhca_cq *cq = vhca_open_cq(ibctx, cqe, channel, comp_vector);
  return cq ? &cq->vcq.cq : NULL; /* ibv_create_cq runs verbs_init_cq (mutex, cond, counters) */
}

static int resize_phase(struct ibv_cq *ibcq, uint32_t phase, uint32_t cqe, struct vhca_resize_cq_rsp *rsp,
                        int *fd) {
  struct vhca_resize_cq_req req = {.cq_handle = ibcq->handle, .cqe = cqe, .phase = phase};
  return vhca_cmd(to_vctx(ibcq->context), VHCA_CMD_RESIZE_CQ, &req, sizeof(req), rsp, sizeof(*rsp), fd, 1);
}

/* Both CQ locks are held throughout: no poll of this process reads the old
 * ring and no arm lands in it while the engine moves the unread CQEs and the
 * arm state over. Until COMMIT succeeds the old ring stays the CQ's, so any
 * failure (the new ring's fd dropped at RLIMIT_NOFILE, mmap refused) leaves
 * a working CQ of the old size. The consumer index (ring.local) stays: the
 * engine keeps the indices. */
static int vhca_resize_cq(struct ibv_cq *ibcq, int cqe) {
  if (cqe < 1) return EINVAL;
  struct vhca_cq *cq = to_vcq(ibcq);
  struct vhca_resize_cq_rsp rsp;
  struct vhca_ring fresh = {0};
  int fd = -1, nofd = -1;
  pthread_spin_lock(&cq->ring.lock);
  pthread_spin_lock(&cq->arm_lock);
  int ret = resize_phase(ibcq, VHCA_RESIZE_CQ_PREPARE, (uint32_t)cqe, &rsp, &fd);
  if (!ret) {
    ret = fd < 0 ? EPROTO : vhca_ring_map(&fresh, fd, rsp.entries, sizeof(struct vhca_cqe));
    if (ret) resize_phase(ibcq, VHCA_RESIZE_CQ_ABORT, 0, &rsp, &nofd);
  }
  if (fd >= 0) close(fd);
  if (!ret && (ret = resize_phase(ibcq, VHCA_RESIZE_CQ_COMMIT, 0, &rsp, &nofd))) vhca_ring_unmap(&fresh);
  if (!ret) {
    munmap(cq->ring.hdr, cq->ring.map_len);
    cq->ring.hdr = fresh.hdr;
    cq->ring.entries = fresh.entries;
    cq->ring.mask = fresh.mask;
    cq->ring.map_len = fresh.map_len;
    pthread_spin_destroy(&fresh.lock);
    ibcq->cqe = (int)rsp.entries - 1;
  }
  pthread_spin_unlock(&cq->arm_lock);
  pthread_spin_unlock(&cq->ring.lock);
  return ret;
}

static int vhca_destroy_cq(struct ibv_cq *ibcq) {
  struct vhca_handle_req req = {.handle = ibcq->handle};
  struct vhca_destroy_cq_rsp rsp;
  int ret = vhca_fail(CMD(to_vctx(ibcq->context), VHCA_CMD_DESTROY_CQ, req, rsp));
  if (ret) return ret;
  /* As ibv_cmd_destroy_cq: every event fabricd wrote must be acked first. */
  pthread_mutex_lock(&ibcq->mutex);
  while (ibcq->comp_events_completed != rsp.comp_events_reported ||
         ibcq->async_events_completed != rsp.async_events_reported)
    pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
  pthread_mutex_unlock(&ibcq->mutex);
  vhca_untrack_cq(to_vctx(ibcq->context), to_vcq(ibcq));
  vhca_ring_unmap(&to_vcq(ibcq)->ring);
  pthread_spin_destroy(&to_vcq(ibcq)->arm_lock);
  free(to_vcq(ibcq));
  return 0;
}

struct vhca_qp *vhca_open_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr, uint32_t create_flags) {
  switch (attr->qp_type) { /* types this device lacks: EOPNOTSUPP before any argument check */
    case IBV_QPT_RAW_PACKET:
    case IBV_QPT_XRC_SEND:
    case IBV_QPT_XRC_RECV:
    case IBV_QPT_DRIVER:
      errno = EOPNOTSUPP;
      return NULL;
    default:
      break;
  }
  if (!attr->send_cq || !attr->recv_cq) {
    errno = EINVAL;
    return NULL;
  }
  struct vhca_qp *qp = calloc(1, sizeof(*qp));
  if (!qp) {
    errno = ENOMEM;
    return NULL;
  }
  struct vhca_create_qp_req req = {
      .pd_handle = pd->handle,
      .send_cq_handle = attr->send_cq->handle,
      .recv_cq_handle = attr->recv_cq->handle,
      .srq_handle = attr->srq ? attr->srq->handle : 0,
      .qp_type = attr->qp_type,
      .sq_sig_all = attr->sq_sig_all ? 1u : 0u,
      .cap = attr->cap,
      .create_flags = create_flags,
      .user_handle = (uintptr_t)&qp->vqp.qp,
  };
  /* With an SRQ the RQ attributes are ignored, as mlx5 does. */
  if (attr->srq) req.cap.max_recv_wr = req.cap.max_recv_sge = 0;
  struct vhca_create_qp_rsp rsp;
  int fds[2] = {-1, -1};
  int ret = vhca_cmd(to_vctx(pd->context), VHCA_CMD_CREATE_QP, &req, sizeof(req), &rsp, sizeof(rsp), fds, 2);
  if (ret) {
    free(qp);
    errno = ret;
    return NULL;
  }
  if (fds[0] < 0 || (fds[1] < 0 && !attr->srq)) ret = EPROTO;
  if (!ret) ret = vhca_ring_map(&qp->sq, fds[0], rsp.sq_entries, sizeof(struct vhca_send_wqe));
  /* An SRQ QP may still get an (unused) RQ ring; it is never posted to. */
  if (!ret && fds[1] >= 0 && !attr->srq)
    ret = vhca_ring_map(&qp->rq, fds[1], rsp.rq_entries, sizeof(struct vhca_recv_wqe));
  if (fds[0] >= 0) close(fds[0]);
  if (fds[1] >= 0) close(fds[1]);
  if (ret) {
    vhca_ring_unmap(&qp->sq);
    free(qp);
    struct vhca_handle_req d = {.handle = rsp.qp_handle};
    struct vhca_destroy_qp_rsp dr;
    CMD(to_vctx(pd->context), VHCA_CMD_DESTROY_QP, d, dr);
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
  vhca_track_qp(to_vctx(pd->context), qp);
  return qp;
}

static struct ibv_qp *vhca_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr) {
  struct vhca_qp *qp = vhca_open_qp(pd, attr, 0);
  return qp ? &qp->vqp.qp : NULL;
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
  int ret = vhca_fail(CMD(to_vctx(ibqp->context), VHCA_CMD_DESTROY_QP, req, rsp));
  if (ret) return ret;
  vhca_wait_events(&ibqp->mutex, &ibqp->cond, &ibqp->events_completed, rsp.events_reported);
  struct vhca_qp *qp = to_vqp(ibqp);
  vhca_untrack_qp(to_vctx(ibqp->context), qp);
  vhca_ring_unmap(&qp->sq);
  vhca_ring_unmap(&qp->rq);
  pthread_mutex_destroy(&ibqp->mutex);
  pthread_cond_destroy(&ibqp->cond);
  free(qp);
  return 0;
}

static struct ibv_srq *vhca_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init) {
  struct vhca_srq *srq = calloc(1, sizeof(*srq));
  if (!srq) {
    errno = ENOMEM;
    return NULL;
  }
  struct vhca_create_srq_req req = {.pd_handle = pd->handle,
                                    .user_handle = (uintptr_t)&srq->ibv_srq,
                                    .attr = init->attr};
  struct vhca_create_srq_rsp rsp;
  int fd = -1;
  int ret = vhca_cmd(to_vctx(pd->context), VHCA_CMD_CREATE_SRQ, &req, sizeof(req), &rsp, sizeof(rsp), &fd, 1);
  if (ret) {
    free(srq);
    errno = ret;
    return NULL;
  }
  ret = fd < 0 ? EPROTO : vhca_ring_map(&srq->ring, fd, rsp.entries, sizeof(struct vhca_recv_wqe));
  if (fd >= 0) close(fd);
  if (ret) {
    free(srq);
    struct vhca_handle_req d = {.handle = rsp.srq_handle};
    struct vhca_destroy_qp_rsp dr;
    CMD(to_vctx(pd->context), VHCA_CMD_DESTROY_SRQ, d, dr);
    errno = ret;
    return NULL;
  }
  srq->ibv_srq.handle = rsp.srq_handle;
  srq->max_sge = rsp.attr.max_sge;
  init->attr = rsp.attr; /* what was granted, as mlx5 reports it */
  return &srq->ibv_srq;  /* ibv_create_srq fills context, pd, mutex, cond */
}

static int vhca_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask) {
  struct vhca_modify_srq_req req = {.srq_handle = srq->handle, .attr_mask = (uint32_t)attr_mask,
                                    .attr = *attr};
  struct vhca_empty_rsp rsp;
  return CMD(to_vctx(srq->context), VHCA_CMD_MODIFY_SRQ, req, rsp);
}

static int vhca_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr) {
  struct vhca_handle_req req = {.handle = srq->handle};
  struct vhca_query_srq_rsp rsp;
  int ret = CMD(to_vctx(srq->context), VHCA_CMD_QUERY_SRQ, req, rsp);
  if (!ret) *attr = rsp.attr;
  return ret;
}

static int vhca_destroy_srq(struct ibv_srq *ibsrq) {
  struct vhca_handle_req req = {.handle = ibsrq->handle};
  struct vhca_destroy_qp_rsp rsp;
  int ret = vhca_fail(CMD(to_vctx(ibsrq->context), VHCA_CMD_DESTROY_SRQ, req, rsp));
  if (ret) return ret;
  vhca_wait_events(&ibsrq->mutex, &ibsrq->cond, &ibsrq->events_completed, rsp.events_reported);
  vhca_ring_unmap(&to_vsrq(ibsrq)->ring);
  pthread_mutex_destroy(&ibsrq->mutex);
  pthread_cond_destroy(&ibsrq->cond);
  free(to_vsrq(ibsrq));
  return 0;
}

/* RoCE too: the engine resolves the destination by GID, so unlike a real
 * RoCE provider we need no neighbour (MAC) lookup here. */
static struct ibv_ah *vhca_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr) {
  struct vhca_create_ah_req req = {.pd_handle = pd->handle, .attr = *attr};
  struct vhca_create_ah_rsp rsp;
  int ret = CMD(to_vctx(pd->context), VHCA_CMD_CREATE_AH, req, rsp);
  if (ret) {
    errno = ret;
    return NULL;
  }
  struct vhca_ah *ah = calloc(1, sizeof(*ah));
  if (!ah) {
    destroy_handle(pd->context, VHCA_CMD_DESTROY_AH, rsp.ah_handle);
    errno = ENOMEM;
    return NULL;
  }
  ah->ibv_ah.handle = rsp.ah_handle;
  return &ah->ibv_ah; /* ibv_create_ah fills context and pd */
}

static int vhca_destroy_ah(struct ibv_ah *ah) {
  int ret = destroy_handle(ah->context, VHCA_CMD_DESTROY_AH, ah->handle);
  if (!ret) free(ah);
  return ret;
}

const struct verbs_context_ops vhca_ctx_ops = {
    .create_srq = vhca_create_srq,
    .modify_srq = vhca_modify_srq,
    .query_srq = vhca_query_srq,
    .destroy_srq = vhca_destroy_srq,
    .post_srq_recv = vhca_post_srq_recv,
    .create_ah = vhca_create_ah,
    .destroy_ah = vhca_destroy_ah,
    .req_notify_cq = vhca_req_notify_cq,
    .query_device_ex = vhca_query_device_ex,
    .query_rt_values = vhca_query_rt_values,
    .query_port = vhca_query_port,
    .alloc_pd = vhca_alloc_pd,
    .dealloc_pd = vhca_dealloc_pd,
    .reg_mr = vhca_reg_mr,
    .dereg_mr = vhca_dereg_mr,
    .rereg_mr = vhca_rereg_mr,
    .alloc_mw = vhca_alloc_mw,
    .dealloc_mw = vhca_dealloc_mw,
    .bind_mw = vhca_bind_mw,
    .attach_mcast = vhca_attach_mcast,
    .detach_mcast = vhca_detach_mcast,
    .create_cq = vhca_create_cq,
    .create_cq_ex = vhca_create_cq_ex,
    .destroy_cq = vhca_destroy_cq,
    .resize_cq = vhca_resize_cq,
    .poll_cq = vhca_poll_cq,
    .create_qp = vhca_create_qp,
    .create_qp_ex = vhca_create_qp_ex,
    .modify_qp = vhca_modify_qp,
    .query_qp = vhca_query_qp,
    .destroy_qp = vhca_destroy_qp,
    .post_send = vhca_post_send,
    .post_recv = vhca_post_recv,
    .free_context = vhca_free_context,
};
