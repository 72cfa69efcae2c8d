// Verbs behaviour independent conformance suites check against mlx5 and rxe
// (docs/architecture.md 3a), through the real libibverbs, provider and
// fabricd: reusing a QP after an error, memory-window bind rules, the qp_ex
// API on a RESET QP, zero-length regions, errnos of destroy verbs, RDMA on a
// UD QP, where READ/atomic local keys are checked, and CQ arming.
#include <poll.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <ostream>

#include "ud_helpers.hpp"
#include "verbs_fixture.hpp"

// gtest prints completion statuses by name: ADL finds this beside the enum.
static void PrintTo(ibv_wc_status s, std::ostream* os) { *os << ibv_wc_status_str(s); }

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

constexpr int kRemoteAll =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

uint64_t word(const VerbsSide& s, size_t off) {
  uint64_t v;
  std::memcpy(&v, s.buf.data() + off, 8);
  return v;
}

void to_state(ibv_qp* qp, ibv_qp_state st) {
  ibv_qp_attr at{};
  at.qp_state = st;
  check(ibv_modify_qp(qp, &at, IBV_QP_STATE), "modify_qp");
}

class Conformance : public ::testing::TestWithParam<FabricParam> {
 protected:
  // An RC pair whose memory and QPs allow every remote access.
  void open_rc() {
    SideParams p;
    p.gid_index = gid();
    p.mr_access = kRemoteAll;
    open_side(a_, GetParam().a, p);
    open_side(b_, GetParam().b, p);
    connect_rc();
  }
  // a_ alone, its QP in RESET.
  void open_a() {
    SideParams p;
    p.gid_index = gid();
    open_side(a_, GetParam().a, p);
  }
  void connect_rc() {
    ConnectParams c;
    c.gid_index = gid();
    c.qp_access = kRemoteAll;
    c.retry_cnt = 1;  // a lost peer fails fast
    connect_to(a_, b_, c);
    connect_to(b_, a_, c);
  }
  // a_ sends `len` bytes of a pattern seeded `seed` to b_, which checks them.
  void send_checked(uint8_t seed, uint32_t len = 3000) {
    for (uint32_t i = 0; i < len; ++i) a_.buf[i] = char(seed + i * 3);
    ASSERT_EQ(post_recv(b_, 7, {sge(b_, 65536, len)}), 0);
    ASSERT_EQ(post_send(a_, 8, {sge(a_, 0, len)}), 0);
    EXPECT_EQ(wait_one(a_).status, IBV_WC_SUCCESS);
    const ibv_wc r = wait_one(b_);
    EXPECT_EQ(r.status, IBV_WC_SUCCESS);
    EXPECT_EQ(r.byte_len, len);
    EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data() + 65536, len), 0) << "data after reuse";
  }
  int gid() const { return GetParam().gid_index; }
  VerbsSide a_, b_;
};

// ---- 1. ERR -> RESET -> INIT -> RTR -> RTS carries traffic again

