// The extended verbs through the real libibverbs, provider and fabricd, on
// both link layers: CQs read with ibv_start_poll / ibv_next_poll /
// ibv_wc_read_* (every field against what ibv_poll_cq reports for the same
// traffic, completion timestamps in the device's emulated clock), and QPs
// posted with ibv_wr_* (every opcode's data checked where it lands, batches
// rolled back on error or abort).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <sys/mman.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "verbs_fixture.hpp"

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

constexpr int kRemoteAll =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
constexpr uint64_t kWcFlags = uint64_t(IBV_WC_STANDARD_FLAGS) | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
constexpr uint64_t kRcOps = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
                            IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
                            IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

// A side whose CQ is a CQ_EX and whose QP (of `type`) was made by
// ibv_create_qp_ex with `send_ops` (0: no SEND_OPS_FLAGS, a plain QP).
struct ExSide {
  VerbsSide v;
  ibv_cq_ex* cqx = nullptr;
  ibv_qp_ex* qpx = nullptr;
};

void open_ex_side(ExSide& s, const FabricParam& f, const char* dev, ibv_qp_type type, uint64_t send_ops) {
  VerbsSide& v = s.v;
  v.ctx = open_device(dev);
  check(ibv_query_port(v.ctx, 1, &v.port), "ibv_query_port");
  if (f.gid_index >= 0) check(ibv_query_gid(v.ctx, 1, f.gid_index, &v.gid) ? errno : 0, "ibv_query_gid");
  v.pd = ibv_alloc_pd(v.ctx);
  if (!v.pd) check(errno, "ibv_alloc_pd");
  v.buf.assign(1 << 16, 0);
  v.mr = ibv_reg_mr(v.pd, v.buf.data(), v.buf.size(), kRemoteAll);
  if (!v.mr) check(errno, "ibv_reg_mr");
  ibv_cq_init_attr_ex ca{};
  ca.cqe = 256;
  ca.wc_flags = kWcFlags;
  s.cqx = ibv_create_cq_ex(v.ctx, &ca);
  if (!s.cqx) check(errno, "ibv_create_cq_ex");
  v.cq = ibv_cq_ex_to_cq(s.cqx);
  ibv_qp_init_attr_ex qa{};
  qa.send_cq = qa.recv_cq = v.cq;
  qa.qp_type = type;
  qa.cap.max_send_wr = qa.cap.max_recv_wr = 64;
  qa.cap.max_send_sge = qa.cap.max_recv_sge = 4;
  qa.cap.max_inline_data = 64;
  qa.sq_sig_all = 1;  // the classic posts here do not ask for completions
  qa.comp_mask = IBV_QP_INIT_ATTR_PD;
  qa.pd = v.pd;
  if (send_ops) {
    qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    qa.send_ops_flags = send_ops;
  }
  v.qp = ibv_create_qp_ex(v.ctx, &qa);
  if (!v.qp) check(errno, "ibv_create_qp_ex");
  s.qpx = ibv_qp_to_qp_ex(v.qp);
}

void connect_rc(ExSide& a, ExSide& b, const FabricParam& f) {
  ConnectParams c;
  c.gid_index = f.gid_index;
  c.qp_access = kRemoteAll;
  c.rd_atomic = 4;
  connect_to(a.v, b.v, c);
  connect_to(b.v, a.v, c);
}

// One completion as ibv_wc_read_* report it, in struct ibv_wc terms.
ibv_wc read_current(ibv_cq_ex* cq, uint64_t* ts) {
  ibv_wc wc{};
  wc.wr_id = cq->wr_id;
  wc.status = cq->status;
  wc.opcode = ibv_wc_read_opcode(cq);
  wc.vendor_err = ibv_wc_read_vendor_err(cq);
  wc.byte_len = ibv_wc_read_byte_len(cq);
  wc.imm_data = ibv_wc_read_imm_data(cq);
  wc.qp_num = ibv_wc_read_qp_num(cq);
  wc.src_qp = ibv_wc_read_src_qp(cq);
  wc.wc_flags = ibv_wc_read_wc_flags(cq);
  wc.slid = uint16_t(ibv_wc_read_slid(cq));
  wc.sl = ibv_wc_read_sl(cq);
  wc.dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
  *ts = ibv_wc_read_completion_ts(cq);
  return wc;
}

// The next `want` completions on `cq`, read in start/next/end passes; the
// deadline only bounds a hang.
std::vector<ibv_wc> poll_ex(ibv_cq_ex* cq, size_t want, std::vector<uint64_t>* ts = nullptr) {
  std::vector<ibv_wc> out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (out.size() < want && std::chrono::steady_clock::now() < deadline) {
    ibv_poll_cq_attr attr{};
    if (ibv_start_poll(cq, &attr) == ENOENT) continue;
    int ret = 0;
    do {
      uint64_t t = 0;
      out.push_back(read_current(cq, &t));
      if (ts) ts->push_back(t);
    } while (out.size() < want && (ret = ibv_next_poll(cq)) == 0);
    if (out.size() < want) {
      EXPECT_EQ(ret, ENOENT);
    }
    ibv_end_poll(cq);
  }
  EXPECT_EQ(out.size(), want) << "completions within 30 s";
  return out;
}

void fill(VerbsSide& s, size_t off, size_t len, uint8_t seed) {
  for (size_t i = 0; i < len; ++i) s.buf[off + i] = char(seed + i * 7);
}
bool same(const VerbsSide& a, size_t a_off, const VerbsSide& b, size_t b_off, size_t len) {
  return std::memcmp(a.buf.data() + a_off, b.buf.data() + b_off, len) == 0;
}
uint64_t word(const VerbsSide& s, size_t off) {
  uint64_t v;
  std::memcpy(&v, s.buf.data() + off, 8);
  return v;
}
uint64_t addr(const VerbsSide& s, size_t off) { return reinterpret_cast<uintptr_t>(s.buf.data() + off); }

