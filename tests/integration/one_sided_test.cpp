// RDMA WRITE, READ and atomics through the real provider and a real fabricd,
// on both link layers: data lands where the IBA says, remote access is
// checked against the peer's MR, and the IBA statuses of the error paths.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>

#include "verbs_fixture.hpp"

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

constexpr int kRemoteAll =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
    IBV_ACCESS_REMOTE_ATOMIC;

SideParams one_sided_params(int gid_index, int mr_access = kRemoteAll) {
  SideParams p;
  p.gid_index = gid_index;
  p.mr_access = mr_access;
  p.inline_data = 64;
  return p;
}

ConnectParams one_sided_connect(int gid_index) {
  ConnectParams c;
  c.gid_index = gid_index;
  c.qp_access = kRemoteAll;
  c.rd_atomic = 4;
  return c;
}

class OneSided : public ::testing::TestWithParam<FabricParam> {
 protected:
  void open(int b_mr_access = kRemoteAll) {
    open_side(a_, GetParam().a, one_sided_params(GetParam().gid_index));
    open_side(b_, GetParam().b, one_sided_params(GetParam().gid_index, b_mr_access));
    connect_to(a_, b_, one_sided_connect(GetParam().gid_index));
    connect_to(b_, a_, one_sided_connect(GetParam().gid_index));
  }
  RemoteOp to_b(ibv_wr_opcode op, size_t offset = 0) {
    RemoteOp r;
    r.op = op;
    r.remote_addr = remote_addr(b_, offset);
    r.rkey = b_.mr->rkey;
    return r;
  }
  uint64_t b_word(size_t offset) {
    uint64_t v;
    std::memcpy(&v, b_.buf.data() + offset, 8);
    return v;
  }
  uint64_t a_word(size_t offset) {
    uint64_t v;
    std::memcpy(&v, a_.buf.data() + offset, 8);
    return v;
  }
  // The requester's WQE fails with `status`; both QPs end in ERR (the
  // responder after its NAK, the requester after the completion).
  void expect_remote_failure(ibv_wc_status status) {
    ibv_wc wc = wait_one(a_);
    EXPECT_EQ(wc.status, status) << ibv_wc_status_str(wc.status);
    EXPECT_EQ(qp_state(a_.qp), IBV_QPS_ERR);
    EXPECT_EQ(qp_state(b_.qp), IBV_QPS_ERR);
  }
  VerbsSide a_, b_;
};

TEST_P(OneSided, DeviceAdvertisesAtomicsAndReadResources) {
  open_side(a_, GetParam().a, one_sided_params(GetParam().gid_index));
  ibv_device_attr da{};
  ASSERT_EQ(ibv_query_device(a_.ctx, &da), 0);
  EXPECT_EQ(da.atomic_cap, IBV_ATOMIC_HCA);
  EXPECT_GE(da.max_qp_rd_atom, 1);
  EXPECT_GE(da.max_qp_init_rd_atom, 1);
}

TEST_P(OneSided, MultiSgeWriteLandsIntactAcrossPackets) {
  open();
  for (size_t i = 0; i < 100000; ++i) a_.buf[i] = char(i * 13 + 5);
  ASSERT_EQ(post_remote(a_, 7, {sge(a_, 0, 1000), sge(a_, 1000, 60000), sge(a_, 61000, 39000)},
                        to_b(IBV_WR_RDMA_WRITE, 4096)),
            0);
  ibv_wc wc = wait_one(a_);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(wc.wr_id, 7u);
  EXPECT_TRUE(std::equal(a_.buf.begin(), a_.buf.begin() + 100000, b_.buf.begin() + 4096));
  EXPECT_EQ(b_.buf[4095], 0);
  EXPECT_EQ(b_.buf[4096 + 100000], 0);
}