TEST_P(Conformance, RcQpReusedAfterErrorCarriesTraffic) {
  open_rc();
  send_checked(1);
  // An error with work outstanding: a receive and a send flushed.
  ASSERT_EQ(post_recv(b_, 9, {sge(b_, 0, 64)}), 0);
  to_state(a_.qp, IBV_QPS_ERR);
  to_state(b_.qp, IBV_QPS_ERR);
  ASSERT_EQ(post_send(a_, 10, {sge(a_, 0, 64)}), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(wait_one(b_).status, IBV_WC_WR_FLUSH_ERR);
  for (int round = 0; round < 2; ++round) {
    to_state(a_.qp, IBV_QPS_RESET);
    to_state(b_.qp, IBV_QPS_RESET);
    EXPECT_EQ(qp_state(a_.qp), IBV_QPS_RESET);
    connect_rc();
    for (uint8_t i = 0; i < 3; ++i) send_checked(uint8_t(20 * round + i + 2));
    to_state(a_.qp, IBV_QPS_ERR);
    to_state(b_.qp, IBV_QPS_ERR);
  }
}

// The connection broken by a remote access error with work queued behind it,
// reset while flush completions may still be coming.
TEST_P(Conformance, RcQpReusedAfterRemoteAccessErrorCarriesTraffic) {
  open_rc();
  for (uint64_t i = 0; i < 8; ++i) ASSERT_EQ(post_recv(b_, 100 + i, {sge(b_, 65536, 4096)}), 0);
  RemoteOp bad;
  bad.remote_addr = remote_addr(b_);
  bad.rkey = b_.mr->rkey ^ 0x100;
  ASSERT_EQ(post_remote(a_, 1, {sge(a_, 0, 64)}, bad), 0);
  for (uint64_t i = 0; i < 16; ++i) ASSERT_EQ(post_send(a_, 2 + i, {sge(a_, 0, 2048)}), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_REM_ACCESS_ERR);
  to_state(a_.qp, IBV_QPS_RESET);
  to_state(b_.qp, IBV_QPS_ERR);
  to_state(b_.qp, IBV_QPS_RESET);
  drain(a_.cq, 100);
  drain(b_.cq, 100);
  connect_rc();
  for (uint8_t i = 0; i < 3; ++i) send_checked(uint8_t(i + 40));
}

// As ibv_rc_pingpong reuses a QP: receives posted in INIT, before RTR, and
// sends posted the moment the QP is back in RTS.
TEST_P(Conformance, RcQpReusedWithReceivesPostedInInit) {
  open_rc();
  send_checked(3);
  for (VerbsSide* s : {&a_, &b_}) {
    to_state(s->qp, IBV_QPS_ERR);
    to_state(s->qp, IBV_QPS_RESET);
  }
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qp_access_flags = kRemoteAll;
  for (VerbsSide* s : {&a_, &b_})
    check(ibv_modify_qp(s->qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "INIT");
  for (uint64_t i = 0; i < 4; ++i) ASSERT_EQ(post_recv(b_, 50 + i, {sge(b_, 65536 + 4096 * i, 4096)}), 0);
  for (VerbsSide* s : {&a_, &b_}) to_state(s->qp, IBV_QPS_RESET);  // RESET discards them
  connect_rc();
  for (uint64_t i = 0; i < 4; ++i) ASSERT_EQ(post_recv(b_, 60 + i, {sge(b_, 65536 + 4096 * i, 4096)}), 0);
  for (uint32_t i = 0; i < 4 * 4096; ++i) a_.buf[i] = char(i * 13 + 5);
  for (uint64_t i = 0; i < 4; ++i) ASSERT_EQ(post_send(a_, 70 + i, {sge(a_, 4096 * i, 4096)}), 0);
  for (uint64_t i = 0; i < 4; ++i) {
    const ibv_wc s = wait_one(a_);
    EXPECT_EQ(s.status, IBV_WC_SUCCESS);
    EXPECT_EQ(s.wr_id, 70 + i);
    const ibv_wc r = wait_one(b_);
    EXPECT_EQ(r.status, IBV_WC_SUCCESS);
    EXPECT_EQ(r.wr_id, 60 + i) << "receives posted before the second RESET were discarded";
  }
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data() + 65536, 4 * 4096), 0);
}

TEST_P(Conformance, UdQpReusedAfterErrorCarriesTraffic) {
  auto a = open_ud_side(GetParam().a, gid());
  auto b = open_ud_side(GetParam().b, gid());
  ibv_ah* ah = ah_to(a->pd, *b, gid());
  ASSERT_NE(ah, nullptr);
  auto send = [&](uint8_t seed) {
    for (uint32_t i = 0; i < 512; ++i) a->buf[i] = char(seed + i);
    ASSERT_EQ(post_recv(*b, 1, {sge(*b, 4096, 512 + 40)}), 0);
    ASSERT_EQ(post_ud(*a, ah, b->qp->qp_num, kUdQkey, sge(*a, 0, 512)), 0);
    EXPECT_EQ(wait_one(a->cq).status, IBV_WC_SUCCESS);
    const ibv_wc r = wait_one(b->cq);
    EXPECT_EQ(r.status, IBV_WC_SUCCESS);
    EXPECT_EQ(std::memcmp(a->buf.data(), b->buf.data() + 4096 + 40, 512), 0) << "data after reuse";
  };
  send(1);
  to_state(a->qp, IBV_QPS_ERR);
  ASSERT_EQ(post_ud(*a, ah, b->qp->qp_num, kUdQkey, sge(*a, 0, 64)), 0);
  EXPECT_EQ(wait_one(a->cq).status, IBV_WC_WR_FLUSH_ERR);
  to_state(a->qp, IBV_QPS_RESET);
  to_state(b->qp, IBV_QPS_ERR);
  to_state(b->qp, IBV_QPS_RESET);
  ud_to_rts(*a);
  ud_to_rts(*b);
  send(2);
  send(3);
  ibv_destroy_ah(ah);
}

