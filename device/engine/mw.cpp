// Memory windows (IBA 10.6.7): allocation, the bind and invalidate work
// requests the requester executes in SQ order, remote invalidation (SEND with
// Invalidate), and what a remote request's R_Key reaches -- a region or a
// window onto one.
// Window keys are 1 << 31 | tag << 24 | slot << 8 | key byte: bit 31 keeps
// them apart from region keys (whose tags are below 0x8000), the slot gives
// the window, and the low byte is the consumer's key (ibv_inc_rkey), which
// every bind changes; the 7-bit tag is fresh per allocation, so a stale key
// does not name the next window that reuses the slot.
#include <cerrno>

#include "device/engine/hca_impl.hpp"

namespace vf::engine {

namespace {
constexpr uint32_t kWindowAccess =
    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED;

void unbind(Mw& w) {
  if (w.mr) --w.mr->windows;
  if (w.qp) --w.qp->windows;
  w.mr = nullptr;
  w.qp = nullptr;
  w.access = 0;
  w.va = w.length = w.mr_iova = 0;
}

// The IBA's bind checks (C10-72..75, o10-36.2.2, o10-37.2.30/40), as rxe
// makes them; the window is not touched when one fails.
bool bind_allowed(const Qp& qp, const Mw& w, const Mr* mr, const vhca_send_wqe& wqe) {
  const uint32_t access = wqe.bind.access;
  const uint64_t addr = wqe.remote_addr, len = wqe.compare_add;
  // Only the key byte of the WR's R_Key is the consumer's (bind_mw() keeps
  // the window's index and tag), so any value binds, as on mlx5.
  if (w.pd != qp.pd || (access & ~kWindowAccess)) return false;
  if (w.type == IBV_MW_TYPE_1) {
    if (access & IBV_ACCESS_ZERO_BASED) return false;  // type 1 windows are VA-based
    if (len == 0) return true;                          // unbinds
  } else if (w.mr || !mr || len == 0) {
    return false;  // a type 2 window is bound once, then invalidated
  }
  if (!mr || mr->pd != qp.pd || !(mr->access & IBV_ACCESS_MW_BIND) || (mr->access & IBV_ACCESS_ZERO_BASED))
    return false;
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(mr->access & IBV_ACCESS_LOCAL_WRITE))
    return false;
  return mr->contains(addr, len);
}

}  // namespace

int Hca::Impl::alloc_mw(ClientId id, const vhca_alloc_mw_req& req, vhca_alloc_mw_rsp& rsp) {
  Pd* pd = eng_.owned<Pd>(id, req.pd_handle);
  if (!pd) return EINVAL;
  if (req.type != IBV_MW_TYPE_1 && req.type != IBV_MW_TYPE_2) return EINVAL;
  auto mw = std::make_unique<Mw>();
  mw->client = pd->client;
  mw->pd = pd;
  mw->type = uint8_t(req.type);
  Mw* raw = eng_.objs.adopt(std::move(mw));
  if (!raw) return ENOMEM;
  const uint32_t h = raw->handle;
  if (mw_last_keys_.size() <= h) mw_last_keys_.resize(size_t(h) + 1, 0);
  uint32_t key;
  do {
    key = 1u << 31 | (random32() & 0x7F) << 24 | h << 8 | (random32() & 0xFF);
  } while ((key >> 24) == (mw_last_keys_[h] >> 24));
  mw_last_keys_[h] = key;
  raw->rkey = key;
  rsp.mw_handle = h;
  rsp.rkey = key;
  return 0;
}

int Hca::Impl::dealloc_mw(ClientId id, const vhca_handle_req& req) {
  Mw* mw = eng_.owned<Mw>(id, req.handle);
  if (!mw) return ENOENT;
  // Payloads accepted through the window land first, as for dereg_mr.
  place_.flush();
  eng_.objs.release(*mw);
  return 0;
}

void Hca::Impl::invalidate_windows_of(Qp& qp) {
  if (!qp.windows) return;
  eng_.objs.of<Mw>().for_each([&](Mw& w) {
    if (w.qp == &qp) unbind(w);
  });
}

ibv_wc_status Engine::bind_mw(Qp& qp, const vhca_send_wqe& wqe) {
  Mw* w = objs.owned<Mw>(qp.client, wqe.bind.mw_handle);
  // The region by its L_Key, as hardware names it: another context's key
  // (or a forged one) resolves to nothing of this client.
  Mr* mr = wqe.bind.mr_lkey ? mr_by_lkey(wqe.bind.mr_lkey) : nullptr;
  if (mr && mr->client != qp.client) mr = nullptr;
  if (!w || (wqe.bind.mr_lkey && !mr) || !bind_allowed(qp, *w, mr, wqe)) return IBV_WC_MW_BIND_ERR;
  unbind(*w);
  w->rkey = (w->rkey & ~0xFFu) | (wqe.rkey & 0xFF);
  const uint64_t len = wqe.compare_add;
  if (len == 0) return IBV_WC_SUCCESS;  // a type 1 window, now without memory
  w->mr = mr;
  ++mr->windows;
  if (w->type == IBV_MW_TYPE_2) {
    w->qp = &qp;
    ++qp.windows;
  }
  w->access = wqe.bind.access;
  w->length = len;
  w->mr_iova = wqe.remote_addr;
  w->va = (w->access & IBV_ACCESS_ZERO_BASED) ? 0 : wqe.remote_addr;
  return IBV_WC_SUCCESS;
}

bool Engine::invalidate(Qp& qp, uint32_t rkey, bool remote) {
  Mw* w = mw_by_rkey(rkey);
  // Only bound type 2 windows of the QP's PD (o10-37.2.26); a remote
  // invalidation only on the QP the window is bound to (2B). Regions cannot
  // be invalidated: they are not fast-registered.
  if (!w || w->type != IBV_MW_TYPE_2 || !w->mr || w->pd != qp.pd || (remote && w->qp != &qp)) return false;
  unbind(*w);
  return true;
}

Engine::RemoteMem Engine::remote_mem(const Qp& qp, uint32_t rkey, uint64_t va, uint64_t len,
                                     uint32_t access) const {
  if (!is_mw_key(rkey)) {
    const Mr* mr = mr_by_rkey(rkey);
    if (!mr || mr->pd != qp.pd || !(mr->access & access) || !mr->contains(va, len)) return {};
    return {mr->client, mr->host(va)};
  }
  const Mw* w = mw_by_rkey(rkey);
  if (!w || !w->mr || w->pd != qp.pd || (w->qp && w->qp != &qp) || !(w->access & access) ||
      !w->contains(va, len))
    return {};
  const uint64_t a = w->mr_addr(va);
  if (!w->mr->contains(a, len)) return {};  // the region shrank under it (rereg refuses that)
  return {w->mr->client, w->mr->host(a)};
}

}  // namespace vf::engine