class CqEx : public ::testing::TestWithParam<FabricParam> {
 protected:
  void SetUp() override {
    open_ex_side(a_, GetParam(), GetParam().a, IBV_QPT_RC, 0);
    open_ex_side(b_, GetParam(), GetParam().b, IBV_QPT_RC, 0);
    connect_rc(a_, b_, GetParam());
  }
  ExSide a_, b_;
};

// The same SEND_WITH_IMM twice: the receive read field by field through the
// CQ_EX equals what ibv_poll_cq gives for its twin (the same CQ serves both).
TEST_P(CqEx, EveryReadFieldMatchesPollCq) {
  fill(a_.v, 0, 100, 3);
  for (uint64_t id : {1, 2}) ASSERT_EQ(post_recv(b_.v, 10 + id, {sge(b_.v, 0, 256)}), 0);
  ASSERT_EQ(post_send(a_.v, 1, {sge(a_.v, 0, 100)}, IBV_WR_SEND_WITH_IMM, htonl(0xC0FFEE)), 0);
  ASSERT_EQ(post_send(a_.v, 2, {sge(a_.v, 0, 100)}, IBV_WR_SEND_WITH_IMM, htonl(0xC0FFEE)), 0);
  std::vector<uint64_t> ts;
  const auto ex = poll_ex(b_.cqx, 1, &ts);
  const ibv_wc legacy = wait_one(b_.v.cq);
  ASSERT_EQ(ex.size(), 1u);
  const ibv_wc& e = ex[0];
  EXPECT_EQ(e.wr_id, 11u);
  EXPECT_EQ(legacy.wr_id, 12u);
  EXPECT_EQ(e.status, IBV_WC_SUCCESS);
  EXPECT_EQ(e.opcode, IBV_WC_RECV);
  EXPECT_EQ(e.byte_len, 100u);
  EXPECT_EQ(ntohl(e.imm_data), 0xC0FFEEu);
  EXPECT_EQ(e.qp_num, b_.v.qp->qp_num);
  EXPECT_EQ(e.src_qp, a_.v.qp->qp_num);
  EXPECT_TRUE(e.wc_flags & IBV_WC_WITH_IMM);
  for (auto f : {&ibv_wc::vendor_err, &ibv_wc::byte_len, &ibv_wc::imm_data, &ibv_wc::qp_num, &ibv_wc::src_qp})
    EXPECT_EQ(e.*f, legacy.*f);
  EXPECT_EQ(e.status, legacy.status);
  EXPECT_EQ(e.opcode, legacy.opcode);
  EXPECT_EQ(e.wc_flags, legacy.wc_flags);
  EXPECT_EQ(e.slid, legacy.slid);
  EXPECT_EQ(e.sl, legacy.sl);
  EXPECT_EQ(e.dlid_path_bits, legacy.dlid_path_bits);
  EXPECT_GT(ts[0], 0u);
  EXPECT_TRUE(same(a_.v, 0, b_.v, 0, 100));
}

// Completion timestamps are the device's emulated clock (hca_core_clock
// 1 GHz): the sender's completion waits for the ACK, so it is stamped after
// the receiver's, and stamps never go back.
TEST_P(CqEx, TimestampsFollowTheFabricsClock) {
  ibv_device_attr_ex da{};
  ASSERT_EQ(ibv_query_device_ex(a_.v.ctx, nullptr, &da), 0);
  EXPECT_EQ(da.hca_core_clock, 1000000u) << "kHz";
  EXPECT_NE(da.completion_timestamp_mask, 0u);
  std::vector<uint64_t> sent_ts, recv_ts;
  for (uint64_t i = 0; i < 8; ++i) {
    ASSERT_EQ(post_recv(b_.v, i, {sge(b_.v, 0, 64)}), 0);
    ASSERT_EQ(post_send(a_.v, i, {sge(a_.v, 0, 64)}), 0);
    poll_ex(b_.cqx, 1, &recv_ts);
    poll_ex(a_.cqx, 1, &sent_ts);
  }
  ASSERT_EQ(sent_ts.size(), 8u);
  ASSERT_EQ(recv_ts.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_GT(sent_ts[i], recv_ts[i]) << "send " << i << " completed before its data arrived";
    if (i) {
      EXPECT_GT(recv_ts[i], sent_ts[i - 1]) << i;
    }
  }
}

// ibv_query_rt_values_ex reads the clock the completions are stamped with
// (as mlx5 returns its cycle counter in tv_nsec): a completion falls between
// two readings taken around it.
TEST_P(CqEx, RtValuesReadTheClockCompletionsAreStampedWith) {
  auto clock = [&] {
    ibv_values_ex v{};
    v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
    EXPECT_EQ(ibv_query_rt_values_ex(a_.v.ctx, &v), 0);
    EXPECT_EQ(v.comp_mask, uint32_t(IBV_VALUES_MASK_RAW_CLOCK));
    EXPECT_EQ(v.raw_clock.tv_sec, 0);
    return uint64_t(v.raw_clock.tv_nsec);
  };
  const uint64_t before = clock();
  ASSERT_EQ(post_recv(b_.v, 1, {sge(b_.v, 0, 64)}), 0);
  ASSERT_EQ(post_send(a_.v, 1, {sge(a_.v, 0, 64)}), 0);
  std::vector<uint64_t> ts;
  poll_ex(a_.cqx, 1, &ts);
  poll_ex(b_.cqx, 1);
  const uint64_t after = clock();
  ASSERT_EQ(ts.size(), 1u);
  EXPECT_LE(before, ts[0]);
  EXPECT_LE(ts[0], after);
  EXPECT_LT(before, after) << "the fabric's clock runs";
  ibv_values_ex bad{};
  bad.comp_mask = IBV_VALUES_MASK_RAW_CLOCK | (1u << 7);
  EXPECT_EQ(ibv_query_rt_values_ex(a_.v.ctx, &bad), EINVAL) << "an unknown request bit";
}

