// UD helpers for the integration tests that drive UD QPs in-process.
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "tests/support/rc_pair.hpp"

namespace vf::test {

inline constexpr uint32_t kUdQkey = 0x11111111;

// Replaces `s`'s QP with one of `type` (optionally on `srq`), same CQ/PD.
inline void recreate_qp(VerbsSide& s, ibv_qp_type type, ibv_srq* srq = nullptr, uint32_t wr = 64) {
  if (s.qp) ibv_destroy_qp(s.qp);
  ibv_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = s.cq;
  ia.qp_type = type;
  ia.srq = srq;
  ia.cap.max_send_wr = wr;
  ia.cap.max_recv_wr = srq ? 0 : wr;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 4;
  ia.sq_sig_all = 1;
  s.qp = ibv_create_qp(s.pd, &ia);
  if (!s.qp) check(errno, "ibv_create_qp");
}

inline void ud_to_rts(VerbsSide& s, uint32_t qkey = kUdQkey) {
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qkey = qkey;
  check(ibv_modify_qp(s.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
        "UD INIT");
  at = {};
  at.qp_state = IBV_QPS_RTR;
  check(ibv_modify_qp(s.qp, &at, IBV_QP_STATE), "UD RTR");
  at = {};
  at.qp_state = IBV_QPS_RTS;
  check(ibv_modify_qp(s.qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN), "UD RTS");
}

// An address handle on `pd` to `peer`'s port (by GID at `gid_index` >= 0).
inline ibv_ah* ah_to(ibv_pd* pd, const VerbsSide& peer, int gid_index) {
  ibv_ah_attr a{};
  a.dlid = peer.port.lid;
  a.port_num = 1;
  if (gid_index >= 0) {
    a.is_global = 1;
    a.grh.dgid = peer.gid;
    a.grh.sgid_index = uint8_t(gid_index);
    a.grh.hop_limit = 64;
  }
  return ibv_create_ah(pd, &a);
}

inline int post_ud(VerbsSide& s, ibv_ah* ah, uint32_t qpn, uint32_t qkey, ibv_sge g, uint64_t id = 1) {
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = id;
  wr.sg_list = &g;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = qpn;
  wr.wr.ud.remote_qkey = qkey;
  return ibv_post_send(s.qp, &wr, &bad);
}

// Nothing arrives on `cq` within `ms` (for drops that complete nothing).
inline bool stays_empty(ibv_cq* cq, int ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  ibv_wc wc;
  while (std::chrono::steady_clock::now() < end)
    if (ibv_poll_cq(cq, 1, &wc) != 0) return false;
  return true;
}

// ---- multicast (ibv_attach_mcast)

inline constexpr uint32_t kGroupQpn = 0xFFFFFF;

// An IPoIB-style MGID on IB (ff12:401b:ffff::/ link-local scope), 239.1.2.3
// on RoCEv2 (an IPv4 group, ::ffff:239.1.2.3).
inline ibv_gid group_gid(bool roce, uint8_t last = 3) {
  ibv_gid g{};
  if (roce) {
    g.raw[10] = g.raw[11] = 0xFF;
    g.raw[12] = 239, g.raw[13] = 1, g.raw[14] = 2, g.raw[15] = last;
  } else {
    const uint8_t mgid[16] = {0xFF, 0x12, 0x40, 0x1B, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, last};
    std::memcpy(g.raw, mgid, 16);
  }
  return g;
}

// Every completion on `cq`: for `ms` when no receive is expected, else until
// `want_recvs` receive completions have come and 50 ms more passed quietly
// (so an extra copy would be seen), at most 20 s (a slow sanitized daemon).
inline std::vector<ibv_wc> drain(ibv_cq* cq, int ms, size_t want_recvs = 0) {
  using clock = std::chrono::steady_clock;
  std::vector<ibv_wc> out;
  const auto start = clock::now();
  auto last = start;
  size_t recvs = 0;
  const auto limit = want_recvs ? std::chrono::milliseconds(20'000) : std::chrono::milliseconds(ms);
  ibv_wc wc;
  while (clock::now() - start < limit) {
    if (ibv_poll_cq(cq, 1, &wc) == 1) {
      out.push_back(wc);
      recvs += wc.opcode == IBV_WC_RECV;
      last = clock::now();
    } else if (want_recvs && recvs >= want_recvs && clock::now() - last > std::chrono::milliseconds(50)) {
      break;
    }
  }
  return out;
}

inline std::vector<ibv_wc> receives(const std::vector<ibv_wc>& wcs) {
  std::vector<ibv_wc> r;
  for (const ibv_wc& w : wcs)
    if (w.opcode == IBV_WC_RECV) r.push_back(w);
  return r;
}

// A UD QP in RTS on `dev` with `qkey` (GIDs at `gid_index`; -1: none); `flags`
// are ibv_create_qp_ex create flags.
inline std::unique_ptr<VerbsSide> open_ud_side(const char* dev, int gid_index, uint32_t qkey = kUdQkey,
                                             uint32_t flags = 0) {
  auto s = std::make_unique<VerbsSide>();
  SideParams p;
  p.gid_index = gid_index;
  p.buf_bytes = 64 * 1024;
  open_side(*s, dev, p);
  if (flags) {
    ibv_destroy_qp(s->qp);
    ibv_qp_init_attr_ex ia{};
    ia.send_cq = ia.recv_cq = s->cq;
    ia.qp_type = IBV_QPT_UD;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 16;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ia.sq_sig_all = 1;
    ia.pd = s->pd;
    ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
    ia.create_flags = flags;
    s->qp = ibv_create_qp_ex(s->ctx, &ia);
    if (!s->qp) check(errno, "ibv_create_qp_ex");
  } else {
    recreate_qp(*s, IBV_QPT_UD, nullptr, 16);
  }
  ud_to_rts(*s, qkey);
  return s;
}

// An address handle to a multicast group: the MLID on IB (0 on RoCE), the GRH
// a multicast datagram must carry.
inline ibv_ah* multicast_ah(VerbsSide& s, const ibv_gid& gid, uint16_t mlid, int sgid_index) {
  ibv_ah_attr a{};
  a.dlid = mlid;
  a.port_num = 1;
  a.is_global = 1;
  a.grh.dgid = gid;
  a.grh.sgid_index = uint8_t(sgid_index);
  a.grh.hop_limit = 1;
  return ibv_create_ah(s.pd, &a);
}

}  // namespace vf::test