TEST_P(OneSided, WriteWithImmediateConsumesAReceive) {
  open();
  std::memset(a_.buf.data(), 'w', 3000);
  ASSERT_EQ(post_recv(b_, 11, {sge(b_, 500000, 16)}), 0);
  RemoteOp r = to_b(IBV_WR_RDMA_WRITE_WITH_IMM, 100);
  r.imm = htonl(0xC0FFEE);
  ASSERT_EQ(post_remote(a_, 12, {sge(a_, 0, 3000)}, r), 0);
  ibv_wc s = wait_one(a_), rc = wait_one(b_);
  ASSERT_EQ(s.status, IBV_WC_SUCCESS) << ibv_wc_status_str(s.status);
  ASSERT_EQ(rc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(rc.status);
  EXPECT_EQ(rc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(rc.wr_id, 11u);
  EXPECT_TRUE(rc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(ntohl(rc.imm_data), 0xC0FFEEu);
  EXPECT_EQ(rc.byte_len, 3000u);
  EXPECT_EQ(b_.buf[100], 'w');
  EXPECT_EQ(b_.buf[3099], 'w');
  EXPECT_EQ(b_.buf[500000], 0) << "the receive buffer is not written by WRITE_WITH_IMM";
}

TEST_P(OneSided, ZeroLengthWriteAndInlineWrite) {
  open();
  ASSERT_EQ(post_remote(a_, 1, {}, to_b(IBV_WR_RDMA_WRITE)), 0);
  ibv_wc wc = wait_one(a_);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  std::memcpy(a_.buf.data(), "inline-payload", 14);
  RemoteOp r = to_b(IBV_WR_RDMA_WRITE, 64);
  r.flags |= IBV_SEND_INLINE;
  ASSERT_EQ(post_remote(a_, 2, {sge(a_, 0, 14)}, r), 0);
  std::memset(a_.buf.data(), 0, 14);  // inline: the data was copied at post time
  wc = wait_one(a_);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 64, "inline-payload", 14), 0);
}

TEST_P(OneSided, MultiPacketReadScattersIntoLocalSges) {
  open();
  for (size_t i = 0; i < 90000; ++i) b_.buf[8192 + i] = char(i * 31 + 1);
  RemoteOp r = to_b(IBV_WR_RDMA_READ, 8192);
  ASSERT_EQ(post_remote(a_, 3, {sge(a_, 0, 40000), sge(a_, 100000, 50000)}, r), 0);
  ibv_wc wc = wait_one(a_);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.opcode, IBV_WC_RDMA_READ);
  EXPECT_EQ(wc.byte_len, 90000u);
  EXPECT_TRUE(std::equal(b_.buf.begin() + 8192, b_.buf.begin() + 8192 + 40000, a_.buf.begin()));
  EXPECT_TRUE(std::equal(b_.buf.begin() + 8192 + 40000, b_.buf.begin() + 8192 + 90000,
                         a_.buf.begin() + 100000));
}

TEST_P(OneSided, ReadAfterWriteOnOneQpSeesTheWrite) {
  open();
  std::memset(a_.buf.data(), 'x', 5000);
  ASSERT_EQ(post_remote(a_, 1, {sge(a_, 0, 5000)}, to_b(IBV_WR_RDMA_WRITE, 0)), 0);
  ASSERT_EQ(post_remote(a_, 2, {sge(a_, 200000, 5000)}, to_b(IBV_WR_RDMA_READ, 0)), 0);
  for (int i = 0; i < 2; ++i) {
    ibv_wc wc = wait_one(a_);
    ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  }
  EXPECT_TRUE(std::all_of(a_.buf.begin() + 200000, a_.buf.begin() + 205000,
                          [](char c) { return c == 'x'; }));
}

TEST_P(OneSided, FetchAddReturnsTheOldValue) {
  open();
  const uint64_t start = 0x1122334455667788ull;
  std::memcpy(b_.buf.data() + 64, &start, 8);
  RemoteOp r = to_b(IBV_WR_ATOMIC_FETCH_AND_ADD, 64);
  r.compare_add = 0x10;
  ASSERT_EQ(post_remote(a_, 5, {sge(a_, 8, 8)}, r), 0);
  ibv_wc wc = wait_one(a_);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.opcode, IBV_WC_FETCH_ADD);
  EXPECT_EQ(a_word(8), start);
  EXPECT_EQ(b_word(64), start + 0x10);
}

TEST_P(OneSided, CompareSwapSwapsOnlyOnEqual) {
  open();
  const uint64_t v = 42;
  std::memcpy(b_.buf.data() + 128, &v, 8);
  RemoteOp miss = to_b(IBV_WR_ATOMIC_CMP_AND_SWP, 128);
  miss.compare_add = 41;
  miss.swap = 1000;
  ASSERT_EQ(post_remote(a_, 1, {sge(a_, 0, 8)}, miss), 0);
  ibv_wc wc = wait_one(a_);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.opcode, IBV_WC_COMP_SWAP);
  EXPECT_EQ(a_word(0), 42u);
  EXPECT_EQ(b_word(128), 42u) << "compare failed: no swap";
  RemoteOp hit = miss;
  hit.compare_add = 42;
  ASSERT_EQ(post_remote(a_, 2, {sge(a_, 16, 8)}, hit), 0);
  wc = wait_one(a_);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(a_word(16), 42u);
  EXPECT_EQ(b_word(128), 1000u);
}