// Many completions in one pass, oldest first; an empty CQ is ENOENT from
// start_poll (and end_poll is not called); a bad attribute is EINVAL.
TEST_P(CqEx, ABatchIsReadInOrderAndAnEmptyCqIsEnoent) {
  ibv_poll_cq_attr attr{};
  EXPECT_EQ(ibv_start_poll(a_.cqx, &attr), ENOENT);
  attr.comp_mask = 1;
  EXPECT_EQ(ibv_start_poll(a_.cqx, &attr), EINVAL);
  constexpr int kN = 40;
  for (int i = 0; i < kN; ++i) ASSERT_EQ(post_recv(b_.v, 100 + i, {sge(b_.v, 0, 64)}), 0);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(post_send(a_.v, i, {sge(a_.v, 0, 32)}), 0);
  const auto sent = poll_ex(a_.cqx, kN);
  const auto got = poll_ex(b_.cqx, kN);
  ASSERT_EQ(sent.size(), size_t(kN));
  ASSERT_EQ(got.size(), size_t(kN));
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(sent[i].wr_id, uint64_t(i));
    EXPECT_EQ(sent[i].opcode, IBV_WC_SEND);
    EXPECT_EQ(got[i].wr_id, uint64_t(100 + i));
    EXPECT_EQ(got[i].byte_len, 32u);
  }
  attr.comp_mask = 0;
  EXPECT_EQ(ibv_start_poll(b_.cqx, &attr), ENOENT);
}

class QpEx : public ::testing::TestWithParam<FabricParam> {
 protected:
  void open(uint64_t a_ops = kRcOps) {
    open_ex_side(a_, GetParam(), GetParam().a, IBV_QPT_RC, a_ops);
    open_ex_side(b_, GetParam(), GetParam().b, IBV_QPT_RC, 0);
    connect_rc(a_, b_, GetParam());
  }
  ExSide a_, b_;
};

