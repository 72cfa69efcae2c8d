// Verbs called with bad arguments fail the way mlx5 fails them (errno and
// bad_wr), through the real provider and fabricd; and without the preload
// shim a completion channel cannot be made, cleanly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>
#include "verbs_fixture.hpp"

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

class VerbArgs : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = open_device("vib0");
    ASSERT_EQ(ibv_query_device(ctx_, &dev_), 0);
    pd_ = ibv_alloc_pd(ctx_);
    ASSERT_NE(pd_, nullptr);
    buf_.assign(4096, 0);
    mr_ = ibv_reg_mr(pd_, buf_.data(), buf_.size(), IBV_ACCESS_LOCAL_WRITE);
    ASSERT_NE(mr_, nullptr);
    cq_ = ibv_create_cq(ctx_, 64, nullptr, nullptr, 0);
    ASSERT_NE(cq_, nullptr);
  }
  void TearDown() override {
    for (auto* q : qps_) ibv_destroy_qp(q);
    if (cq_) ibv_destroy_cq(cq_);
    if (mr_) ibv_dereg_mr(mr_);
    if (pd_) ibv_dealloc_pd(pd_);
    if (ctx_) ibv_close_device(ctx_);
  }
  ibv_qp_init_attr rc_attr(uint32_t send_wr = 8, uint32_t sge = 2, uint32_t inl = 0) {
    ibv_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = cq_;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = send_wr;
    ia.cap.max_recv_wr = 8;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = sge;
    ia.cap.max_inline_data = inl;
    return ia;
  }
  // A RESET QP: the engine never consumes its SQ, so posts stay queued.
  ibv_qp* make_qp(ibv_qp_init_attr ia) {
    ibv_qp* q = ibv_create_qp(pd_, &ia);
    if (q) qps_.push_back(q);
    return q;
  }
  ibv_sge sg(uint32_t off = 0, uint32_t len = 16) {
    return ibv_sge{reinterpret_cast<uintptr_t>(buf_.data() + off), len, mr_->lkey};
  }

  ibv_context* ctx_ = nullptr;
  ibv_device_attr dev_{};
  ibv_pd* pd_ = nullptr;
  ibv_mr* mr_ = nullptr;
  ibv_cq* cq_ = nullptr;
  std::vector<ibv_qp*> qps_;
  std::vector<char> buf_;
};

