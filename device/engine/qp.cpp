// QP objects: create (rings, shadow, QPN), query, destroy.
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "device/engine/hca_impl.hpp"

namespace vf::engine {

int Hca::Impl::create_qp(ClientId id, const vhca_create_qp_req& req, vhca_create_qp_rsp& rsp,
                         Fd& sq_fd, Fd& rq_fd) {
  sq_fd.fd = rq_fd.fd = -1;
  Client* c = eng_.client(id);
  if (!c) return EINVAL;
  Pd* pd = eng_.objs.owned<Pd>(c, req.pd_handle);
  Cq* scq = eng_.objs.owned<Cq>(c, req.send_cq_handle);
  Cq* rcq = eng_.objs.owned<Cq>(c, req.recv_cq_handle);
  if (!pd || !scq || !rcq) return EINVAL;
  // Any QP type may use an SRQ (the check is type-agnostic); it may be of
  // another PD (its own PD governs its WQEs' memory).
  Srq* srq = nullptr;
  if (req.srq_handle != 0 && !(srq = eng_.objs.owned<Srq>(c, req.srq_handle))) return EINVAL;
  ibv_qp_type type;
  switch (req.qp_type) {
    case IBV_QPT_RC: type = IBV_QPT_RC; break;
    case IBV_QPT_UC: type = IBV_QPT_UC; break;
    case IBV_QPT_UD: type = IBV_QPT_UD; break;
    // Real QP types this device does not have (mlx5 has them): not a bad argument.
    case IBV_QPT_RAW_PACKET:
    case IBV_QPT_XRC_SEND:
    case IBV_QPT_XRC_RECV:
    case IBV_QPT_DRIVER: return EOPNOTSUPP;
    default: return EINVAL;
  }
  // The one create flag offered: multicast loopback blocked for the QP's own
  // datagrams (mlx5's BLOCK_SELF_MCAST_LB); any other is a feature we lack.
  if (req.create_flags & ~uint32_t(IBV_QP_CREATE_BLOCK_SELF_MCAST_LB)) return EOPNOTSUPP;
  ibv_qp_cap cap = req.cap;
  const DeviceLimits& l = eng_.cfg.limits;
  // With an SRQ the receive caps are ignored (as the kernel does).
  if (srq) cap.max_recv_wr = cap.max_recv_sge = 0;
  if (cap.max_send_wr > l.max_qp_wr || cap.max_recv_wr > l.max_qp_wr ||
      cap.max_send_sge > VHCA_MAX_SGE || cap.max_recv_sge > VHCA_MAX_SGE ||
      cap.max_inline_data > VHCA_MAX_INLINE)
    return EINVAL;
  if (eng_.objs.of<Qp>().full()) return ENOMEM;  // before two rings are made

  const uint32_t sq_entries = round_up_pow2(cap.max_send_wr ? cap.max_send_wr : 1);
  // An SRQ QP still gets an RQ ring -- one entry, never read -- because the
  // reply always carries two fds; its granted max_recv_wr/sge are 0.
  const uint32_t rq_entries = round_up_pow2(cap.max_recv_wr ? cap.max_recv_wr : 1);
  auto qp = std::make_unique<Qp>();
  int sfd = -1, rfd = -1;
  if (int err = qp->sq.create("vhca-sq", sq_entries, sizeof(vhca_send_wqe), sfd)) return err;
  if (int err = qp->rq.create("vhca-rq", rq_entries, sizeof(vhca_recv_wqe), rfd)) {
    close(sfd);
    return err;
  }
  // Default-initialised: the pages are only touched as WQEs are fetched.
  qp->swqe.reset(new (std::nothrow) SendWqe[sq_entries]);
  qp->completer = &comp_;
  qp->client = c;
  qp->pd = pd;
  qp->scq = scq;
  qp->rcq = rcq;
  qp->type = type;
  qp->srq = srq;
  qp->sq_sig_all = req.sq_sig_all != 0;
  qp->block_self_mcast_lb = req.create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
  qp->cap.max_send_wr = sq_entries;
  qp->cap.max_recv_wr = srq ? 0 : rq_entries;
  qp->cap.max_send_sge = cap.max_send_sge ? cap.max_send_sge : 1;
  qp->cap.max_recv_sge = srq ? 0 : cap.max_recv_sge ? cap.max_recv_sge : 1;
  qp->cap.max_inline_data = cap.max_inline_data;
  Qp* raw = qp->swqe ? eng_.objs.adopt(std::move(qp)) : nullptr;
  if (!raw) {
    close(sfd);
    close(rfd);
    return ENOMEM;
  }
  const uint32_t h = raw->handle;
  uint8_t& gen = qp_gen_[h];
  gen = uint8_t(gen >= 254 ? 1 : gen + 1);
  raw->qpn = uint32_t(gen) << 16 | h;
  raw->state = IBV_QPS_RESET;
  qp_reset_state(*raw);
  raw->active_index = active_.size();
  active_.push_back(raw);

  sq_fd.fd = sfd;
  rq_fd.fd = rfd;
  rsp.qp_handle = h;
  rsp.qp_num = raw->qpn;
  rsp.sq_entries = sq_entries;
  rsp.rq_entries = rq_entries;
  rsp.cap = raw->cap;
  return 0;
}

void Hca::Impl::destroy_obj(Qp& qp) {
  eng_.sched.disarm(qp.retrans_timer);
  eng_.sched.disarm(qp.pace_timer);
  eng_.sched.disarm(qp.rnr_timer);
  resp_.forget(qp);
  invalidate_windows_of(qp);
  eng_.mcast.detach_all(qp);  // its context is going: uverbs detaches
  const size_t i = qp.active_index;
  if (i < active_.size() && active_[i] == &qp) {
    active_[i] = active_.back();
    active_[i]->active_index = i;
    active_.pop_back();
  }
  eng_.objs.release(qp);
}

int Hca::Impl::destroy_qp(ClientId id, const vhca_handle_req& req, vhca_destroy_qp_rsp& rsp) {
  Qp* qp = eng_.owned<Qp>(id, req.handle);
  if (!qp) return ENOENT;
  if (qp->mcast_attached) return EBUSY;  // uverbs: detach first
  place_.flush();  // the queue may point at it; events_reported counts what placing raises
  rsp.events_reported = qp->events_reported;
  rsp.reserved = 0;
  destroy_obj(*qp);
  return 0;
}

int Hca::Impl::query_qp(ClientId id, const vhca_query_qp_req& req, vhca_query_qp_rsp& rsp) {
  Qp* qp = eng_.owned<Qp>(id, req.qp_handle);
  if (!qp) return EINVAL;
  place_.flush();  // report the state after every payload that arrived is placed
  // Like drivers, every attribute is returned whatever the mask asks for.
  rsp.attr = qp->attr;
  rsp.attr.qp_state = qp->state;
  rsp.attr.cur_qp_state = qp->state;
  rsp.attr.cap = qp->cap;
  rsp.attr.sq_draining = qp->state == IBV_QPS_SQD && !qp->sq_drained_reported;
  rsp.init.cap = qp->cap;
  rsp.init.sq_sig_all = qp->sq_sig_all;
  rsp.init.qp_type = qp->type;
  return 0;
}

}  // namespace vf::engine