// One batch with every opcode: each one's data is where the IBA puts it.
TEST_P(QpEx, EveryOpcodeInOneBatchLandsItsData) {
  open();
  ASSERT_NE(a_.qpx, nullptr);
  EXPECT_EQ(ibv_qp_to_qp_ex(b_.v.qp), nullptr) << "a QP made without SEND_OPS_FLAGS";
  fill(a_.v, 0, 256, 1);       // WRITE source
  fill(a_.v, 512, 128, 2);     // SEND source, two SGEs
  fill(b_.v, 1024, 200, 3);    // READ source
  std::memcpy(b_.v.buf.data() + 2048, "\x07\0\0\0\0\0\0\0", 8);
  const uint64_t cas_old = 0x1111222233334444;
  std::memcpy(b_.v.buf.data() + 2056, &cas_old, 8);
  const char inl1[] = "inline-one|", inl2[] = "inline-two";
  for (uint64_t id : {50, 51, 52}) ASSERT_EQ(post_recv(b_.v, id, {sge(b_.v, 8192 + (id - 50) * 256, 256)}), 0);

  ibv_qp_ex* q = a_.qpx;
  ibv_wr_start(q);
  q->wr_flags = IBV_SEND_SIGNALED;
  q->wr_id = 1;
  ibv_wr_rdma_write(q, b_.v.mr->rkey, addr(b_.v, 0));
  ibv_wr_set_sge(q, a_.v.mr->lkey, addr(a_.v, 0), 256);
  q->wr_id = 2;
  ibv_wr_rdma_write_imm(q, b_.v.mr->rkey, addr(b_.v, 4096), htonl(0xABCD));
  ibv_wr_set_inline_data(q, const_cast<char*>(inl1), sizeof(inl1) - 1);
  q->wr_id = 3;
  ibv_wr_send(q);
  const ibv_sge two[] = {sge(a_.v, 512, 64), sge(a_.v, 576, 64)};
  ibv_wr_set_sge_list(q, 2, two);
  q->wr_id = 4;
  ibv_wr_send_imm(q, htonl(0x1234));
  const ibv_data_buf bufs[] = {{const_cast<char*>(inl1), sizeof(inl1) - 1}, {const_cast<char*>(inl2), sizeof(inl2) - 1}};
  ibv_wr_set_inline_data_list(q, 2, bufs);
  q->wr_id = 5;
  ibv_wr_rdma_read(q, b_.v.mr->rkey, addr(b_.v, 1024));
  ibv_wr_set_sge(q, a_.v.mr->lkey, addr(a_.v, 16384), 200);
  q->wr_id = 6;
  ibv_wr_atomic_fetch_add(q, b_.v.mr->rkey, addr(b_.v, 2048), 5);
  ibv_wr_set_sge(q, a_.v.mr->lkey, addr(a_.v, 20000 & ~7u), 8);
  q->wr_id = 7;
  ibv_wr_atomic_cmp_swp(q, b_.v.mr->rkey, addr(b_.v, 2056), cas_old, 42);
  ibv_wr_set_sge(q, a_.v.mr->lkey, addr(a_.v, 20008 & ~7u), 8);
  ASSERT_EQ(ibv_wr_complete(q), 0);

  const auto sent = poll_ex(a_.cqx, 7);
  ASSERT_EQ(sent.size(), 7u);
  const ibv_wc_opcode ops[] = {IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE, IBV_WC_SEND,    IBV_WC_SEND,
                               IBV_WC_RDMA_READ,  IBV_WC_FETCH_ADD,  IBV_WC_COMP_SWAP};
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(sent[i].wr_id, i + 1);
    EXPECT_EQ(sent[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(sent[i].status) << " wr " << i + 1;
    EXPECT_EQ(sent[i].opcode, ops[i]) << "wr " << i + 1;
  }
  const auto recvd = poll_ex(b_.cqx, 3);
  ASSERT_EQ(recvd.size(), 3u);
  // WRITE_WITH_IMM consumes a receive with no data in it.
  EXPECT_EQ(recvd[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(ntohl(recvd[0].imm_data), 0xABCDu);
  EXPECT_EQ(recvd[0].byte_len, sizeof(inl1) - 1) << "the WRITE's length (mlx5)";
  EXPECT_EQ(recvd[1].opcode, IBV_WC_RECV);
  EXPECT_EQ(recvd[1].byte_len, 128u);
  EXPECT_EQ(recvd[2].byte_len, sizeof(inl1) - 1 + sizeof(inl2) - 1);
  EXPECT_EQ(ntohl(recvd[2].imm_data), 0x1234u);

  EXPECT_TRUE(same(a_.v, 0, b_.v, 0, 256)) << "RDMA WRITE";
  EXPECT_EQ(std::memcmp(b_.v.buf.data() + 4096, inl1, sizeof(inl1) - 1), 0) << "inline WRITE_WITH_IMM";
  EXPECT_TRUE(same(a_.v, 512, b_.v, size_t(8192 + 256), 128)) << "SEND of two SGEs";
  EXPECT_EQ(std::memcmp(b_.v.buf.data() + 8192 + 512, "inline-one|inline-two", 21), 0) << "inline list";
  EXPECT_TRUE(same(b_.v, 1024, a_.v, 16384, 200)) << "RDMA READ";
  EXPECT_EQ(word(a_.v, 20000 & ~7u), 7u) << "fetch-add returns the old value";
  EXPECT_EQ(word(b_.v, 2048), 12u);
  EXPECT_EQ(word(a_.v, 20008 & ~7u), cas_old) << "compare-swap returns the old value";
  EXPECT_EQ(word(b_.v, 2056), 42u);
}

// Any error in a batch posts none of it (wr_complete returns the first
// error), and wr_abort drops a batch; the QP goes on working either way.
TEST_P(QpEx, AFailedOrAbortedBatchPostsNothing) {
  open();
  ibv_qp_ex* q = a_.qpx;
  char big[128] = {};
  ibv_wr_start(q);
  q->wr_flags = IBV_SEND_SIGNALED;
  q->wr_id = 1;
  ibv_wr_rdma_write(q, b_.v.mr->rkey, addr(b_.v, 0));
  ibv_wr_set_sge(q, a_.v.mr->lkey, addr(a_.v, 0), 8);
  q->wr_id = 2;
  ibv_wr_rdma_write(q, b_.v.mr->rkey, addr(b_.v, 0));
  ibv_wr_set_inline_data(q, big, sizeof(big));  // max_inline_data is 64
  EXPECT_EQ(ibv_wr_complete(q), ENOMEM);

  ibv_wr_start(q);
  q->wr_id = 3;
  ibv_wr_rdma_read(q, b_.v.mr->rkey, addr(b_.v, 0));
  ibv_wr_set_inline_data(q, big, 8);  // a READ's SGE receives: never inline
  EXPECT_EQ(ibv_wr_complete(q), EINVAL);

  ibv_wr_start(q);
  q->wr_id = 4;
  ibv_wr_send(q);
  ibv_wr_set_sge(q, a_.v.mr->lkey, addr(a_.v, 0), 8);
  ibv_wr_abort(q);

  ibv_wr_start(q);
  q->wr_id = 5;
  const uint64_t word = 7;
  ibv_wr_atomic_write(q, b_.v.mr->rkey, addr(b_.v, 0), &word);  // not offered: reported, not a crash
  EXPECT_EQ(ibv_wr_complete(q), EOPNOTSUPP);

  fill(a_.v, 0, 16, 9);
  ibv_wr_start(q);
  q->wr_id = 6;
  ibv_wr_rdma_write(q, b_.v.mr->rkey, addr(b_.v, 0));
  ibv_wr_set_sge(q, a_.v.mr->lkey, addr(a_.v, 0), 16);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  const auto sent = poll_ex(a_.cqx, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].wr_id, 6u) << "the first completion is the first WR that was posted";
  EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_.v, 0, b_.v, 0, 16));
  ibv_poll_cq_attr attr{};
  EXPECT_EQ(ibv_start_poll(a_.cqx, &attr), ENOENT) << "nothing of the failed batches was sent";
}