// ---- 2./3. memory-window binds (IBA 10.6.7.2)

ibv_mw_bind_info bind_info(ibv_mr* mr, const VerbsSide& s, size_t off, size_t len, unsigned access) {
  ibv_mw_bind_info bi{};
  bi.mr = mr;
  bi.addr = remote_addr(s, off);
  bi.length = len;
  bi.mw_access_flags = access;
  return bi;
}

TEST_P(Conformance, WindowBindNeedsMwBindAndLocalWriteNotRemoteRights) {
  open_rc();
  ibv_mr* bindable = ibv_reg_mr(b_.pd, b_.buf.data() + 8192, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
  ibv_mr* plain = ibv_reg_mr(b_.pd, b_.buf.data() + 16384, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  ASSERT_TRUE(bindable && plain);
  ibv_mw* mw = ibv_alloc_mw(b_.pd, IBV_MW_TYPE_1);
  ASSERT_NE(mw, nullptr);
  ibv_mw_bind mb{};
  mb.wr_id = 1;
  mb.send_flags = IBV_SEND_SIGNALED;
  mb.bind_info = bind_info(bindable, b_, 8192, 4096, IBV_ACCESS_REMOTE_WRITE);
  ASSERT_EQ(ibv_bind_mw(b_.qp, mw, &mb), 0);
  EXPECT_EQ(wait_one(b_).status, IBV_WC_SUCCESS);
  // The peer writes through the window.
  std::memset(a_.buf.data(), 0x5A, 256);
  RemoteOp w;
  w.remote_addr = remote_addr(b_, 8192);
  w.rkey = mw->rkey;
  ASSERT_EQ(post_remote(a_, 2, {sge(a_, 0, 256)}, w), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data() + 8192, 256), 0);
  // A region without MW_BIND is refused.
  mb.bind_info = bind_info(plain, b_, 16384, 4096, IBV_ACCESS_REMOTE_WRITE);
  ASSERT_EQ(ibv_bind_mw(b_.qp, mw, &mb), 0);
  EXPECT_EQ(wait_one(b_).status, IBV_WC_MW_BIND_ERR);
  EXPECT_EQ(ibv_dealloc_mw(mw), 0);
  EXPECT_EQ(ibv_dereg_mr(plain), 0);
  EXPECT_EQ(ibv_dereg_mr(bindable), 0);
}

TEST_P(Conformance, Type2BindTakesOnlyTheKeyByteOfTheRkey) {
  open_rc();
  ibv_mr* mr = ibv_reg_mr(b_.pd, b_.buf.data() + 8192, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
  ASSERT_NE(mr, nullptr);
  ibv_mw* mw = ibv_alloc_mw(b_.pd, IBV_MW_TYPE_2);
  ASSERT_NE(mw, nullptr);
  // A value that shares nothing but its low byte with the window's key.
  const uint32_t asked = (~mw->rkey & ~0xFFu) | ((mw->rkey + 1) & 0xFF);
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = 1;
  wr.opcode = IBV_WR_BIND_MW;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = asked;
  wr.bind_mw.bind_info = bind_info(mr, b_, 8192, 4096, IBV_ACCESS_REMOTE_WRITE);
  ASSERT_EQ(ibv_post_send(b_.qp, &wr, &bad), 0);
  EXPECT_EQ(wait_one(b_).status, IBV_WC_SUCCESS);
  std::memset(a_.buf.data(), 0x6B, 128);
  RemoteOp w;
  w.remote_addr = remote_addr(b_, 8192);
  w.rkey = (mw->rkey & ~0xFFu) | (asked & 0xFF);
  ASSERT_EQ(post_remote(a_, 2, {sge(a_, 0, 128)}, w), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a_.buf.data(), b_.buf.data() + 8192, 128), 0);
  EXPECT_EQ(ibv_dealloc_mw(mw), 0);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

// ---- 4. the qp_ex API on a QP in RESET

TEST_P(Conformance, WrCompleteOnResetQpFails) {
  open_a();
  ibv_qp_init_attr_ex qa{};
  qa.send_cq = qa.recv_cq = a_.cq;
  qa.qp_type = IBV_QPT_RC;
  qa.cap.max_send_wr = qa.cap.max_recv_wr = 8;
  qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
  qa.sq_sig_all = 1;
  qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  qa.pd = a_.pd;
  qa.send_ops_flags = IBV_QP_EX_WITH_SEND;
  ibv_qp* qp = ibv_create_qp_ex(a_.ctx, &qa);
  ASSERT_NE(qp, nullptr);
  ibv_qp_ex* x = ibv_qp_to_qp_ex(qp);
  ibv_wr_start(x);
  x->wr_id = 1;
  ibv_wr_send(x);
  ibv_wr_set_sge(x, a_.mr->lkey, remote_addr(a_), 16);
  EXPECT_EQ(ibv_wr_complete(x), EINVAL);
  EXPECT_TRUE(stays_empty(a_.cq, 50));
  EXPECT_EQ(ibv_destroy_qp(qp), 0);
}

// ---- 5. zero-length regions

TEST_P(Conformance, ZeroLengthRegionServesZeroLengthOperations) {
  open_rc();
  ibv_mr* za = ibv_reg_mr(a_.pd, a_.buf.data(), 0, kRemoteAll);
  ASSERT_NE(za, nullptr) << std::strerror(errno);
  ibv_mr* zb = ibv_reg_mr(b_.pd, b_.buf.data(), 0, kRemoteAll);
  ASSERT_NE(zb, nullptr) << std::strerror(errno);
  const ibv_sge ga{remote_addr(a_), 0, za->lkey};
  const ibv_sge gb{remote_addr(b_), 0, zb->lkey};
  ASSERT_EQ(post_recv(b_, 1, {gb}), 0);
  ASSERT_EQ(post_send(a_, 2, {ga}), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_SUCCESS);
  const ibv_wc r = wait_one(b_);
  EXPECT_EQ(r.status, IBV_WC_SUCCESS);
  EXPECT_EQ(r.byte_len, 0u);
  for (ibv_wr_opcode op : {IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ}) {
    RemoteOp o;
    o.op = op;
    o.remote_addr = remote_addr(b_);
    o.rkey = zb->rkey;
    ASSERT_EQ(post_remote(a_, 3, {ga}, o), 0);
    EXPECT_EQ(wait_one(a_).status, IBV_WC_SUCCESS) << "opcode " << op;
  }
  EXPECT_EQ(ibv_dereg_mr(za), 0);
  EXPECT_EQ(ibv_dereg_mr(zb), 0);
}

// ---- 6. destroy errnos

TEST_P(Conformance, DestroyingAnUnknownHandleIsEnoent) {
  open_a();
  // Garble each handle in place, then put it back for the real teardown.
  auto garbled = [](uint32_t& h, auto destroy) {
    const uint32_t keep = h;
    h = 0xDEAD0u;
    errno = 0;
    const int ret = destroy();
    const int err = errno;
    h = keep;
    EXPECT_EQ(ret, ENOENT);
    EXPECT_EQ(err, ENOENT);
  };
  garbled(a_.mr->handle, [&] { return ibv_dereg_mr(a_.mr); });
  garbled(a_.cq->handle, [&] { return ibv_destroy_cq(a_.cq); });
  ibv_pd* pd = ibv_alloc_pd(a_.ctx);
  ASSERT_NE(pd, nullptr);
  garbled(pd->handle, [&] { return ibv_dealloc_pd(pd); });
  EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

TEST_P(Conformance, DeallocatingABusyPdIsEbusy) {
  open_a();
  ibv_pd* pd = ibv_alloc_pd(a_.ctx);
  ASSERT_NE(pd, nullptr);
  ibv_mr* mr = ibv_reg_mr(pd, a_.buf.data(), 4096, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  errno = 0;
  EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY);
  EXPECT_EQ(errno, EBUSY);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  ibv_mw* mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
  ASSERT_NE(mw, nullptr);
  errno = 0;
  EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY);
  EXPECT_EQ(errno, EBUSY);
  EXPECT_EQ(ibv_dealloc_mw(mw), 0);
  ibv_ah* ah = ah_to(pd, a_, gid());
  ASSERT_NE(ah, nullptr);
  errno = 0;
  EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY);
  EXPECT_EQ(errno, EBUSY);
  EXPECT_EQ(ibv_destroy_ah(ah), 0);
  EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

// ---- 7. RDMA and atomics posted on a UD QP

TEST_P(Conformance, RdmaOnUdIsPostedAndCompletesLocalQpOperationError) {
  for (ibv_wr_opcode op : {IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD}) {
    auto a = open_ud_side(GetParam().a, gid());
    RemoteOp o;
    o.op = op;
    o.remote_addr = remote_addr(*a);
    o.rkey = a->mr->rkey;
    ASSERT_EQ(post_remote(*a, 5, {sge(*a, 0, 8)}, o), 0) << "opcode " << op;
    const ibv_wc wc = wait_one(a->cq);
    EXPECT_EQ(wc.status, IBV_WC_LOC_QP_OP_ERR) << "opcode " << op;
    EXPECT_EQ(wc.wr_id, 5u);
  }
}

// ---- 8. READ/atomic local keys are checked when the response is placed

TEST_P(Conformance, BadRemoteKeyWinsOverBadLocalKey) {
  open_rc();
  RemoteOp o;
  o.op = IBV_WR_RDMA_READ;
  o.remote_addr = remote_addr(b_);
  o.rkey = b_.mr->rkey ^ 0x5500;
  ASSERT_EQ(post_remote(a_, 1, {ibv_sge{remote_addr(a_), 64, a_.mr->lkey ^ 0x5500}}, o), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_REM_ACCESS_ERR);
}

TEST_P(Conformance, UnalignedAtomicWithBadLocalKeyIsRemoteInvalidRequest) {
  open_rc();
  RemoteOp o;
  o.op = IBV_WR_ATOMIC_FETCH_AND_ADD;
  o.remote_addr = remote_addr(b_, 4);
  o.rkey = b_.mr->rkey;
  o.compare_add = 1;
  ASSERT_EQ(post_remote(a_, 1, {ibv_sge{remote_addr(a_), 8, a_.mr->lkey ^ 0x5500}}, o), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_REM_INV_REQ_ERR);
}

TEST_P(Conformance, AtomicWithBadLocalKeyExecutesRemotelyFirst) {
  open_rc();
  std::memset(b_.buf.data() + 64, 0, 8);
  RemoteOp o;
  o.op = IBV_WR_ATOMIC_CMP_AND_SWP;
  o.remote_addr = remote_addr(b_, 64);
  o.rkey = b_.mr->rkey;
  o.compare_add = 0;
  o.swap = 0x1122334455667788ull;
  ASSERT_EQ(post_remote(a_, 1, {ibv_sge{remote_addr(a_), 8, a_.mr->lkey ^ 0x5500}}, o), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(word(b_, 64), 0x1122334455667788ull) << "the swap executed at the responder";
}

// ---- 9. CQ arming: a wider request stays armed

TEST_P(Conformance, SolicitedOnlyRearmKeepsNextCompletionArmed) {
  open_rc();
  ibv_comp_channel* ch = ibv_create_comp_channel(a_.ctx);
  ASSERT_NE(ch, nullptr);
  ibv_cq* cq = ibv_create_cq(a_.ctx, 16, nullptr, ch, 0);
  ASSERT_NE(cq, nullptr);
  ASSERT_EQ(ibv_req_notify_cq(cq, 0), 0);
  ASSERT_EQ(ibv_req_notify_cq(cq, 1), 0);
  // An unsolicited completion on `cq`: a receive of a plain SEND, on a QP of
  // a_'s that b_ is connected to.
  ibv_qp_init_attr ia{};
  ia.send_cq = a_.cq;
  ia.recv_cq = cq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.sq_sig_all = 1;
  ibv_qp* old = a_.qp;
  a_.qp = ibv_create_qp(a_.pd, &ia);
  ASSERT_NE(a_.qp, nullptr);
  ibv_destroy_qp(old);
  to_state(b_.qp, IBV_QPS_RESET);
  connect_rc();
  ASSERT_EQ(post_recv(a_, 1, {sge(a_, 0, 64)}), 0);
  ASSERT_EQ(post_send(b_, 2, {sge(b_, 0, 64)}), 0);
  EXPECT_EQ(wait_one(b_).status, IBV_WC_SUCCESS);
  pollfd pfd{ch->fd, POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 5000), 1) << "the unsolicited completion raised no event";
  ibv_cq* ev_cq = nullptr;
  void* ctx = nullptr;
  if (pfd.revents & POLLIN) {
    ASSERT_EQ(ibv_get_cq_event(ch, &ev_cq, &ctx), 0);
    EXPECT_EQ(ev_cq, cq);
    ibv_ack_cq_events(cq, 1);
  }
  EXPECT_EQ(wait_one(cq).status, IBV_WC_SUCCESS);
  ibv_destroy_qp(a_.qp);
  a_.qp = nullptr;
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  EXPECT_EQ(ibv_destroy_comp_channel(ch), 0);
}

INSTANTIATE_TEST_SUITE_P(Fabrics, Conformance, ::testing::Values(kIbFabric, kRoceFabric),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