// Several QPs, each on its own context as separate processes would have,
// add 1 to one word at the same time -- half of them executed by one vHCA's
// responder, half by the other's. The word is registered in every
// responder's PD. Every old value returned is distinct and the word ends at
// the total, which only holds if no two adds interleave.
TEST_P(OneSided, ConcurrentFetchAddsFromSeveralQpsAreAtomic) {
  constexpr int kPairs = 4, kEach = 100;
  alignas(8) static uint64_t word;
  word = 0;
  std::vector<std::unique_ptr<VerbsSide>> req, rsp;
  std::vector<ibv_mr*> word_mrs;
  for (int q = 0; q < kPairs; ++q) {
    req.push_back(std::make_unique<VerbsSide>());
    rsp.push_back(std::make_unique<VerbsSide>());
    SideParams p = one_sided_params(GetParam().gid_index);
    p.send_wr = 2 * kEach;
    p.cqe = 4 * kEach;
    p.buf_bytes = 8 * kEach;
    const bool flip = q % 2;  // odd pairs: requester on b, responder on a
    open_side(*req.back(), flip ? GetParam().b : GetParam().a, p);
    open_side(*rsp.back(), flip ? GetParam().a : GetParam().b, p);
    connect_to(*req.back(), *rsp.back(), one_sided_connect(GetParam().gid_index));
    connect_to(*rsp.back(), *req.back(), one_sided_connect(GetParam().gid_index));
    word_mrs.push_back(ibv_reg_mr(rsp.back()->pd, &word, sizeof(word), kRemoteAll));
    ASSERT_NE(word_mrs.back(), nullptr);
  }
  for (int i = 0; i < kEach; ++i)
    for (size_t q = 0; q < kPairs; ++q) {
      RemoteOp r;
      r.op = IBV_WR_ATOMIC_FETCH_AND_ADD;
      r.remote_addr = reinterpret_cast<uintptr_t>(&word);
      r.rkey = word_mrs[q]->rkey;
      r.compare_add = 1;
      ASSERT_EQ(post_remote(*req[q], uint64_t(i), {sge(*req[q], size_t(i) * 8, 8)}, r), 0);
    }
  std::set<uint64_t> seen;
  for (size_t q = 0; q < kPairs; ++q)
    for (int i = 0; i < kEach; ++i) {
      ibv_wc wc = wait_one(*req[q]);
      ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
      uint64_t old;
      std::memcpy(&old, req[q]->buf.data() + wc.wr_id * 8, 8);
      seen.insert(old);
    }
  EXPECT_EQ(seen.size(), size_t(kPairs * kEach)) << "two adds returned the same old value";
  EXPECT_EQ(*seen.rbegin(), uint64_t(kPairs * kEach - 1));
  EXPECT_EQ(word, uint64_t(kPairs * kEach));
  for (ibv_mr* mr : word_mrs) ibv_dereg_mr(mr);
}

TEST_P(OneSided, ForgedRkeyGivesRemoteAccessError) {
  open();
  RemoteOp r = to_b(IBV_WR_RDMA_WRITE);
  r.rkey ^= 0x5a5a0000;
  ASSERT_EQ(post_remote(a_, 1, {sge(a_, 0, 64)}, r), 0);
  expect_remote_failure(IBV_WC_REM_ACCESS_ERR);
}

