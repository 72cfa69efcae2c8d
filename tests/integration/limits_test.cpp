// What ibv_query_device / ibv_query_port advertise is what the device
// enforces: one past each limit fails the verb with the errno a hardware
// HCA (mlx5) gives, and the limit itself works.
#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

#include "verbs_fixture.hpp"

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

class Limits : public ::testing::TestWithParam<FabricParam> {
 protected:
  void SetUp() override {
    ctx_ = open_device(GetParam().a);
    ASSERT_EQ(ibv_query_device(ctx_, &da_), 0);
    pd_ = ibv_alloc_pd(ctx_);
    ASSERT_NE(pd_, nullptr);
    cq_ = ibv_create_cq(ctx_, 64, nullptr, nullptr, 0);
    ASSERT_NE(cq_, nullptr);
  }
  void TearDown() override {
    for (ibv_qp* q : qps_) ibv_destroy_qp(q);
    if (cq_) ibv_destroy_cq(cq_);
    if (pd_) ibv_dealloc_pd(pd_);
    if (ctx_) ibv_close_device(ctx_);
  }
  ibv_qp_init_attr qp_attr() const {
    ibv_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = cq_;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    return ia;
  }
  // Creates a QP with `ia`; returns 0 or the errno of the failure.
  int try_qp(ibv_qp_init_attr ia) {
    errno = 0;
    ibv_qp* q = ibv_create_qp(pd_, &ia);
    if (!q) return errno ? errno : -1;
    qps_.push_back(q);
    return 0;
  }
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_device_attr da_{};
  std::vector<ibv_qp*> qps_;
};

TEST_P(Limits, DeviceAttributesAreConsistent) {
  EXPECT_GT(da_.max_qp, 0);
  EXPECT_GT(da_.max_qp_wr, 0);
  EXPECT_GT(da_.max_sge, 0);
  EXPECT_GT(da_.max_cqe, 0);
  EXPECT_GT(da_.max_mr_size, 0u);
  EXPECT_GE(da_.max_res_rd_atom, da_.max_qp_rd_atom);
  ibv_device_attr_ex ex{};
  ASSERT_EQ(ibv_query_device_ex(ctx_, nullptr, &ex), 0);
  EXPECT_EQ(ex.orig_attr.max_qp_wr, da_.max_qp_wr);
  EXPECT_EQ(ex.orig_attr.atomic_cap, da_.atomic_cap);
  ibv_port_attr pa{};
  ASSERT_EQ(ibv_query_port(ctx_, 1, &pa), 0);
  EXPECT_EQ(pa.state, IBV_PORT_ACTIVE);
  EXPECT_LE(pa.active_mtu, pa.max_mtu);
  EXPECT_NE(ibv_query_port(ctx_, 2, &pa), 0) << "one port";
}

