// An in-process application of a virtual-time fabric: drives an engine::Hca
// exactly as the provider inside an app does -- slow-path structs, mapped
// memfd rings, WQEs written into the SQ/RQ and CQEs read from the CQ -- plus
// the usual QP state-machine steps. This process's own memory is the DMA
// target. Slow-path calls that cannot fail in a sane set-up throw
// std::system_error (errno, what) when they do; the raw calls return the
// errno the provider would see.
#pragma once

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <system_error>
#include <vector>

#include "core/scheduler.hpp"
#include "device/abi/vhca_abi.h"
#include "device/engine/hca.hpp"

namespace vf::sim {

using engine::ClientId;
using engine::Fd;
using engine::Hca;

// Throws std::system_error(err, what) unless err is 0.
inline void check(int err, const char* what) {
  if (err) throw std::system_error(err, std::generic_category(), what);
}

// ---------------------------------------------------------------- the app

struct MappedRing {
  MappedRing() = default;
  MappedRing(const MappedRing&) = delete;
  MappedRing& operator=(const MappedRing&) = delete;
  ~MappedRing() { unmap(); }
  uint8_t* base = nullptr;
  size_t len = 0;
  uint32_t entries = 0;
  uint32_t entry_size = 0;
  void map(int fd, uint32_t n, uint32_t esz) {
    struct stat st;
    if (fstat(fd, &st) != 0) check(errno, "fstat of a ring");
    len = size_t(st.st_size);
    if (len < vhca_ring_bytes(n, esz)) check(EPROTO, "ring smaller than its entries");
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) check(errno, "mmap of a ring");
    base = static_cast<uint8_t*>(p);
    entries = n;
    entry_size = esz;
    close(fd);
  }
  void unmap() {
    if (base) munmap(base, len);
    base = nullptr;
  }
  vhca_ring_hdr* hdr() const { return reinterpret_cast<vhca_ring_hdr*>(base); }
  uint8_t* slot(uint32_t i) const {
    return base + sizeof(vhca_ring_hdr) + size_t(i & (entries - 1)) * entry_size;
  }
};

struct AppCq {
  uint32_t handle = 0;
  uint32_t entries = 0;
  MappedRing ring;
  uint32_t cons = 0;
};

struct AppQp {
  uint32_t handle = 0;
  uint32_t qpn = 0;
  MappedRing sq, rq;
  uint32_t sq_prod = 0, rq_prod = 0;
  vhca_create_qp_rsp rsp{};
};

// What the provider hands over at OPEN_CONTEXT: the app's own address space.
inline int self_mem_fd() { return ::open("/proc/self/mem", O_RDWR | O_CLOEXEC); }

struct QpCaps {
  uint32_t send_wr = 64, recv_wr = 64, send_sge = 4, recv_sge = 4, inline_data = 256;
  bool sig_all = false;
  ibv_qp_type type = IBV_QPT_RC;
  uint32_t srq = 0;  // SRQ handle, 0 = own receive queue
};

class App {
 public:
  App(Hca& hca, ClientId id) : hca_(hca), id_(id) {
    vhca_open_context_rsp rsp{};
    check(hca.open_client(id, getpid(), self_mem_fd(), rsp), "open_client");
  }
  ClientId id() const { return id_; }
  Hca& hca() { return hca_; }

