// Two RC QPs on two vHCAs of one fabric, connected to each other inside one
// process: what the verbs integration tests and vfabric-bench both need.
// Plain libibverbs; errors throw with the verb's own errno text.
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace vf::test {

inline void check(int err, const char* what) {
  if (err) throw std::runtime_error(std::string(what) + ": " + std::strerror(err));
}

struct VerbsSide {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<char> buf;
  ibv_port_attr port{};
  ibv_gid gid{};

  VerbsSide() = default;
  VerbsSide(const VerbsSide&) = delete;
  VerbsSide& operator=(const VerbsSide&) = delete;
  ~VerbsSide() {
    if (qp) ibv_destroy_qp(qp);
    if (cq) ibv_destroy_cq(cq);
    if (mr) ibv_dereg_mr(mr);
    if (pd) ibv_dealloc_pd(pd);
    if (ctx) ibv_close_device(ctx);
  }
};

inline ibv_context* open_device(const std::string& name) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list) throw std::runtime_error("ibv_get_device_list: " + std::string(std::strerror(errno)));
  ibv_context* ctx = nullptr;
  for (int i = 0; i < n; ++i)
    if (name == ibv_get_device_name(list[i])) ctx = ibv_open_device(list[i]);
  ibv_free_device_list(list);
  if (!ctx) throw std::runtime_error("cannot open " + name);
  return ctx;
}

struct SideParams {
  size_t buf_bytes = 1 << 20;
  uint32_t send_wr = 64, recv_wr = 64, sge = 4, inline_data = 0;
  int cqe = 256;
  int gid_index = -1;  // >= 0: route by GRH (RoCE needs 1, the RoCE v2 GID)
  int mr_access = IBV_ACCESS_LOCAL_WRITE;  // add REMOTE_* for one-sided peers
  bool sig_all = true;                     // false: only IBV_SEND_SIGNALED WRs complete
};

inline void open_side(VerbsSide& s, const std::string& dev, const SideParams& p) {
  s.ctx = open_device(dev);
  check(ibv_query_port(s.ctx, 1, &s.port), "ibv_query_port");
  if (p.gid_index >= 0) check(ibv_query_gid(s.ctx, 1, p.gid_index, &s.gid) ? errno : 0, "ibv_query_gid");
  s.pd = ibv_alloc_pd(s.ctx);
  if (!s.pd) check(errno, "ibv_alloc_pd");
  s.buf.assign(p.buf_bytes, 0);
  s.mr = ibv_reg_mr(s.pd, s.buf.data(), s.buf.size(), p.mr_access);
  if (!s.mr) check(errno, "ibv_reg_mr");
  s.cq = ibv_create_cq(s.ctx, p.cqe, nullptr, nullptr, 0);
  if (!s.cq) check(errno, "ibv_create_cq");
  ibv_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = s.cq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = p.send_wr;
  ia.cap.max_recv_wr = p.recv_wr;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = p.sge;
  ia.cap.max_inline_data = p.inline_data;
  ia.sq_sig_all = p.sig_all ? 1 : 0;
  s.qp = ibv_create_qp(s.pd, &ia);
  if (!s.qp) check(errno, "ibv_create_qp");
}

struct ConnectParams {
  int gid_index = -1;
  uint8_t timeout = 14, retry_cnt = 7, rnr_retry = 7, min_rnr_timer = 1;
  int qp_access = IBV_ACCESS_LOCAL_WRITE;  // what the peer may do to this QP (REMOTE_*)
  uint8_t rd_atomic = 1;  // max_rd_atomic and max_dest_rd_atomic
};

