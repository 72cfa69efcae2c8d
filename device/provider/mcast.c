/* UD multicast: the engine keeps the groups and checks everything (QP type,
 * multicast GID, MLID on InfiniBand), so these only carry the verb over. */
#include <string.h>

#include "vhca.h"

static int mcast_cmd(struct ibv_qp *qp, uint32_t cmd, const union ibv_gid *gid, uint16_t lid) {
  struct vhca_mcast_req req = {.qp_handle = qp->handle, .lid = lid};
  memcpy(req.gid, gid->raw, sizeof(req.gid));
  struct vhca_empty_rsp rsp;
  return CMD(to_vctx(qp->context), cmd, req, rsp);
}

int vhca_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid) {
  return mcast_cmd(qp, VHCA_CMD_ATTACH_MCAST, gid, lid);
}

int vhca_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid) {
  return mcast_cmd(qp, VHCA_CMD_DETACH_MCAST, gid, lid);
}