  uint32_t alloc_pd() {
    vhca_alloc_pd_rsp r{};
    check(hca_.alloc_pd(id_, r), "alloc_pd");
    return r.pd_handle;
  }
  int reg_mr(uint32_t pd, const void* addr, uint64_t len, uint32_t access, vhca_reg_mr_rsp& r) {
    vhca_reg_mr_req q{};
    q.pd_handle = pd;
    q.access = access;
    q.addr = reinterpret_cast<uint64_t>(addr);
    q.length = len;
    q.iova = q.addr;  // as ibv_reg_mr names a region
    return hca_.reg_mr(id_, q, r);
  }
  vhca_reg_mr_rsp mr(uint32_t pd, const void* addr, uint64_t len,
                     uint32_t access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                       IBV_ACCESS_REMOTE_READ) {
    vhca_reg_mr_rsp r{};
    check(reg_mr(pd, addr, len, access, r), "reg_mr");
    return r;
  }
  std::unique_ptr<AppCq> cq(uint32_t cqe = 255) {
    auto c = std::make_unique<AppCq>();
    vhca_create_cq_req q{};
    q.cqe = cqe;
    vhca_create_cq_rsp r{};
    Fd fd;
    check(hca_.create_cq(id_, q, r, fd), "create_cq");
    if (fd.fd < 0) return c;
    c->handle = r.cq_handle;
    c->entries = r.entries;
    c->ring.map(fd.fd, r.entries, sizeof(vhca_cqe));
    return c;
  }
  int create_qp(uint32_t pd, const AppCq& scq, const AppCq& rcq, const QpCaps& caps, AppQp& q) {
    vhca_create_qp_req req{};
    req.pd_handle = pd;
    req.send_cq_handle = scq.handle;
    req.recv_cq_handle = rcq.handle;
    req.srq_handle = caps.srq;
    req.qp_type = caps.type;
    req.sq_sig_all = caps.sig_all;
    req.cap.max_send_wr = caps.send_wr;
    req.cap.max_recv_wr = caps.recv_wr;
    req.cap.max_send_sge = caps.send_sge;
    req.cap.max_recv_sge = caps.recv_sge;
    req.cap.max_inline_data = caps.inline_data;
    Fd sq, rq;
    int st = hca_.create_qp(id_, req, q.rsp, sq, rq);
    if (st) return st;
    q.handle = q.rsp.qp_handle;
    q.qpn = q.rsp.qp_num;
    q.sq.map(sq.fd, q.rsp.sq_entries, sizeof(vhca_send_wqe));
    q.rq.map(rq.fd, q.rsp.rq_entries, sizeof(vhca_recv_wqe));
    return 0;
  }
  std::unique_ptr<AppQp> qp(uint32_t pd, const AppCq& scq, const AppCq& rcq,
                            const QpCaps& caps = {}) {
    auto q = std::make_unique<AppQp>();
    check(create_qp(pd, scq, rcq, caps, *q), "create_qp");
    return q;
  }
  int modify(const AppQp& q, const ibv_qp_attr& attr, uint32_t mask) {
    vhca_modify_qp_req r{};
    r.qp_handle = q.handle;
    r.attr_mask = mask;
    r.attr = attr;
    return hca_.modify_qp(id_, r);
  }
  vhca_query_qp_rsp query(const AppQp& q) {
    vhca_query_qp_req r{};
    r.qp_handle = q.handle;
    r.attr_mask = ~0u;
    vhca_query_qp_rsp rsp{};
    check(hca_.query_qp(id_, r, rsp), "query_qp");
    return rsp;
  }

  // Fast path, as the provider does it.
  void post_send(AppQp& q, const vhca_send_wqe& w) {
    std::memcpy(q.sq.slot(q.sq_prod), &w, sizeof(w));
    __atomic_store_n(&q.sq.hdr()->producer, ++q.sq_prod, __ATOMIC_RELEASE);
  }
  void post_recv(AppQp& q, const vhca_recv_wqe& w) {
    std::memcpy(q.rq.slot(q.rq_prod), &w, sizeof(w));
    __atomic_store_n(&q.rq.hdr()->producer, ++q.rq_prod, __ATOMIC_RELEASE);
  }
  bool poll_cq(AppCq& c, vhca_cqe& out) {
    const uint32_t prod = __atomic_load_n(&c.ring.hdr()->producer, __ATOMIC_ACQUIRE);
    if (prod == c.cons) return false;
    std::memcpy(&out, c.ring.slot(c.cons), sizeof(out));
    __atomic_store_n(&c.ring.hdr()->consumer, ++c.cons, __ATOMIC_RELEASE);
    return true;
  }
  std::vector<vhca_cqe> drain(AppCq& c) {
    std::vector<vhca_cqe> v;
    vhca_cqe e;
    while (poll_cq(c, e)) v.push_back(e);
    return v;
  }
  void arm(AppCq& c, uint32_t how) {
    __atomic_store_n(&c.ring.hdr()->arm, how, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c.ring.hdr()->arm_sn, 1, __ATOMIC_RELEASE);
  }

 private:
  Hca& hca_;
  ClientId id_;
};

inline vhca_sge sge(const void* p, uint32_t len, uint32_t lkey) {
  return vhca_sge{reinterpret_cast<uint64_t>(p), len, lkey};
}

inline vhca_send_wqe send_wqe(uint64_t wr_id, std::initializer_list<vhca_sge> sges,
                              uint32_t flags = IBV_SEND_SIGNALED, uint8_t opcode = IBV_WR_SEND,
                              uint32_t imm_be = 0) {
  vhca_send_wqe w;
  std::memset(&w, 0, sizeof(w));
  w.wr_id = wr_id;
  w.opcode = opcode;
  w.send_flags = flags;
  w.imm_data = imm_be;
  for (const vhca_sge& s : sges) w.sge[w.num_sge++] = s;
  return w;
}