TEST_F(VerbArgs, CreateCqBeyondMaxCqeOrEmptyIsEinval) {
  errno = 0;
  EXPECT_EQ(ibv_create_cq(ctx_, dev_.max_cqe + 1, nullptr, nullptr, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(ibv_create_cq(ctx_, 0, nullptr, nullptr, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(ibv_create_cq(ctx_, 4, nullptr, nullptr, ctx_->num_comp_vectors), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(VerbArgs, CreateQpBeyondDeviceLimitsIsEinval) {
  errno = 0;
  EXPECT_EQ(make_qp(rc_attr(uint32_t(dev_.max_qp_wr) + 1)), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(make_qp(rc_attr(8, uint32_t(dev_.max_sge) + 1)), nullptr);
  EXPECT_EQ(errno, EINVAL);
  auto ia = rc_attr();
  ia.send_cq = nullptr;
  errno = 0;
  EXPECT_EQ(make_qp(ia), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(VerbArgs, PostSendWithTooManySgesIsEinvalAtThatWr) {
  ibv_qp* q = make_qp(rc_attr(8, 2));
  ASSERT_NE(q, nullptr);
  std::vector<ibv_sge> sges{sg(0), sg(16), sg(32)};
  ibv_send_wr wr[2]{};
  wr[0].wr_id = 1;
  wr[0].opcode = IBV_WR_SEND;
  wr[0].sg_list = sges.data();
  wr[0].num_sge = 1;
  wr[0].next = &wr[1];
  wr[1] = wr[0];
  wr[1].next = nullptr;
  wr[1].num_sge = 3;
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(q, wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr[1]);
}

TEST_F(VerbArgs, PostSendWithUnknownOpcodeIsEinval) {
  ibv_qp* q = make_qp(rc_attr());
  ASSERT_NE(q, nullptr);
  ibv_sge s = sg();
  ibv_send_wr wr{};
  wr.opcode = static_cast<ibv_wr_opcode>(77);
  wr.sg_list = &s;
  wr.num_sge = 1;
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(q, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
}

// mlx5 (set_data_inl_seg) answers ENOMEM for inline data over
// max_inline_data; rxe says EINVAL. We follow mlx5.
TEST_F(VerbArgs, PostSendInlineBeyondMaxInlineIsEnomem) {
  auto ia = rc_attr(8, 2, 32);
  ibv_qp* q = make_qp(ia);
  ASSERT_NE(q, nullptr);
  ibv_sge s = sg(0, ia.cap.max_inline_data + 1);
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_INLINE;
  wr.sg_list = &s;
  wr.num_sge = 1;
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(q, &wr, &bad), ENOMEM);
  EXPECT_EQ(bad, &wr);
  s.length = ia.cap.max_inline_data;
  EXPECT_EQ(ibv_post_send(q, &wr, &bad), 0);
}

TEST_F(VerbArgs, PostSendPastAFullSqIsEnomemAtTheFirstWrThatDoesNotFit) {
  auto ia = rc_attr(4);
  ibv_qp* q = make_qp(ia);
  ASSERT_NE(q, nullptr);
  const uint32_t room = ia.cap.max_send_wr;  // what was granted
  ASSERT_GE(room, 4u);
  ibv_sge s = sg();
  std::vector<ibv_send_wr> wrs(room + 2);
  for (size_t i = 0; i < wrs.size(); ++i) {
    wrs[i].wr_id = i;
    wrs[i].opcode = IBV_WR_SEND;
    wrs[i].sg_list = &s;
    wrs[i].num_sge = 1;
    wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(q, wrs.data(), &bad), ENOMEM);
  EXPECT_EQ(bad, &wrs[room]);
}

TEST_F(VerbArgs, PostRecvWithTooManySgesIsEinval) {
  ibv_qp* q = make_qp(rc_attr(8, 1));
  ASSERT_NE(q, nullptr);
  std::vector<ibv_sge> sges{sg(0), sg(16)};
  ibv_recv_wr wr{};
  wr.sg_list = sges.data();
  wr.num_sge = 2;
  ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_recv(q, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
}

TEST_F(VerbArgs, UdSendNeedsAnAh) {
  ibv_qp_init_attr ia = rc_attr();
  ia.qp_type = IBV_QPT_UD;
  ibv_qp* q = make_qp(ia);
  ASSERT_NE(q, nullptr) << strerror(errno);
  ibv_sge s = sg();
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = &s;
  wr.num_sge = 1;
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(q, &wr, &bad), EINVAL);  // no AH
  EXPECT_EQ(bad, &wr);
  // RDMA on UD is posted and completes in error (conformance_test.cpp).
  wr.opcode = IBV_WR_RDMA_WRITE;
  EXPECT_EQ(ibv_post_send(q, &wr, &bad), 0);
}

TEST_F(VerbArgs, PostRecvOnAQpThatUsesAnSrqIsEinval) {
  ibv_srq_init_attr sa{};
  sa.attr.max_wr = 8;
  sa.attr.max_sge = 1;
  ibv_srq* srq = ibv_create_srq(pd_, &sa);
  ASSERT_NE(srq, nullptr) << strerror(errno);
  auto ia = rc_attr();
  ia.srq = srq;
  ibv_qp* q = ibv_create_qp(pd_, &ia);
  ASSERT_NE(q, nullptr) << strerror(errno);
  ibv_sge s = sg();
  ibv_recv_wr wr{};
  wr.sg_list = &s;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_recv(q, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
  EXPECT_EQ(ibv_post_srq_recv(srq, &wr, &bad), 0);
  EXPECT_EQ(ibv_destroy_qp(q), 0);
  EXPECT_EQ(ibv_destroy_srq(srq), 0);
}

// Without libvhca-preload libibverbs' own ibv_create_comp_channel runs: its
// kernel command fails on our cmd_fd, and the context is unharmed.
TEST_F(VerbArgs, CompletionChannelWithoutThePreloadFailsCleanly) {
  errno = 0;
  EXPECT_EQ(ibv_create_comp_channel(ctx_), nullptr);
  EXPECT_NE(errno, 0);
  ibv_pd* pd = ibv_alloc_pd(ctx_);
  ASSERT_NE(pd, nullptr);
  EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

// Arming a CQ without a channel is legal: nothing is delivered, nothing breaks.
TEST_F(VerbArgs, ArmingACqWithoutAChannelIsHarmless) {
  EXPECT_EQ(ibv_req_notify_cq(cq_, 0), 0);
  EXPECT_EQ(ibv_req_notify_cq(cq_, 1), 0);
  ibv_wc wc;
  EXPECT_EQ(ibv_poll_cq(cq_, 1, &wc), 0);
}

}  // namespace
}  // namespace vf::test
