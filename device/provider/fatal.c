/* When fabricd goes away: a fatal device, as an app sees one on hardware.
 *
 * A watcher thread per context waits (poll, no CPU) for the device socket to
 * hang up -- fabricd killed, stopped, or dropping this client. Then:
 *  - the context is fatal; poll_cq, once the CQEs fabricd wrote are taken,
 *    completes every outstanding send and receive WR of the CQ's QPs with
 *    IBV_WC_WR_FLUSH_ERR (as the kernel's mlx5 and rxe flush on error);
 *  - posts still succeed, as mlx5's do after a fatal error, and flush on the
 *    next poll; the provider takes over the rings' consumer indices, since
 *    nothing else will ever advance them;
 *  - every completion channel of the context loses its last write end, so a
 *    thread blocked in ibv_get_cq_event wakes with an error, as uverbs wakes
 *    it with EIO; the async fd (write end only in fabricd) reads EOF after
 *    the IBV_EVENT_DEVICE_FATAL an orderly stop writes first.
 * Every verb that needs fabricd then fails with EIO (cmd.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "device/abi/vhca_comp_channel.h"
#include "device/abi/vhca_wr_ops.h"
#include "vhca.h"

static enum ibv_wc_opcode send_wc_opcode(uint8_t opcode) {
  const struct vhca_wr_op *op = vhca_wr_op_info(opcode);
  return op ? (enum ibv_wc_opcode)op->wc_opcode : IBV_WC_SEND;
}

static void flush_wc(struct ibv_wc *wc, uint64_t wr_id, enum ibv_wc_opcode op, uint32_t qp_num) {
  memset(wc, 0, sizeof(*wc));
  wc->wr_id = wr_id;
  wc->status = IBV_WC_WR_FLUSH_ERR;
  wc->opcode = op;
  wc->qp_num = qp_num;
}

/* Flushes up to `ne` WRs of one ring, oldest first, and retires their slots. */
static int flush_ring(struct vhca_ring *r, int is_send, uint32_t qp_num, int ne, struct ibv_wc *wc) {
  if (!r->hdr) return 0;
  int n = 0;
  pthread_spin_lock(&r->lock);
  uint32_t cons = __atomic_load_n(&r->hdr->consumer, __ATOMIC_ACQUIRE);
  for (; n < ne && cons != r->local; cons++, n++) {
    const uint8_t *slot = r->entries + (size_t)(cons & r->mask) * r->entry_size;
    if (is_send) {
      const struct vhca_send_wqe *w = (const struct vhca_send_wqe *)slot;
      flush_wc(&wc[n], w->wr_id, send_wc_opcode(w->opcode), qp_num);
    } else {
      flush_wc(&wc[n], ((const struct vhca_recv_wqe *)slot)->wr_id, IBV_WC_RECV, qp_num);
    }
  }
  if (n) __atomic_store_n(&r->hdr->consumer, cons, __ATOMIC_RELEASE);
  pthread_spin_unlock(&r->lock);
  return n;
}

int vhca_flush_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc) {
  struct vhca_context *ctx = to_vctx(cq->context);
  int n = 0;
  pthread_mutex_lock(&ctx->obj_lock);
  for (struct vhca_qp *qp = ctx->qps; qp && n < ne; qp = qp->next) {
    const uint32_t qpn = qp->vqp.qp.qp_num;
    if (qp->vqp.qp.send_cq == cq) n += flush_ring(&qp->sq, 1, qpn, ne - n, wc + n);
    if (qp->vqp.qp.recv_cq == cq && n < ne) n += flush_ring(&qp->rq, 0, qpn, ne - n, wc + n);
  }
  pthread_mutex_unlock(&ctx->obj_lock);
  return n;
}

void vhca_track_qp(struct vhca_context *ctx, struct vhca_qp *qp) {
  pthread_mutex_lock(&ctx->obj_lock);
  qp->next = ctx->qps;
  ctx->qps = qp;
  pthread_mutex_unlock(&ctx->obj_lock);
}

void vhca_untrack_qp(struct vhca_context *ctx, struct vhca_qp *qp) {
  pthread_mutex_lock(&ctx->obj_lock);
  for (struct vhca_qp **p = &ctx->qps; *p; p = &(*p)->next)
    if (*p == qp) {
      *p = qp->next;
      break;
    }
  pthread_mutex_unlock(&ctx->obj_lock);
}

void vhca_track_cq(struct vhca_context *ctx, struct vhca_cq *cq) {
  pthread_mutex_lock(&ctx->obj_lock);
  cq->next = ctx->cqs;
  ctx->cqs = cq;
  pthread_mutex_unlock(&ctx->obj_lock);
}

void vhca_untrack_cq(struct vhca_context *ctx, struct vhca_cq *cq) {
  pthread_mutex_lock(&ctx->obj_lock);
  for (struct vhca_cq **p = &ctx->cqs; *p; p = &(*p)->next)
    if (*p == cq) {
      *p = cq->next;
      break;
    }
  pthread_mutex_unlock(&ctx->obj_lock);
}

/* The shim and we share the channel's write end; whoever takes it closes it. */
void vhca_close_channel_write_end(struct ibv_comp_channel *channel) {
  struct vhca_comp_channel *vch = (struct vhca_comp_channel *)channel;
  if (vch->magic != VHCA_COMP_CHANNEL_MAGIC) return;
  int fd = __atomic_exchange_n(&vch->write_fd, -1, __ATOMIC_ACQ_REL);
  if (fd >= 0) close(fd);
}

static void go_fatal(struct vhca_context *ctx) {
  __atomic_store_n(&ctx->fatal, 1, __ATOMIC_RELEASE);
  pthread_mutex_lock(&ctx->obj_lock);
  for (struct vhca_cq *cq = ctx->cqs; cq; cq = cq->next)
    if (cq->vcq.cq.channel) vhca_close_channel_write_end(cq->vcq.cq.channel);
  pthread_mutex_unlock(&ctx->obj_lock);
}

static void *watch(void *arg) {
  struct vhca_context *ctx = arg;
  struct pollfd p[2] = {{ctx->sock, POLLRDHUP, 0}, {ctx->watch_stop[0], POLLIN, 0}};
  for (;;) {
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return NULL;
    }
    if (p[1].revents) return NULL; /* the context is being freed */
    if (p[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
      go_fatal(ctx);
      return NULL;
    }
  }
}

int vhca_start_watcher(struct vhca_context *ctx) {
  if (pipe2(ctx->watch_stop, O_CLOEXEC)) return errno;
  /* No signal of the app's may land on our thread. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int ret = pthread_create(&ctx->watcher, NULL, watch, ctx);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (ret) return ret;
  ctx->has_watcher = 1;
  ctx->watcher_pid = getpid();
  return 0;
}

void vhca_stop_watcher(struct vhca_context *ctx) {
  /* A forked child has the context but not the thread: nothing to join. */
  if (ctx->has_watcher && ctx->watcher_pid == getpid()) {
    (void)!write(ctx->watch_stop[1], "x", 1);
    pthread_join(ctx->watcher, NULL);
  }
  ctx->has_watcher = 0;
  for (int i = 0; i < 2; i++)
    if (ctx->watch_stop[i] >= 0) close(ctx->watch_stop[i]);
  ctx->watch_stop[0] = ctx->watch_stop[1] = -1;
}