// A full SQ fails the batch with ENOMEM, as ibv_post_send does.
TEST_P(QpEx, ABatchBeyondTheSendQueueIsEnomem) {
  open();
  ibv_qp_attr at{};
  ibv_qp_init_attr ia{};
  ASSERT_EQ(ibv_query_qp(a_.v.qp, &at, IBV_QP_CAP, &ia), 0);
  ibv_qp_ex* q = a_.qpx;
  ibv_wr_start(q);
  q->wr_flags = 0;
  for (uint32_t i = 0; i <= ia.cap.max_send_wr + 1; ++i) {
    q->wr_id = i;
    ibv_wr_rdma_write(q, b_.v.mr->rkey, addr(b_.v, 0));
    ibv_wr_set_sge(q, a_.v.mr->lkey, addr(a_.v, 0), 8);
  }
  EXPECT_EQ(ibv_wr_complete(q), ENOMEM);
  ibv_wr_start(q);
  q->wr_id = 1000;
  ibv_wr_rdma_write(q, b_.v.mr->rkey, addr(b_.v, 0));
  ibv_wr_set_sge(q, a_.v.mr->lkey, addr(a_.v, 0), 8);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  const auto sent = poll_ex(a_.cqx, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].wr_id, 1000u) << "nothing of the refused batch was posted";
  ibv_poll_cq_attr attr{};
  EXPECT_EQ(ibv_start_poll(a_.cqx, &attr), ENOENT);
}