// RESET -> INIT -> RTR -> RTS towards QP `qpn` behind `lid` (and `gid` when
// c.gid_index >= 0), e.g. a QP of another process.
inline void connect_to_qpn(VerbsSide& s, uint32_t qpn, uint16_t lid, const ibv_gid& gid,
                           const ConnectParams& c) {
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qp_access_flags = unsigned(c.qp_access);
  check(ibv_modify_qp(s.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
        "modify_qp INIT");
  at = {};
  at.qp_state = IBV_QPS_RTR;
  at.path_mtu = s.port.active_mtu;
  at.dest_qp_num = qpn;
  at.max_dest_rd_atomic = c.rd_atomic;
  at.min_rnr_timer = c.min_rnr_timer;
  at.ah_attr.dlid = lid;
  at.ah_attr.port_num = 1;
  if (c.gid_index >= 0) {
    at.ah_attr.is_global = 1;
    at.ah_attr.grh.dgid = gid;
    at.ah_attr.grh.sgid_index = uint8_t(c.gid_index);
    at.ah_attr.grh.hop_limit = 64;
  }
  check(ibv_modify_qp(s.qp, &at,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
        "modify_qp RTR");
  at = {};
  at.qp_state = IBV_QPS_RTS;
  at.timeout = c.timeout;
  at.retry_cnt = c.retry_cnt;
  at.rnr_retry = c.rnr_retry;
  at.max_rd_atomic = c.rd_atomic;
  check(ibv_modify_qp(s.qp, &at,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
        "modify_qp RTS");
}

// RESET -> INIT -> RTR -> RTS towards `peer`.
inline void connect_to(VerbsSide& s, const VerbsSide& peer, const ConnectParams& c) {
  connect_to_qpn(s, peer.qp->qp_num, peer.port.lid, peer.gid, c);
}

inline int post_recv(VerbsSide& s, uint64_t wr_id, std::vector<ibv_sge> sges) {
  ibv_recv_wr wr{}, *bad = nullptr;
  wr.wr_id = wr_id;
  wr.sg_list = sges.data();
  wr.num_sge = int(sges.size());
  return ibv_post_recv(s.qp, &wr, &bad);
}

inline int post_send(VerbsSide& s, uint64_t wr_id, std::vector<ibv_sge> sges,
                     ibv_wr_opcode op = IBV_WR_SEND, uint32_t imm = 0) {
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = wr_id;
  wr.sg_list = sges.data();
  wr.num_sge = int(sges.size());
  wr.opcode = op;
  wr.imm_data = imm;
  return ibv_post_send(s.qp, &wr, &bad);
}

// One RDMA WRITE/READ (remote_addr/rkey) or atomic (compare_add/swap) WR.
struct RemoteOp {
  ibv_wr_opcode op = IBV_WR_RDMA_WRITE;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint64_t compare_add = 0, swap = 0;
  uint32_t imm = 0;
  unsigned flags = IBV_SEND_SIGNALED;
};

inline int post_remote(VerbsSide& s, uint64_t wr_id, std::vector<ibv_sge> sges, const RemoteOp& r) {
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = wr_id;
  wr.sg_list = sges.data();
  wr.num_sge = int(sges.size());
  wr.opcode = r.op;
  wr.send_flags = r.flags;
  wr.imm_data = r.imm;
  if (r.op == IBV_WR_ATOMIC_CMP_AND_SWP || r.op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
    wr.wr.atomic.remote_addr = r.remote_addr;
    wr.wr.atomic.rkey = r.rkey;
    wr.wr.atomic.compare_add = r.compare_add;
    wr.wr.atomic.swap = r.swap;
  } else {
    wr.wr.rdma.remote_addr = r.remote_addr;
    wr.wr.rdma.rkey = r.rkey;
  }
  return ibv_post_send(s.qp, &wr, &bad);
}

// Where the peer's buffer starts (+offset), for RemoteOp::remote_addr.
inline uint64_t remote_addr(const VerbsSide& s, size_t offset = 0) {
  return reinterpret_cast<uintptr_t>(s.buf.data() + offset);
}

inline ibv_sge sge(VerbsSide& s, size_t offset, uint32_t len) {
  return ibv_sge{reinterpret_cast<uintptr_t>(s.buf.data() + offset), len, s.mr->lkey};
}

}  // namespace vf::test