TEST_P(Limits, CqDepthAtTheLimitWorksAndOnePastFails) {
  ibv_cq* big = ibv_create_cq(ctx_, da_.max_cqe, nullptr, nullptr, 0);
  ASSERT_NE(big, nullptr) << "max_cqe itself must work";
  EXPECT_GE(big->cqe, da_.max_cqe);
  ibv_destroy_cq(big);
  errno = 0;
  EXPECT_EQ(ibv_create_cq(ctx_, da_.max_cqe + 1, nullptr, nullptr, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(ibv_create_cq(ctx_, 0, nullptr, nullptr, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST_P(Limits, QueueDepthAndSgeLimitsAreEnforced) {
  ibv_qp_init_attr ia = qp_attr();
  ia.cap.max_send_wr = uint32_t(da_.max_qp_wr);
  ia.cap.max_send_sge = uint32_t(da_.max_sge);
  EXPECT_EQ(try_qp(ia), 0) << "the advertised maxima themselves must work";
  ia = qp_attr();
  ia.cap.max_send_wr = uint32_t(da_.max_qp_wr) + 1;
  EXPECT_EQ(try_qp(ia), EINVAL);
  ia = qp_attr();
  ia.cap.max_recv_wr = uint32_t(da_.max_qp_wr) + 1;
  EXPECT_EQ(try_qp(ia), EINVAL);
  ia = qp_attr();
  ia.cap.max_send_sge = uint32_t(da_.max_sge) + 1;
  EXPECT_EQ(try_qp(ia), EINVAL);
  ia = qp_attr();
  ia.cap.max_recv_sge = uint32_t(da_.max_sge) + 1;
  EXPECT_EQ(try_qp(ia), EINVAL);
  ia = qp_attr();
  ia.cap.max_inline_data = 1u << 20;
  EXPECT_EQ(try_qp(ia), EINVAL);
}

TEST_P(Limits, GrantedCapsAreReportedBack) {
  ibv_qp_init_attr ia = qp_attr();
  ia.cap.max_send_wr = 5;
  ia.cap.max_inline_data = 32;
  ASSERT_EQ(try_qp(ia), 0);
  ibv_qp_attr at{};
  ibv_qp_init_attr got{};
  ASSERT_EQ(ibv_query_qp(qps_.back(), &at, IBV_QP_CAP, &got), 0);
  EXPECT_GE(got.cap.max_send_wr, 5u);
  EXPECT_GE(got.cap.max_inline_data, 32u);
}

TEST_P(Limits, PostingBeyondTheQueueOrSgeLimitFailsWithBadWr) {
  ibv_qp_init_attr ia = qp_attr();
  ASSERT_EQ(try_qp(ia), 0);
  ibv_qp* qp = qps_.back();
  ibv_qp_attr at{};
  ibv_qp_init_attr got{};
  ASSERT_EQ(ibv_query_qp(qp, &at, IBV_QP_CAP, &got), 0);
  std::vector<char> mem(64);
  ibv_mr* mr = ibv_reg_mr(pd_, mem.data(), mem.size(), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  ibv_sge g[2] = {{reinterpret_cast<uintptr_t>(mem.data()), 8, mr->lkey},
                  {reinterpret_cast<uintptr_t>(mem.data()) + 8, 8, mr->lkey}};
  // IBA: the receive queue takes work from INIT on.
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  ASSERT_EQ(ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
            0);
  ibv_recv_wr wr{}, *bad = nullptr;
  wr.sg_list = g;
  wr.num_sge = int(got.cap.max_recv_sge) + 1;
  EXPECT_EQ(ibv_post_recv(qp, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
  wr.num_sge = 1;
  unsigned posted = 0;
  int err = 0;
  while ((err = ibv_post_recv(qp, &wr, &bad)) == 0 && posted < 100000) ++posted;
  EXPECT_EQ(err, ENOMEM) << "a full receive queue";
  EXPECT_GE(posted, got.cap.max_recv_wr);
  EXPECT_EQ(bad, &wr);
  ibv_dereg_mr(mr);
}

TEST_P(Limits, MemoryRegistrationArgumentsAreChecked) {
  std::vector<char> mem(4096);
  errno = 0;
  // IBA: remote write or atomic access requires local write.
  EXPECT_EQ(ibv_reg_mr(pd_, mem.data(), mem.size(), IBV_ACCESS_REMOTE_WRITE), nullptr);
  EXPECT_EQ(errno, EINVAL);
  ibv_mr* empty = ibv_reg_mr(pd_, mem.data(), 0, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(empty, nullptr) << "a zero-byte region, as the kernel core registers one";
  EXPECT_EQ(ibv_dereg_mr(empty), 0);
  ibv_mr* mr = ibv_reg_mr(pd_, mem.data(), mem.size(), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(ibv_dealloc_pd(pd_), EBUSY) << "a PD with an MR cannot go";
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

INSTANTIATE_TEST_SUITE_P(Fabrics, Limits, ::testing::Values(kIbFabric, kRoceFabric),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