inline vhca_send_wqe inline_wqe(uint64_t wr_id, const void* data, uint16_t len,
                                uint32_t flags = IBV_SEND_SIGNALED) {
  vhca_send_wqe w;
  std::memset(&w, 0, sizeof(w));
  w.wr_id = wr_id;
  w.opcode = IBV_WR_SEND;
  w.send_flags = flags | IBV_SEND_INLINE;
  w.inline_len = len;
  std::memcpy(w.inline_data, data, len);
  return w;
}

inline vhca_recv_wqe recv_wqe(uint64_t wr_id, std::initializer_list<vhca_sge> sges) {
  vhca_recv_wqe w;
  std::memset(&w, 0, sizeof(w));
  w.wr_id = wr_id;
  for (const vhca_sge& s : sges) w.sge[w.num_sge++] = s;
  return w;
}

struct ConnParams {
  ibv_mtu mtu = IBV_MTU_1024;
  uint32_t psn_a = 100, psn_b = 5000;  // each side's send PSN
  uint8_t timeout = 14;                // 4.096us * 2^14 = 67.1 ms
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 12;  // 0.64 ms
  uint8_t max_rd_atomic = 1, max_dest_rd_atomic = 1;
  uint32_t access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;  // qp_access_flags
  uint8_t static_rate = 0;  // ibv_rate of both paths (0: IBV_RATE_MAX)
  uint8_t traffic_class = 0;  // RoCE: the GRH / IP traffic class of both paths (0: the port's default)
  uint16_t pkey_index_a = 0, pkey_index_b = 0;  // each side's P_Key table index
};

inline ibv_qp_attr init_attr(uint32_t access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
                             uint16_t pkey_index = 0) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = pkey_index;
  a.port_num = 1;
  a.qp_access_flags = access;
  return a;
}
inline constexpr uint32_t kInitMask =
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;

inline ibv_qp_attr rtr_attr(uint32_t dest_qpn, uint16_t dlid, uint32_t rq_psn, const ConnParams& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = p.mtu;
  a.dest_qp_num = dest_qpn;
  a.rq_psn = rq_psn;
  a.max_dest_rd_atomic = p.max_dest_rd_atomic;
  a.min_rnr_timer = p.min_rnr_timer;
  a.ah_attr.dlid = dlid;
  a.ah_attr.port_num = 1;
  a.ah_attr.static_rate = p.static_rate;
  return a;
}
inline constexpr uint32_t kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

inline ibv_qp_attr rts_attr(uint32_t sq_psn, const ConnParams& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = sq_psn;
  a.timeout = p.timeout;
  a.retry_cnt = p.retry_cnt;
  a.rnr_retry = p.rnr_retry;
  a.max_rd_atomic = p.max_rd_atomic;
  return a;
}
inline constexpr uint32_t kRtsMask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                                     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                     IBV_QP_MAX_QP_RD_ATOMIC;

// INIT -> RTR -> RTS on both sides of an RC/UC pair, as two apps do once
// they have exchanged QPNs, PSNs and addresses: A sends on `to_b`, B on
// `to_a`. `resolve(side, av)` is what fabricd does before modify_qp sets an
// address vector (side 0: A, 1: B), returning 0 or the errno. Throws
// std::system_error naming the step that failed.
inline void connect_pair(App& A, AppQp& qa, ibv_ah_attr to_b, App& B, AppQp& qb, ibv_ah_attr to_a,
                         const ConnParams& p, const std::function<int(int side, const ibv_ah_attr&)>& resolve) {
  check(A.modify(qa, init_attr(p.access, p.pkey_index_a), kInitMask), "modify_qp to INIT");
  check(B.modify(qb, init_attr(p.access, p.pkey_index_b), kInitMask), "modify_qp to INIT");
  ibv_qp_attr ra = rtr_attr(qb.qpn, 0, p.psn_b, p);
  ra.ah_attr = to_b;
  ra.ah_attr.grh.traffic_class = p.traffic_class;
  ibv_qp_attr rb = rtr_attr(qa.qpn, 0, p.psn_a, p);
  rb.ah_attr = to_a;
  rb.ah_attr.grh.traffic_class = p.traffic_class;
  check(resolve(0, ra.ah_attr), "resolving the path to the peer");
  check(A.modify(qa, ra, kRtrMask), "modify_qp to RTR");
  check(resolve(1, rb.ah_attr), "resolving the path to the peer");
  check(B.modify(qb, rb, kRtrMask), "modify_qp to RTR");
  check(A.modify(qa, rts_attr(p.psn_a, p), kRtsMask), "modify_qp to RTS");
  check(B.modify(qb, rts_attr(p.psn_b, p), kRtsMask), "modify_qp to RTS");
}

}  // namespace vf::sim
