/* Memory windows: allocation here, binding and invalidation as work requests
 * through the SQ (datapath.c, qp_ex.c), which the engine executes in order.
 * ibv_bind_mw is a type 1 bind posted like mlx5's: a BIND_MW WR with the next
 * key byte, the window's rkey updated once the WR is posted. */
#include <errno.h>
#include <stdlib.h>

#include "vhca.h"

struct ibv_mw *vhca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type) {
  struct vhca_alloc_mw_req req = {.pd_handle = pd->handle, .type = (uint32_t)type};
  struct vhca_alloc_mw_rsp rsp;
  int ret = CMD(to_vctx(pd->context), VHCA_CMD_ALLOC_MW, req, rsp);
  if (ret) {
    errno = ret;
    return NULL;
  }
  struct ibv_mw *mw = calloc(1, sizeof(*mw));
  if (!mw) {
    struct vhca_handle_req d = {.handle = rsp.mw_handle};
    struct vhca_empty_rsp e;
    CMD(to_vctx(pd->context), VHCA_CMD_DEALLOC_MW, d, e);
    errno = ENOMEM;
    return NULL;
  }
  mw->context = pd->context;
  mw->pd = pd;
  mw->rkey = rsp.rkey;
  mw->handle = rsp.mw_handle;
  mw->type = type;
  return mw;
}

int vhca_dealloc_mw(struct ibv_mw *mw) {
  struct vhca_handle_req req = {.handle = mw->handle};
  struct vhca_empty_rsp rsp;
  int ret = vhca_fail(CMD(to_vctx(mw->context), VHCA_CMD_DEALLOC_MW, req, rsp));
  if (!ret) free(mw);
  return ret;
}

/* libibverbs has checked the type, an address without a region and the
 * region's PD (EPERM). Type 1 windows are never zero-based (IBA o10-36.2.2;
 * mlx5 refuses it here too). */
int vhca_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind) {
  if (mw_bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED) return EINVAL;
  struct ibv_send_wr wr = {.wr_id = mw_bind->wr_id,
                           .opcode = IBV_WR_BIND_MW,
                           .send_flags = mw_bind->send_flags};
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
  wr.bind_mw.bind_info = mw_bind->bind_info;
  struct ibv_send_wr *bad;
  int ret = vhca_post_send(qp, &wr, &bad);
  if (ret) return ret;
  mw->rkey = wr.bind_mw.rkey;
  return 0;
}