// UD through ibv_wr_set_ud_addr; a UD WR without an address fails the batch.
TEST_P(QpEx, UdSendsGoWhereTheirAddressSays) {
  ExSide a, b;
  open_ex_side(a, GetParam(), GetParam().a, IBV_QPT_UD, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
  open_ex_side(b, GetParam(), GetParam().b, IBV_QPT_UD, 0);
  constexpr uint32_t kQkey = 0x22222222;
  for (VerbsSide* s : {&a.v, &b.v}) {
    ibv_qp_attr at{};
    at.qp_state = IBV_QPS_INIT;
    at.port_num = 1;
    at.qkey = kQkey;
    ASSERT_EQ(ibv_modify_qp(s->qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
    at = {};
    at.qp_state = IBV_QPS_RTR;
    ASSERT_EQ(ibv_modify_qp(s->qp, &at, IBV_QP_STATE), 0);
    at = {};
    at.qp_state = IBV_QPS_RTS;
    ASSERT_EQ(ibv_modify_qp(s->qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
  }
  ibv_ah_attr aa{};
  aa.dlid = b.v.port.lid;
  aa.port_num = 1;
  if (GetParam().gid_index >= 0) {
    aa.is_global = 1;
    aa.grh.dgid = b.v.gid;
    aa.grh.sgid_index = uint8_t(GetParam().gid_index);
    aa.grh.hop_limit = 64;
  }
  ibv_ah* ah = ibv_create_ah(a.v.pd, &aa);
  ASSERT_NE(ah, nullptr);
  ASSERT_EQ(post_recv(b.v, 9, {sge(b.v, 0, 40 + 64)}), 0);
  fill(a.v, 0, 64, 5);
  ibv_qp_ex* q = a.qpx;
  ibv_wr_start(q);
  q->wr_flags = IBV_SEND_SIGNALED;
  q->wr_id = 1;
  ibv_wr_send(q);
  ibv_wr_set_sge(q, a.v.mr->lkey, addr(a.v, 0), 64);  // no ibv_wr_set_ud_addr
  EXPECT_EQ(ibv_wr_complete(q), EINVAL);
  ibv_wr_start(q);
  q->wr_id = 2;
  ibv_wr_send_imm(q, htonl(77));
  ibv_wr_set_ud_addr(q, ah, b.v.qp->qp_num, kQkey);
  ibv_wr_set_sge(q, a.v.mr->lkey, addr(a.v, 0), 64);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  const auto sent = poll_ex(a.cqx, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].wr_id, 2u);
  EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
  const auto got = poll_ex(b.cqx, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].byte_len, 40u + 64u) << "GRH space + payload";
  EXPECT_EQ(got[0].src_qp, a.v.qp->qp_num);
  EXPECT_EQ(ntohl(got[0].imm_data), 77u);
  EXPECT_TRUE(same(a.v, 0, b.v, 40, 64));
  ibv_destroy_ah(ah);
}

// Opcodes a QP type cannot carry are refused at create, as mlx5 refuses them.
TEST_P(QpEx, SendOpsAQpTypeCannotCarryAreEopnotsupp) {
  VerbsSide v;
  v.ctx = open_device(GetParam().a);
  v.pd = ibv_alloc_pd(v.ctx);
  ASSERT_NE(v.pd, nullptr);
  v.cq = ibv_create_cq(v.ctx, 16, nullptr, nullptr, 0);
  ASSERT_NE(v.cq, nullptr);
  ibv_qp_init_attr_ex qa{};
  qa.send_cq = qa.recv_cq = v.cq;
  qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
  qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
  qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  qa.pd = v.pd;
  for (auto [type, ops] : {std::pair{IBV_QPT_UC, uint64_t(IBV_QP_EX_WITH_RDMA_READ)},
                           std::pair{IBV_QPT_UD, uint64_t(IBV_QP_EX_WITH_RDMA_WRITE)},
                           std::pair{IBV_QPT_UD, uint64_t(IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)}}) {
    qa.qp_type = type;
    qa.send_ops_flags = ops;
    errno = 0;
    EXPECT_EQ(ibv_create_qp_ex(v.ctx, &qa), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP) << type << " " << ops;
  }
  qa.qp_type = IBV_QPT_UC;
  qa.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND;
  v.qp = ibv_create_qp_ex(v.ctx, &qa);
  ASSERT_NE(v.qp, nullptr) << strerror(errno);
  EXPECT_NE(ibv_qp_to_qp_ex(v.qp), nullptr);
}

class ResizeCq : public ::testing::TestWithParam<FabricParam> {
 protected:
  void SetUp() override {
    SideParams p;
    p.gid_index = GetParam().gid_index;
    p.cqe = 16;
    open_side(a_, GetParam().a, p);
    p.cqe = 256;
    open_side(b_, GetParam().b, p);
    ConnectParams c;
    c.gid_index = GetParam().gid_index;
    connect_to(a_, b_, c);
    connect_to(b_, a_, c);
  }
  // `n` SENDs from b to a, each completing on a's small CQ, unpolled.
  void sends_into_a(uint64_t first, int n) {
    for (int i = 0; i < n; ++i) ASSERT_EQ(post_recv(a_, first + uint64_t(i), {sge(a_, 0, 64)}), 0);
    for (int i = 0; i < n; ++i) ASSERT_EQ(post_send(b_, first + uint64_t(i), {sge(b_, 0, 64)}), 0);
    for (int i = 0; i < n; ++i) ASSERT_EQ(wait_one(b_).status, IBV_WC_SUCCESS);
  }
  VerbsSide a_, b_;
};

// Grown while it holds unread CQEs: they are all still there, in order,
// followed by more than the old ring could ever have held.
TEST_P(ResizeCq, GrowingKeepsEveryUnreadCompletion) {
  const int small = a_.cq->cqe;
  ASSERT_GE(small, 16);
  sends_into_a(0, 12);
  ASSERT_EQ(ibv_resize_cq(a_.cq, 200), 0);
  EXPECT_GE(a_.cq->cqe, 200);
  sends_into_a(12, 50);  // the RQ holds 64
  sends_into_a(62, 50);
  for (uint64_t i = 0; i < 112; ++i) {
    const ibv_wc wc = wait_one(a_);
    ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << i;
    ASSERT_EQ(wc.wr_id, i) << "completion lost or out of order";
    ASSERT_EQ(wc.opcode, IBV_WC_RECV);
  }
  ibv_wc extra;
  EXPECT_EQ(ibv_poll_cq(a_.cq, 1, &extra), 0);
  // And shrunk again once drained.
  ASSERT_EQ(ibv_resize_cq(a_.cq, 8), 0);
  EXPECT_GE(a_.cq->cqe, 8);
  EXPECT_LT(a_.cq->cqe, 200);
  sends_into_a(200, 4);
  for (uint64_t i = 200; i < 204; ++i) EXPECT_EQ(wait_one(a_).wr_id, i);
}

// Smaller than what is unread is EINVAL and changes nothing; so are sizes
// outside 1..max_cqe.
TEST_P(ResizeCq, TooSmallForTheUnreadOrOutOfRangeIsEinval) {
  sends_into_a(0, 10);
  EXPECT_EQ(ibv_resize_cq(a_.cq, 4), EINVAL);
  EXPECT_EQ(ibv_resize_cq(a_.cq, 0), EINVAL);
  ibv_device_attr da{};
  ASSERT_EQ(ibv_query_device(a_.ctx, &da), 0);
  EXPECT_EQ(ibv_resize_cq(a_.cq, da.max_cqe + 1), EINVAL);
  for (uint64_t i = 0; i < 10; ++i) EXPECT_EQ(wait_one(a_).wr_id, i);
  EXPECT_EQ(ibv_resize_cq(a_.cq, 4), 0) << "fits once read";
}

// Resized again and again while the engine keeps completing WRITEs into it:
// every completion arrives once, in order.
TEST_P(ResizeCq, ResizingUnderLoadLosesNothing) {
  VerbsSide a, b;
  SideParams p;
  p.gid_index = GetParam().gid_index;
  p.mr_access = kRemoteAll;
  p.cqe = 64;
  open_side(a, GetParam().a, p);
  open_side(b, GetParam().b, p);
  ConnectParams c;
  c.gid_index = GetParam().gid_index;
  c.qp_access = kRemoteAll;
  connect_to(a, b, c);
  connect_to(b, a, c);
  constexpr uint64_t kN = 3000;
  uint64_t posted = 0, done = 0;
  unsigned resizes = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (done < kN && std::chrono::steady_clock::now() < deadline) {
    while (posted < kN && posted - done < 48) {
      RemoteOp w;
      w.remote_addr = remote_addr(b, 0);
      w.rkey = b.mr->rkey;
      ASSERT_EQ(post_remote(a, posted, {sge(a, 0, 256)}, w), 0);
      ++posted;
    }
    if (posted % 97 < 48) {
      ASSERT_EQ(ibv_resize_cq(a.cq, resizes % 2 ? 64 : 700), 0) << "resize " << resizes;
      ++resizes;
    }
    ibv_wc wc[16];
    const int n = ibv_poll_cq(a.cq, 16, wc);
    ASSERT_GE(n, 0);
    for (int i = 0; i < n; ++i, ++done) {
      ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[i].status);
      ASSERT_EQ(wc[i].wr_id, done) << "lost or reordered across a resize";
    }
  }
  EXPECT_EQ(done, kN);
  EXPECT_GT(resizes, 20u);
  std::printf("%u resizes under %llu WRITEs\n", resizes, static_cast<unsigned long long>(kN));
}

// ibv_rereg_mr on the responder's MR, seen from the requester: a new
// translation, access or PD governs the very next remote access.
class Rereg : public ::testing::TestWithParam<FabricParam> {
 protected:
  void SetUp() override {
    SideParams p;
    p.gid_index = GetParam().gid_index;
    p.mr_access = kRemoteAll;
    open_side(a_, GetParam().a, p);
    open_side(b_, GetParam().b, p);
    ConnectParams c;
    c.gid_index = GetParam().gid_index;
    c.qp_access = kRemoteAll;
    c.rd_atomic = 4;
    connect_to(a_, b_, c);
    connect_to(b_, a_, c);
  }
  // One signalled 64-byte `op` from a's `a_off` at `remote_addr` of `mr`; its status.
  ibv_wc_status remote_op(ibv_wr_opcode op, const ibv_mr* mr, uint64_t remote_addr, size_t a_off = 0) {
    RemoteOp r;
    r.op = op;
    r.remote_addr = remote_addr;
    r.rkey = mr->rkey;
    EXPECT_EQ(post_remote(a_, 1, {sge(a_, a_off, 64)}, r), 0);
    return wait_one(a_).status;
  }
  // The same at b's `offset` through b's own MR.
  ibv_wc_status remote(ibv_wr_opcode op, size_t offset) { return remote_op(op, b_.mr, addr(b_, offset)); }
  // b's bytes 4096..12287 named from kIova, and 16384..20479 from 0.
  static constexpr uint64_t kIova = 0x7000'0000'0000;
  ibv_mr* reg_named() { return ibv_reg_mr_iova(b_.pd, b_.buf.data() + 4096, 8192, kIova, kRemoteAll); }
  ibv_mr* reg_zero_based() {
    return ibv_reg_mr(b_.pd, b_.buf.data() + 16384, 4096, kRemoteAll | IBV_ACCESS_ZERO_BASED);
  }
  VerbsSide a_, b_;
};

TEST_P(Rereg, ANewTranslationMovesTheWindowAndKeepsTheKeys) {
  const uint32_t lkey = b_.mr->lkey, rkey = b_.mr->rkey;
  ASSERT_EQ(ibv_rereg_mr(b_.mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, b_.buf.data() + 8192, 4096, 0), 0);
  EXPECT_EQ(b_.mr->lkey, lkey);
  EXPECT_EQ(b_.mr->rkey, rkey);
  EXPECT_EQ(b_.mr->addr, b_.buf.data() + 8192);
  EXPECT_EQ(b_.mr->length, 4096u);
  fill(a_, 0, 64, 4);
  EXPECT_EQ(remote(IBV_WR_RDMA_WRITE, 8192 + 4032), IBV_WC_SUCCESS) << "the last 64 bytes of the new range";
  EXPECT_TRUE(same(a_, 0, b_, 8192 + 4032, 64));
  EXPECT_EQ(remote(IBV_WR_RDMA_WRITE, 0), IBV_WC_REM_ACCESS_ERR) << "the old range is no longer registered";
}

TEST_P(Rereg, NewAccessRightsApplyToTheNextRequest) {
  EXPECT_EQ(remote(IBV_WR_RDMA_WRITE, 0), IBV_WC_SUCCESS);
  ASSERT_EQ(ibv_rereg_mr(b_.mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ),
            0);
  EXPECT_EQ(remote(IBV_WR_RDMA_READ, 0), IBV_WC_SUCCESS);
  EXPECT_EQ(remote(IBV_WR_RDMA_WRITE, 0), IBV_WC_REM_ACCESS_ERR) << "remote write was taken away";
}

TEST_P(Rereg, AnotherPdCutsTheQpOffAndHoldsThatPd) {
  ibv_pd* other = ibv_alloc_pd(b_.ctx);
  ASSERT_NE(other, nullptr);
  ASSERT_EQ(ibv_rereg_mr(b_.mr, IBV_REREG_MR_CHANGE_PD, other, nullptr, 0, 0), 0);
  EXPECT_EQ(b_.mr->pd, other);
  EXPECT_EQ(ibv_dealloc_pd(other), EBUSY) << "the MR is on it now";
  ASSERT_EQ(ibv_rereg_mr(b_.mr, IBV_REREG_MR_CHANGE_PD, b_.pd, nullptr, 0, 0), 0);
  EXPECT_EQ(ibv_dealloc_pd(other), 0) << "released by the move back";
  EXPECT_EQ(remote(IBV_WR_RDMA_WRITE, 0), IBV_WC_SUCCESS) << "back on the QP's PD";
  ibv_pd* third = ibv_alloc_pd(b_.ctx);
  ASSERT_NE(third, nullptr);
  ASSERT_EQ(ibv_rereg_mr(b_.mr, IBV_REREG_MR_CHANGE_PD, third, nullptr, 0, 0), 0);
  EXPECT_EQ(remote(IBV_WR_RDMA_WRITE, 0), IBV_WC_REM_ACCESS_ERR) << "the MR's PD is not the QP's";
  b_.qp = (ibv_destroy_qp(b_.qp), nullptr);
  EXPECT_EQ(ibv_dereg_mr(b_.mr), 0);
  b_.mr = nullptr;
  EXPECT_EQ(ibv_dealloc_pd(third), 0);
}

// A refused rereg (IBV_REREG_MR_ERR_CMD, errno saying why) changes nothing.
TEST_P(Rereg, ARefusedReregLeavesTheMrAsItWas) {
  struct Case {
    const char* what;
    int flags;
    ibv_pd* pd;
    void* addr;
    size_t len;
    int access;
    int err;
  };
  ibv_context* foreign_ctx = open_device(GetParam().a);
  ibv_pd* foreign = ibv_alloc_pd(foreign_ctx);
  ASSERT_NE(foreign, nullptr);
  // Reserved, not accessible: fabricd sees no readable mapping there.
  void* hole = mmap(nullptr, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(hole, MAP_FAILED);
  const Case cases[] = {
      {"on-demand paging", IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND, EOPNOTSUPP},
      {"remote write without local write", IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0, IBV_ACCESS_REMOTE_WRITE,
       EINVAL},
      {"memory that is not mapped", IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, hole, 8192, 0, EFAULT},
      {"a PD of another context", IBV_REREG_MR_CHANGE_PD, foreign, nullptr, 0, 0, EINVAL},
  };
  for (const Case& c : cases) {
    errno = 0;
    EXPECT_EQ(ibv_rereg_mr(b_.mr, c.flags, c.pd, c.addr, c.len, c.access), IBV_REREG_MR_ERR_CMD) << c.what;
    EXPECT_EQ(errno, c.err) << c.what;
    EXPECT_EQ(b_.mr->pd, b_.pd) << c.what;
    EXPECT_EQ(b_.mr->addr, b_.buf.data()) << c.what;
  }
  EXPECT_EQ(remote(IBV_WR_RDMA_READ, 4096), IBV_WC_SUCCESS) << "remote read is still granted";
  EXPECT_EQ(remote(IBV_WR_RDMA_WRITE, 4096), IBV_WC_SUCCESS) << "the registration still works as it was";
  munmap(hole, 8192);
  ibv_dealloc_pd(foreign);
  ibv_close_device(foreign_ctx);
}

// Regions named by an IOVA of the app's choosing (ibv_reg_mr_iova) or from 0
// (IBV_ACCESS_ZERO_BASED): remote addresses and local SGEs speak that space,
// the data lands at the matching place in the app's buffer, and the host
// address of the buffer is no longer a valid name for it.
TEST_P(Rereg, IovaAndZeroBasedRegionsAreAddressedInTheirOwnSpace) {
  ibv_mr* named = reg_named();
  ASSERT_NE(named, nullptr) << strerror(errno);
  ibv_mr* zero = reg_zero_based();
  ASSERT_NE(zero, nullptr) << strerror(errno);
  const auto write_to = [&](ibv_mr* mr, uint64_t remote, size_t a_off) {
    return remote_op(IBV_WR_RDMA_WRITE, mr, remote, a_off);
  };
  fill(a_, 0, 64, 11);
  fill(a_, 64, 64, 12);
  EXPECT_EQ(write_to(named, kIova + 100, 0), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, 4096 + 100, 64)) << "IOVA + 100 is the region's byte 100";
  EXPECT_EQ(write_to(zero, 8, 64), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 64, b_, 16384 + 8, 64)) << "zero-based: offset 8 is the region's byte 8";
  // b reads its own named region through a local SGE in IOVA space (a loopback
  // SEND from b to a carries what the SGE names).
  ASSERT_EQ(post_recv(a_, 5, {sge(a_, 1024, 64)}), 0);
  ibv_sge local{kIova + 100, 64, named->lkey};
  ASSERT_EQ(post_send(b_, 5, {local}), 0);
  EXPECT_EQ(wait_one(b_).status, IBV_WC_SUCCESS);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 1024, a_, 0, 64)) << "the SGE at IOVA + 100 sent the bytes written there";
  // The buffer's own address is outside the IOVA range: refused.
  EXPECT_EQ(write_to(named, addr(b_, 4096), 0), IBV_WC_REM_ACCESS_ERR);
  ibv_dereg_mr(zero);
  ibv_dereg_mr(named);
}

