// The engine context: its configuration clamped to the layouts, and the
// services every stage shares (async events, moving a QP to ERR).
#include "device/engine/engine.hpp"

namespace vf::engine {

namespace {

// The limits the engine's handle, key and ring layouts can represent.
HcaConfig clamped(HcaConfig cfg) {
  DeviceLimits& l = cfg.limits;
  if (l.max_qp > kMaxQps) l.max_qp = kMaxQps;
  if (l.max_mr > kMaxMrs) l.max_mr = kMaxMrs;
  if (l.max_mw > kMaxMws) l.max_mw = kMaxMws;
  if (l.max_qp_wr > (1u << 15)) l.max_qp_wr = 1u << 15;
  if (l.max_cqe > (1u << 22) - 1) l.max_cqe = (1u << 22) - 1;
  if (l.max_qp_rd_atom > 16) l.max_qp_rd_atom = 16;
  if (l.max_qp_init_rd_atom > 16) l.max_qp_init_rd_atom = 16;
  if (l.max_srq_wr > (1u << 15)) l.max_srq_wr = 1u << 15;
  if (l.max_srq_sge > VHCA_MAX_SGE) l.max_srq_sge = VHCA_MAX_SGE;
  // The fan-out gathers a group's members on the stack (mcast.cpp).
  if (l.max_mcast_qp_attach > kMaxMcastQpAttach) l.max_mcast_qp_attach = kMaxMcastQpAttach;
  if (cfg.sys_image_guid == 0) cfg.sys_image_guid = cfg.node_guid;
  return cfg;
}

}  // namespace

Engine::Engine(const HcaConfig& c, vf::Scheduler& s, dp::HostPort& port)
    : cfg(clamped(c)), sched(s), io(port) {
  objs.set_capacity(cfg.limits);
}

void Engine::async_event(Client* c, ibv_event_type type, uint32_t handle) {
  if (sink && c) sink->async_event(c->id, type, handle);
}

void Engine::async_qp_event(Qp& qp, ibv_event_type type) {
  ++qp.events_reported;
  async_event(qp.client, type, qp.handle);
}

void Engine::qp_to_error(Qp& qp, bool fatal_event) {
  if (qp.state == IBV_QPS_ERR) return;
  qp.state = IBV_QPS_ERR;
  sched.disarm(qp.retrans_timer);
  sched.disarm(qp.rnr_timer);
  qp.rnr_wait = false;
  if (fatal_event) async_qp_event(qp, IBV_EVENT_QP_FATAL);
  // The flush itself happens in poll(), bounded by its budget.
}

}  // namespace vf::engine
