// libibverbs driven directly, through the real provider and a real fabricd:
// data integrity and the IBA completion statuses of the error paths.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <ostream>
#include "verbs_fixture.hpp"

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

class Verbs : public ::testing::TestWithParam<FabricParam> {
 protected:
  void SetUp() override {
    SideParams p;
    p.gid_index = GetParam().gid_index;
    open_side(a_, GetParam().a, p);
    open_side(b_, GetParam().b, p);
  }
  void connect(ConnectParams c = {}) {
    c.gid_index = GetParam().gid_index;
    connect_to(a_, b_, c);
    connect_to(b_, a_, c);
  }
  VerbsSide a_, b_;
};

TEST_P(Verbs, MultiSgeSendLandsIntactAcrossPackets) {
  connect();
  // 3 send SGEs (100 KiB, many MTU-sized packets) into 2 receive SGEs.
  for (size_t i = 0; i < 102400; ++i) a_.buf[i] = char(i * 7 + 3);
  ASSERT_EQ(post_recv(b_, 1, {sge(b_, 0, 50000), sge(b_, 200000, 60000)}), 0);
  ASSERT_EQ(post_send(a_, 2, {sge(a_, 0, 1000), sge(a_, 1000, 51400), sge(a_, 52400, 50000)}), 0);
  ibv_wc s = wait_one(a_), r = wait_one(b_);
  ASSERT_EQ(s.status, IBV_WC_SUCCESS) << ibv_wc_status_str(s.status);
  ASSERT_EQ(r.status, IBV_WC_SUCCESS) << ibv_wc_status_str(r.status);
  EXPECT_EQ(s.opcode, IBV_WC_SEND);
  EXPECT_EQ(r.opcode, IBV_WC_RECV);
  EXPECT_EQ(r.byte_len, 102400u);
  EXPECT_EQ(r.wr_id, 1u);
  EXPECT_EQ(r.qp_num, b_.qp->qp_num);
  for (size_t i = 0; i < 102400; ++i) {
    const size_t dst = i < 50000 ? i : 200000 + (i - 50000);
    ASSERT_EQ(b_.buf[dst], char(i * 7 + 3)) << "byte " << i;
  }
}

TEST_P(Verbs, SendWithImmediateDeliversImmediate) {
  connect();
  ASSERT_EQ(post_recv(b_, 1, {sge(b_, 0, 64)}), 0);
  ASSERT_EQ(post_send(a_, 2, {sge(a_, 0, 16)}, IBV_WR_SEND_WITH_IMM, htobe32(0xC0FFEE)), 0);
  ibv_wc r = wait_one(b_);
  ASSERT_EQ(r.status, IBV_WC_SUCCESS) << ibv_wc_status_str(r.status);
  EXPECT_TRUE(r.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(be32toh(r.imm_data), 0xC0FFEEu);
  EXPECT_EQ(r.byte_len, 16u);
}

TEST_P(Verbs, SgeOutsideMrCompletesWithLocalProtectionError) {
  connect();
  ASSERT_EQ(post_recv(b_, 1, {sge(b_, 0, 4096)}), 0);
  // Starts inside the MR and runs 100 bytes past its end.
  ibv_sge bad = sge(a_, a_.buf.size() - 10, 110);
  ASSERT_EQ(post_send(a_, 7, {bad}), 0);
  ibv_wc wc = wait_one(a_);
  EXPECT_EQ(wc.status, IBV_WC_LOC_PROT_ERR) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.wr_id, 7u);
  // The QP is now in error: further work is flushed, not executed.
  ASSERT_EQ(post_send(a_, 8, {sge(a_, 0, 8)}), 0);
  wc = wait_one(a_);
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(wc.status);
}

TEST_P(Verbs, ForgedLkeyCompletesWithLocalProtectionError) {
  connect();
  ibv_sge forged = sge(a_, 0, 64);
  forged.lkey ^= 0x5a5a00;
  ASSERT_EQ(post_send(a_, 3, {forged}), 0);
  ibv_wc wc = wait_one(a_);
  EXPECT_EQ(wc.status, IBV_WC_LOC_PROT_ERR) << ibv_wc_status_str(wc.status);
}

TEST_P(Verbs, ReceiveTooSmallCompletesWithLocalLengthError) {
  connect();
  ASSERT_EQ(post_recv(b_, 1, {sge(b_, 0, 16)}), 0);
  ASSERT_EQ(post_send(a_, 2, {sge(a_, 0, 100)}), 0);
  ibv_wc r = wait_one(b_);
  EXPECT_EQ(r.status, IBV_WC_LOC_LEN_ERR) << ibv_wc_status_str(r.status);
  ibv_wc s = wait_one(a_);
  EXPECT_NE(s.status, IBV_WC_SUCCESS);  // the responder NAKs (invalid request)
}

TEST_P(Verbs, RnrRetryExhaustionWhenNoReceiveIsPosted) {
  ConnectParams c;
  c.rnr_retry = 1;
  c.min_rnr_timer = 1;  // 0.01 ms
  connect(c);
  ASSERT_EQ(post_send(a_, 5, {sge(a_, 0, 32)}), 0);
  ibv_wc wc = wait_one(a_);
  EXPECT_EQ(wc.status, IBV_WC_RNR_RETRY_EXC_ERR) << ibv_wc_status_str(wc.status);
}

TEST_P(Verbs, RegisteringMemoryTheProcessDoesNotOwnFails) {
  void* p = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  munmap(p, 1 << 20);
  errno = 0;
  ibv_mr* mr = ibv_reg_mr(a_.pd, p, 1 << 20, IBV_ACCESS_LOCAL_WRITE);
  EXPECT_EQ(mr, nullptr);
  EXPECT_NE(errno, 0);
  if (mr) ibv_dereg_mr(mr);
}

INSTANTIATE_TEST_SUITE_P(Fabrics, Verbs,
                         ::testing::Values(FabricParam{"InfiniBand", "vib0", "vib1", -1},
                                           FabricParam{"RoCEv2", "vroce0", "vroce1", 1}),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