// The upper edge of an IOVA-named and of a zero-based region: a WRITE that
// runs 32 bytes past either end is refused (the isolation property: the IOVA
// never reaches past the registration), and so is a local SGE past the end.
TEST_P(Rereg, NothingReachesPastTheEndOfAnIovaRange) {
  ibv_mr* named = reg_named();
  ASSERT_NE(named, nullptr) << strerror(errno);
  EXPECT_EQ(remote_op(IBV_WR_RDMA_WRITE, named, kIova + 8192 - 32), IBV_WC_REM_ACCESS_ERR);
  ibv_dereg_mr(named);
}

TEST_P(Rereg, NothingReachesPastTheEndOfAZeroBasedRegion) {
  ibv_mr* zero = reg_zero_based();
  ASSERT_NE(zero, nullptr) << strerror(errno);
  EXPECT_EQ(remote_op(IBV_WR_RDMA_WRITE, zero, 4096 - 32), IBV_WC_REM_ACCESS_ERR);
  ibv_dereg_mr(zero);
}

TEST_P(Rereg, ALocalSgePastTheEndOfAnIovaRangeIsAProtectionError) {
  ibv_mr* named = reg_named();
  ASSERT_NE(named, nullptr) << strerror(errno);
  ASSERT_EQ(post_recv(a_, 5, {sge(a_, 0, 128)}), 0);
  ibv_sge local{kIova + 8192 - 32, 64, named->lkey};
  ASSERT_EQ(post_send(b_, 5, {local}), 0);
  EXPECT_EQ(wait_one(b_).status, IBV_WC_LOC_PROT_ERR);
  ibv_dereg_mr(named);
}

INSTANTIATE_TEST_SUITE_P(Fabrics, Rereg, ::testing::Values(kIbFabric, kRoceFabric),
                         [](const auto& i) { return std::string(i.param.name); });
INSTANTIATE_TEST_SUITE_P(Fabrics, ResizeCq, ::testing::Values(kIbFabric, kRoceFabric),
                         [](const auto& i) { return std::string(i.param.name); });
INSTANTIATE_TEST_SUITE_P(Fabrics, CqEx, ::testing::Values(kIbFabric, kRoceFabric),
                         [](const auto& i) { return std::string(i.param.name); });
INSTANTIATE_TEST_SUITE_P(Fabrics, QpEx, ::testing::Values(kIbFabric, kRoceFabric),
                         [](const auto& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace vf::test
