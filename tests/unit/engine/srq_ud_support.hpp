// Test-side helpers for SRQs, address handles and UD QPs, in the style of the
// harness's App: slow-path structs straight to the engine, rings mapped and
// written like the provider does.
#pragma once

#include "tests/unit/engine/harness.hpp"

namespace vf::engine::test {

struct AppSrq {
  uint32_t handle = 0;
  MappedRing ring;
  uint32_t prod = 0;
  vhca_create_srq_rsp rsp{};
};

inline int create_srq(App& app, uint32_t pd, uint32_t max_wr, uint32_t max_sge, AppSrq& s,
                      uint32_t limit = 0) {
  vhca_create_srq_req q{};
  q.pd_handle = pd;
  q.attr.max_wr = max_wr;
  q.attr.max_sge = max_sge;
  q.attr.srq_limit = limit;
  Fd fd;
  const int st = app.hca().create_srq(app.id(), q, s.rsp, fd);
  if (st) {
    EXPECT_EQ(fd.fd, -1);
    return st;
  }
  s.handle = s.rsp.srq_handle;
  s.ring.map(fd.fd, s.rsp.entries, sizeof(vhca_recv_wqe));
  return 0;
}

inline void post_srq(AppSrq& s, const vhca_recv_wqe& w) {
  std::memcpy(s.ring.slot(s.prod), &w, sizeof(w));
  __atomic_store_n(&s.ring.hdr()->producer, ++s.prod, __ATOMIC_RELEASE);
}
inline uint32_t srq_consumer(const AppSrq& s) {
  return __atomic_load_n(&s.ring.hdr()->consumer, __ATOMIC_ACQUIRE);
}

inline int modify_srq(App& app, const AppSrq& s, uint32_t mask, uint32_t max_wr, uint32_t limit) {
  vhca_modify_srq_req q{};
  q.srq_handle = s.handle;
  q.attr_mask = mask;
  q.attr.max_wr = max_wr;
  q.attr.srq_limit = limit;
  return app.hca().modify_srq(app.id(), q);
}

inline ibv_srq_attr query_srq(App& app, const AppSrq& s) {
  vhca_handle_req q{};
  q.handle = s.handle;
  vhca_query_srq_rsp r{};
  EXPECT_EQ(app.hca().query_srq(app.id(), q, r), 0);
  return r.attr;
}

inline int destroy_srq(App& app, uint32_t handle) {
  vhca_handle_req q{};
  q.handle = handle;
  return app.hca().destroy_srq(app.id(), q);
}

// A QP of any type, optionally on an SRQ.
inline int create_qp_ex(App& app, uint32_t pd, const AppCq& scq, const AppCq& rcq, ibv_qp_type type,
                        uint32_t srq, AppQp& q, QpCaps caps = {}) {
  caps.type = type;
  caps.srq = srq;
  return app.create_qp(pd, scq, rcq, caps, q);
}

inline int create_ah(App& app, uint32_t pd, const ibv_ah_attr& a, uint32_t& handle) {
  vhca_create_ah_req q{};
  q.pd_handle = pd;
  q.attr = a;
  vhca_create_ah_rsp r{};
  const int st = app.hca().create_ah(app.id(), q, r);
  handle = st ? 0 : r.ah_handle;
  return st;
}

inline int destroy_ah(App& app, uint32_t handle) {
  vhca_handle_req q{};
  q.handle = handle;
  return app.hca().destroy_ah(app.id(), q);
}

inline ibv_ah_attr ib_ah(uint16_t dlid, uint8_t sl = 0) {
  ibv_ah_attr a{};
  a.dlid = dlid;
  a.sl = sl;
  a.port_num = 1;
  return a;
}
inline ibv_ah_attr global_ah(uint16_t dlid, const ibv_gid& dgid, uint8_t hop_limit = 64,
                             uint8_t tclass = 0, uint32_t flow = 0) {
  ibv_ah_attr a = ib_ah(dlid);
  a.is_global = 1;
  a.grh.dgid = dgid;
  a.grh.sgid_index = 0;
  a.grh.hop_limit = hop_limit;
  a.grh.traffic_class = tclass;
  a.grh.flow_label = flow;
  return a;
}

// RESET -> INIT -> RTR -> RTS for a UD QP with Q_Key `qkey`.
inline void ud_up(App& app, AppQp& q, uint32_t qkey, uint32_t sq_psn = 77) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qkey = qkey;
  ASSERT_EQ(app.modify(q, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTR;
  ASSERT_EQ(app.modify(q, a, IBV_QP_STATE), 0);
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = sq_psn;
  ASSERT_EQ(app.modify(q, a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

inline vhca_send_wqe ud_wqe(uint64_t wr_id, std::initializer_list<vhca_sge> sges, uint32_t ah,
                            uint32_t remote_qpn, uint32_t remote_qkey,
                            uint8_t opcode = IBV_WR_SEND, uint32_t imm_be = 0,
                            uint32_t flags = IBV_SEND_SIGNALED) {
  vhca_send_wqe w = send_wqe(wr_id, sges, flags, opcode, imm_be);
  w.ah_handle = ah;
  w.remote_qpn = remote_qpn;
  w.remote_qkey = remote_qkey;
  return w;
}

}  // namespace vf::engine::test
