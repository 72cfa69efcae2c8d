/* libvhca: a thin rdma-core provider. Verbs that create or change objects go
 * to fabricd over the device socket; posting and polling touch only the
 * shared rings, like a hardware HCA driver writing WQEs and ringing a doorbell. */
#ifndef VHCA_PROVIDER_H
#define VHCA_PROVIDER_H

#include <errno.h>
#include <pthread.h>
#include <sys/types.h>
#include <stdint.h>

#include "device/abi/vhca_abi.h"
#include "verbs_private.h"

#define VHCA_PFX "vhca: "

struct vhca_device {
  struct verbs_device vdev;
  char socket_path[108];
};

struct vhca_context {
  struct verbs_context vctx;
  int sock;               /* SEQPACKET to fabricd */
  pthread_mutex_t cmd_lock; /* one request in flight per context */
  uint32_t seq;
  int doorbell_fd;        /* eventfd the engine sleeps on */
  const struct vhca_engine_status *status; /* read-only mapping */
  int async_pipe[2];
  /* fatal.c: set (once) when fabricd went away; QPs and CQs to flush then */
  int fatal;
  pthread_mutex_t obj_lock; /* qps, cqs */
  struct vhca_qp *qps;
  struct vhca_cq *cqs;
  pthread_t watcher;
  int has_watcher;
  pid_t watcher_pid; /* the process the thread runs in */
  int watch_stop[2];
};

struct vhca_ring {
  struct vhca_ring_hdr *hdr;
  uint8_t *entries;
  uint32_t mask;
  uint32_t entry_size;
  uint32_t local; /* the index this side owns */
  size_t map_len;
  pthread_spinlock_t lock;
};

struct vhca_pd {
  struct ibv_pd ibv_pd;
};

struct vhca_mr {
  struct verbs_mr vmr;
};

struct vhca_cq {
  struct verbs_cq vcq;
  struct vhca_ring ring; /* engine produces, we consume */
  uint32_t arm_sn;       /* last value written to ring.hdr->arm_sn; under arm_lock */
  /* Arming has its own lock, so an app may arm between ibv_start_poll and
   * ibv_end_poll (which hold ring.lock), as on mlx5. */
  pthread_spinlock_t arm_lock;
  struct vhca_cq *next;  /* ctx->cqs */
  /* cq_ex.c, between start_poll and end_poll (under ring.lock): the CQE the
   * wc_read_* calls read, in the ring or a flush completion in `flushed`. */
  const struct vhca_cqe *cur;
  struct vhca_cqe flushed;
};

struct vhca_qp {
  struct verbs_qp vqp;
  struct vhca_ring sq;
  struct vhca_ring rq; /* unmapped (hdr NULL) when the QP receives from an SRQ */
  uint32_t max_send_sge, max_recv_sge, max_inline;
  int sq_sig_all;
  struct vhca_qp *next; /* ctx->qps */
  /* qp_ex.c, from wr_start to wr_complete/wr_abort (under sq.lock). */
  struct vhca_send_wqe *wr_cur; /* the WR being built, already in the ring */
  const struct vhca_wr_op *wr_op;
  uint32_t wr_first; /* sq.local at wr_start: where an abort rolls back to */
  int wr_err;        /* the first error of this batch; wr_complete returns it */
  int wr_has_ah;     /* a UD WR got its ibv_wr_set_ud_addr */
};

struct vhca_srq {
  struct ibv_srq ibv_srq;
  struct vhca_ring ring; /* recv WQEs, like an RQ */
  uint32_t max_sge;
};

struct vhca_ah {
  struct ibv_ah ibv_ah;
};

static inline struct vhca_context *to_vctx(struct ibv_context *ctx) {
  return (struct vhca_context *)((char *)ctx - offsetof(struct vhca_context, vctx.context));
}
static inline struct vhca_device *to_vdev(struct ibv_device *dev) {
  return (struct vhca_device *)dev;
}
/* A verb that fails returns its errno and leaves it in errno too (libibverbs
 * passes the return value on; an app may read either). */
static inline int vhca_fail(int ret) {
  if (ret) errno = ret;
  return ret;
}
static inline struct vhca_qp *to_vqp(struct ibv_qp *qp) { return (struct vhca_qp *)qp; }
static inline struct vhca_cq *to_vcq(struct ibv_cq *cq) { return (struct vhca_cq *)cq; }
static inline struct vhca_srq *to_vsrq(struct ibv_srq *srq) { return (struct vhca_srq *)srq; }