TEST_P(OneSided, WriteWithoutRemoteWriteAccessGivesRemoteAccessError) {
  open(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  ASSERT_EQ(post_remote(a_, 1, {sge(a_, 0, 64)}, to_b(IBV_WR_RDMA_WRITE)), 0);
  expect_remote_failure(IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(b_.buf[0], 0);
}

TEST_P(OneSided, ReadWithoutRemoteReadAccessGivesRemoteAccessError) {
  open(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  ASSERT_EQ(post_remote(a_, 1, {sge(a_, 0, 64)}, to_b(IBV_WR_RDMA_READ)), 0);
  expect_remote_failure(IBV_WC_REM_ACCESS_ERR);
}

TEST_P(OneSided, AtomicWithoutRemoteAtomicAccessGivesRemoteAccessError) {
  open(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  RemoteOp r = to_b(IBV_WR_ATOMIC_FETCH_AND_ADD);
  r.compare_add = 1;
  ASSERT_EQ(post_remote(a_, 1, {sge(a_, 0, 8)}, r), 0);
  expect_remote_failure(IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(b_word(0), 0u);
}

TEST_P(OneSided, ReadBeyondTheRegionGivesRemoteAccessError) {
  open();
  RemoteOp r = to_b(IBV_WR_RDMA_READ, b_.buf.size() - 100);
  ASSERT_EQ(post_remote(a_, 1, {sge(a_, 0, 200)}, r), 0);
  expect_remote_failure(IBV_WC_REM_ACCESS_ERR);
}

TEST_P(OneSided, RkeyOfAnotherProtectionDomainGivesRemoteAccessError) {
  open();
  ibv_pd* other = ibv_alloc_pd(b_.ctx);
  ASSERT_NE(other, nullptr);
  std::vector<char> mem(4096, 0);
  ibv_mr* mr = ibv_reg_mr(other, mem.data(), mem.size(), kRemoteAll);
  ASSERT_NE(mr, nullptr);
  RemoteOp r;
  r.op = IBV_WR_RDMA_WRITE;
  r.remote_addr = reinterpret_cast<uintptr_t>(mem.data());
  r.rkey = mr->rkey;
  ASSERT_EQ(post_remote(a_, 1, {sge(a_, 0, 64)}, r), 0);
  expect_remote_failure(IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(mem[0], 0);
  ibv_dereg_mr(mr);
  ibv_dealloc_pd(other);
}

TEST_P(OneSided, MisalignedAtomicGivesRemoteInvalidRequest) {
  open();
  RemoteOp r = to_b(IBV_WR_ATOMIC_FETCH_AND_ADD, 4);
  r.compare_add = 1;
  ASSERT_EQ(post_remote(a_, 1, {sge(a_, 0, 8)}, r), 0);
  expect_remote_failure(IBV_WC_REM_INV_REQ_ERR);
}

TEST_P(OneSided, WorkAfterARemoteErrorIsFlushed) {
  open();
  RemoteOp bad = to_b(IBV_WR_RDMA_WRITE);
  bad.rkey ^= 0x00ff0000;
  ASSERT_EQ(post_remote(a_, 1, {sge(a_, 0, 64)}, bad), 0);
  ASSERT_EQ(post_remote(a_, 2, {sge(a_, 0, 64)}, to_b(IBV_WR_RDMA_WRITE)), 0);
  ibv_wc first = wait_one(a_), second = wait_one(a_);
  EXPECT_EQ(first.wr_id, 1u);
  EXPECT_EQ(first.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(first.status);
  EXPECT_EQ(second.wr_id, 2u);
  EXPECT_EQ(second.status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(second.status);
}

TEST_P(OneSided, RdAtomicAboveTheDeviceLimitIsRejected) {
  open_side(a_, GetParam().a, one_sided_params(GetParam().gid_index));
  ibv_device_attr da{};
  ASSERT_EQ(ibv_query_device(a_.ctx, &da), 0);
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qp_access_flags = kRemoteAll;
  ASSERT_EQ(ibv_modify_qp(a_.qp, &at,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
            0);
  at = {};
  at.qp_state = IBV_QPS_RTR;
  at.path_mtu = IBV_MTU_1024;
  at.dest_qp_num = a_.qp->qp_num;
  at.max_dest_rd_atomic = uint8_t(da.max_qp_rd_atom + 1);
  at.ah_attr.dlid = a_.port.lid ? a_.port.lid : 1;
  at.ah_attr.port_num = 1;
  if (GetParam().gid_index >= 0) {
    at.ah_attr.is_global = 1;
    at.ah_attr.grh.dgid = a_.gid;
    at.ah_attr.grh.sgid_index = uint8_t(GetParam().gid_index);
    at.ah_attr.grh.hop_limit = 64;
  }
  EXPECT_EQ(ibv_modify_qp(a_.qp, &at,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
            EINVAL);
}

INSTANTIATE_TEST_SUITE_P(Fabrics, OneSided, ::testing::Values(kIbFabric, kRoceFabric),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
