// Shared receive queues: create / modify / query / destroy. The ring holds
// vhca_recv_wqe like an RQ (sealed memfd, power-of-two entries); QPs created
// with its handle take WQEs from it in order (recv_queue.cpp).
#include <cerrno>

#include "device/engine/hca_impl.hpp"

namespace vf::engine {

int Hca::Impl::create_srq(ClientId id, const vhca_create_srq_req& req, vhca_create_srq_rsp& rsp,
                          Fd& ring_fd) {
  ring_fd.fd = -1;
  Pd* pd = eng_.owned<Pd>(id, req.pd_handle);
  if (!pd) return EINVAL;
  const ibv_srq_attr a = req.attr;
  const DeviceLimits& l = eng_.cfg.limits;
  // srq_limit is ignored at creation (ibv_create_srq(3)): the SRQ starts
  // disarmed. 0 WRs / SGEs are rounded up to 1, as rxe does.
  if (a.max_wr > l.max_srq_wr || a.max_sge > l.max_srq_sge || a.max_sge > VHCA_MAX_SGE)
    return EINVAL;
  const uint32_t entries = round_up_pow2(a.max_wr ? a.max_wr : 1);
  auto obj = std::make_unique<Srq>();
  obj->client = pd->client;
  obj->pd = pd;
  obj->max_wr = entries;
  obj->max_sge = a.max_sge ? a.max_sge : 1;
  Srq* raw = eng_.objs.adopt(std::move(obj));
  if (!raw) return ENOMEM;
  if (int err = raw->ring.create("vhca-srq", entries, sizeof(vhca_recv_wqe), ring_fd.fd)) {
    eng_.objs.release(*raw);
    return err;
  }
  rsp.srq_handle = raw->handle;
  rsp.entries = entries;
  rsp.attr.max_wr = raw->max_wr;
  rsp.attr.max_sge = raw->max_sge;
  rsp.attr.srq_limit = 0;
  return 0;
}

int Hca::Impl::modify_srq(ClientId id, const vhca_modify_srq_req& req) {
  Srq* s = eng_.owned<Srq>(id, req.srq_handle);
  if (!s) return EINVAL;
  const uint32_t mask = req.attr_mask;
  // Resizing is not supported (mlx5 refuses IBV_SRQ_MAX_WR with EINVAL too).
  if (mask & ~uint32_t(IBV_SRQ_LIMIT)) return EINVAL;
  if (mask & IBV_SRQ_LIMIT) {
    const uint32_t limit = req.attr.srq_limit;
    if (limit > s->max_wr) return EINVAL;
    place_.flush();  // the count the limit is compared with is the one after placement
    s->limit = limit;
    s->armed = limit != 0;  // 0 disarms
  }
  return 0;
}

int Hca::Impl::query_srq(ClientId id, const vhca_handle_req& req, vhca_query_srq_rsp& rsp) {
  Srq* s = eng_.owned<Srq>(id, req.handle);
  if (!s) return EINVAL;
  place_.flush();
  rsp.attr.max_wr = s->max_wr;
  rsp.attr.max_sge = s->max_sge;
  rsp.attr.srq_limit = s->armed ? s->limit : 0;  // 0 once the event disarmed it (rxe)
  return 0;
}

int Hca::Impl::destroy_srq(ClientId id, const vhca_handle_req& req, vhca_destroy_qp_rsp& rsp) {
  Srq* s = eng_.owned<Srq>(id, req.handle);
  if (!s) return ENOENT;
  if (s->users) return EBUSY;
  rsp.events_reported = s->events_reported;
  rsp.reserved = 0;
  eng_.objs.release(*s);
  return 0;
}

int Hca::create_srq(ClientId id, const vhca_create_srq_req& req, vhca_create_srq_rsp& rsp, Fd& fd) {
  return impl_->create_srq(id, req, rsp, fd);
}
int Hca::modify_srq(ClientId id, const vhca_modify_srq_req& req) { return impl_->modify_srq(id, req); }
int Hca::query_srq(ClientId id, const vhca_handle_req& req, vhca_query_srq_rsp& rsp) {
  return impl_->query_srq(id, req, rsp);
}
int Hca::destroy_srq(ClientId id, const vhca_handle_req& req) {
  vhca_destroy_qp_rsp rsp{};
  return impl_->destroy_srq(id, req, rsp);
}
int Hca::destroy_srq(ClientId id, const vhca_handle_req& req, vhca_destroy_qp_rsp& rsp) {
  return impl_->destroy_srq(id, req, rsp);
}

}  // namespace vf::engine