/* cmd.c: one request, one reply, optional fds in the reply. Returns 0 or a
 * positive errno (the daemon's status, or EIO when the daemon is gone).
 * Reply fds the daemon did not send are left at -1. */
int vhca_cmd(struct vhca_context *ctx, uint32_t cmd, void *req, size_t req_len, void *rsp,
             size_t rsp_len, int *fds, int nfds);
/* A BIND_MW WQE's fields: the window by handle, its region by L_Key (as
 * hardware names it), the window's new R_Key, range and rights. */
static inline void vhca_set_bind(struct vhca_send_wqe *w, const struct ibv_mw *mw, uint32_t rkey,
                                 const struct ibv_mw_bind_info *b) {
  w->rkey = rkey;
  w->remote_addr = b->addr;
  w->compare_add = b->length;
  w->bind.mw_handle = mw->handle;
  w->bind.mr_lkey = b->mr ? b->mr->lkey : 0;
  w->bind.access = (uint32_t)b->mw_access_flags;
}

/* One fixed-size request and reply, no fds. */
#define CMD(ctx, code, req, rsp) vhca_cmd(ctx, code, &(req), sizeof(req), &(rsp), sizeof(rsp), NULL, 0)
/* The same, sending up to three fds with the request by SCM_RIGHTS. */
int vhca_cmd_fds(struct vhca_context *ctx, uint32_t cmd, void *req, size_t req_len,
                 const int *send_fds, int nsend, void *rsp, size_t rsp_len, int *fds, int nfds);
int vhca_connect(const char *path);
/* A read end of the pipe behind `read_fd` that is a file description of its
 * own (non-blocking, so the app's blocking reads stay blocking): fabricd takes
 * a destroyed object's unread events back through it. -1 with errno. */
int vhca_daemon_read_end(int read_fd);

/* fatal.c: the device after fabricd went away */
int vhca_start_watcher(struct vhca_context *ctx);
void vhca_stop_watcher(struct vhca_context *ctx);
static inline int vhca_is_fatal(struct vhca_context *ctx) {
  return __atomic_load_n(&ctx->fatal, __ATOMIC_ACQUIRE);
}
int vhca_flush_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
void vhca_track_qp(struct vhca_context *ctx, struct vhca_qp *qp);
void vhca_untrack_qp(struct vhca_context *ctx, struct vhca_qp *qp);
void vhca_track_cq(struct vhca_context *ctx, struct vhca_cq *cq);
void vhca_untrack_cq(struct vhca_context *ctx, struct vhca_cq *cq);
void vhca_close_channel_write_end(struct ibv_comp_channel *channel);

/* ring.c */
int vhca_ring_map(struct vhca_ring *ring, int fd, uint32_t entries, uint32_t entry_size);
void vhca_ring_unmap(struct vhca_ring *ring);
void vhca_ring_doorbell(struct vhca_context *ctx);

/* verbs.c / datapath.c / cq_ex.c */
struct vhca_cq *vhca_open_cq(struct ibv_context *ibctx, int cqe, struct ibv_comp_channel *channel,
                             int comp_vector);
struct ibv_cq_ex *vhca_create_cq_ex(struct ibv_context *ibctx, struct ibv_cq_init_attr_ex *attr);
/* create_flags: IBV_QP_CREATE_* (the engine takes BLOCK_SELF_MCAST_LB only). */
struct vhca_qp *vhca_open_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr, uint32_t create_flags);
struct ibv_qp *vhca_create_qp_ex(struct ibv_context *ibctx, struct ibv_qp_init_attr_ex *attr);
extern const struct verbs_context_ops vhca_ctx_ops;
void vhca_free_context(struct ibv_context *ibctx);
int vhca_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
struct ibv_mw *vhca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int vhca_dealloc_mw(struct ibv_mw *mw);
int vhca_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
/* mcast.c */
int vhca_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int vhca_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int vhca_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int vhca_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int vhca_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int vhca_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
/* Blocks until the app acknowledged `reported` events (ibv_ack_*_events), as
 * uverbs does on destroy, so no event can name a freed object. */
void vhca_wait_events(pthread_mutex_t *mutex, pthread_cond_t *cond, const uint32_t *completed,
                      uint32_t reported);

#endif
