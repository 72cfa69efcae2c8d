// Completion channels and async events through the real provider, the
// preload shim (this binary links libvhca-preload ahead of libibverbs, as
// LD_PRELOAD would put it) and a real fabricd.
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <thread>

#include "device/abi/vhca_abi.h"
#include "verbs_fixture.hpp"

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

// A VerbsSide whose CQ reports to a completion channel. The channel must go
// after the CQ and before the context.
struct ChanSide {
  VerbsSide v;
  ibv_comp_channel* ch = nullptr;
  ~ChanSide() {
    if (v.qp) ibv_destroy_qp(v.qp);
    v.qp = nullptr;
    if (v.cq) ibv_destroy_cq(v.cq);
    v.cq = nullptr;
    if (ch) ibv_destroy_comp_channel(ch);
  }
};

void open_chan_side(ChanSide& s, const char* dev, int gid_index, int cqe = 64, bool cq_ex = false) {
  VerbsSide& v = s.v;
  v.ctx = open_device(dev);
  check(ibv_query_port(v.ctx, 1, &v.port), "ibv_query_port");
  if (gid_index >= 0) check(ibv_query_gid(v.ctx, 1, gid_index, &v.gid) ? errno : 0, "ibv_query_gid");
  v.pd = ibv_alloc_pd(v.ctx);
  if (!v.pd) check(errno, "ibv_alloc_pd");
  v.buf.assign(1 << 16, 0);
  v.mr = ibv_reg_mr(v.pd, v.buf.data(), v.buf.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!v.mr) check(errno, "ibv_reg_mr");
  s.ch = ibv_create_comp_channel(v.ctx);
  if (!s.ch) check(errno, "ibv_create_comp_channel");
  if (cq_ex) {
    ibv_cq_init_attr_ex a{};
    a.cqe = uint32_t(cqe);
    a.cq_context = &s;
    a.channel = s.ch;
    a.wc_flags = IBV_WC_STANDARD_FLAGS;
    ibv_cq_ex* x = ibv_create_cq_ex(v.ctx, &a);
    v.cq = x ? ibv_cq_ex_to_cq(x) : nullptr;
  } else {
    v.cq = ibv_create_cq(v.ctx, cqe, &s, s.ch, 0);
  }
  if (!v.cq) check(errno, "ibv_create_cq");
  ibv_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = v.cq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = ia.cap.max_recv_wr = 16;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.sq_sig_all = 1;
  v.qp = ibv_create_qp(v.pd, &ia);
  if (!v.qp) check(errno, "ibv_create_qp");
}

bool readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1;
}

// The next completion event, or nullptr if none comes within the bound.
ibv_cq* next_event(ibv_comp_channel* ch, void** cq_context, int timeout_ms = 10000) {
  if (!readable(ch->fd, timeout_ms)) return nullptr;
  ibv_cq* cq = nullptr;
  if (ibv_get_cq_event(ch, &cq, cq_context)) return nullptr;
  return cq;
}

// Polls until one completion arrives; the deadline only bounds a hang.
ibv_wc poll_one(ibv_cq* cq) {
  ibv_wc wc{};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ibv_poll_cq(cq, 1, &wc) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "no completion within 10 s";
      wc.status = IBV_WC_GENERAL_ERR;
      return wc;
    }
  }
  return wc;
}

int send_flags(VerbsSide& s, uint64_t wr_id, uint32_t len, unsigned flags) {
  ibv_sge g = sge(s, 0, len);
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = wr_id;
  wr.sg_list = &g;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = flags;
  return ibv_post_send(s.qp, &wr, &bad);
}

class Events : public ::testing::TestWithParam<FabricParam> {
 protected:
  void SetUp() override {
    open_chan_side(a_, GetParam().a, GetParam().gid_index);
    open_chan_side(b_, GetParam().b, GetParam().gid_index);
  }
  void connect() {
    ConnectParams c;
    c.gid_index = GetParam().gid_index;
    connect_to(a_.v, b_.v, c);
    connect_to(b_.v, a_.v, c);
  }
  // One SEND a -> b; returns b's receive completion.
  ibv_wc transfer(uint64_t id, unsigned flags = 0) {
    EXPECT_EQ(post_recv(b_.v, id, {sge(b_.v, 0, 64)}), 0);
    EXPECT_EQ(send_flags(a_.v, id, 64, flags), 0);
    EXPECT_EQ(poll_one(a_.v.cq).status, IBV_WC_SUCCESS);
    return poll_one(b_.v.cq);
  }
  ChanSide a_, b_;
};

TEST_P(Events, ArmedCqWakesItsChannelOncePerArm) {
  connect();
  ASSERT_EQ(ibv_req_notify_cq(b_.v.cq, 0), 0);
  ASSERT_EQ(post_recv(b_.v, 1, {sge(b_.v, 0, 64)}), 0);
  ASSERT_EQ(send_flags(a_.v, 1, 64, 0), 0);
  void* ctx = nullptr;
  ibv_cq* cq = next_event(b_.ch, &ctx);
  ASSERT_EQ(cq, b_.v.cq);
  EXPECT_EQ(ctx, &b_);  // the cq_context given to ibv_create_cq
  ibv_ack_cq_events(cq, 1);
  EXPECT_EQ(poll_one(b_.v.cq).status, IBV_WC_SUCCESS);
  // Not re-armed: the next completion raises nothing.
  EXPECT_EQ(transfer(2).status, IBV_WC_SUCCESS);
  EXPECT_FALSE(readable(b_.ch->fd, 100));
  // Re-armed: it does again.
  ASSERT_EQ(ibv_req_notify_cq(b_.v.cq, 0), 0);
  EXPECT_EQ(transfer(3).status, IBV_WC_SUCCESS);
  ASSERT_EQ(next_event(b_.ch, &ctx), b_.v.cq);
  ibv_ack_cq_events(b_.v.cq, 1);
}

// An armed CQ stays armed across ibv_resize_cq: the next completion wakes it.
TEST_P(Events, AResizedCqKeepsItsArm) {
  connect();
  ASSERT_EQ(ibv_req_notify_cq(b_.v.cq, 0), 0);
  ASSERT_EQ(ibv_resize_cq(b_.v.cq, 500), 0);
  ASSERT_EQ(post_recv(b_.v, 1, {sge(b_.v, 0, 64)}), 0);
  ASSERT_EQ(send_flags(a_.v, 1, 64, 0), 0);
  void* ctx = nullptr;
  ASSERT_EQ(next_event(b_.ch, &ctx), b_.v.cq);
  ibv_ack_cq_events(b_.v.cq, 1);
  EXPECT_EQ(poll_one(b_.v.cq).wr_id, 1u);
}

// A CQ_EX reports to its channel like any CQ, and start_poll reads what woke it.
TEST_P(Events, ACqExOnAChannelRaisesItsEvent) {
  ChanSide x;
  open_chan_side(x, GetParam().b, GetParam().gid_index, 64, /*cq_ex=*/true);
  ConnectParams c;
  c.gid_index = GetParam().gid_index;
  connect_to(a_.v, x.v, c);
  connect_to(x.v, a_.v, c);
  ASSERT_EQ(ibv_req_notify_cq(x.v.cq, 0), 0);
  ASSERT_EQ(post_recv(x.v, 7, {sge(x.v, 0, 64)}), 0);
  ASSERT_EQ(send_flags(a_.v, 1, 48, 0), 0);
  void* ctx = nullptr;
  ASSERT_EQ(next_event(x.ch, &ctx), x.v.cq);
  EXPECT_EQ(ctx, &x);
  ibv_ack_cq_events(x.v.cq, 1);
  auto* cqx = reinterpret_cast<ibv_cq_ex*>(x.v.cq);
  ibv_poll_cq_attr attr{};
  ASSERT_EQ(ibv_start_poll(cqx, &attr), 0);
  EXPECT_EQ(cqx->wr_id, 7u);
  EXPECT_EQ(cqx->status, IBV_WC_SUCCESS);
  EXPECT_EQ(ibv_wc_read_byte_len(cqx), 48u);
  ibv_end_poll(cqx);
}

TEST_P(Events, SolicitedOnlyArmIgnoresUnsolicitedCompletions) {
  connect();
  ASSERT_EQ(ibv_req_notify_cq(b_.v.cq, 1), 0);
  EXPECT_EQ(transfer(1).status, IBV_WC_SUCCESS);  // no IBV_SEND_SOLICITED
  EXPECT_FALSE(readable(b_.ch->fd, 150)) << "an unsolicited receive woke a solicited-only arm";
  EXPECT_EQ(transfer(2, IBV_SEND_SOLICITED).status, IBV_WC_SUCCESS);
  void* ctx = nullptr;
  ASSERT_EQ(next_event(b_.ch, &ctx), b_.v.cq);
  ibv_ack_cq_events(b_.v.cq, 1);
}

TEST_P(Events, DestroyCqWaitsUntilItsEventsAreAcknowledged) {
  connect();
  ASSERT_EQ(ibv_req_notify_cq(b_.v.cq, 0), 0);
  EXPECT_EQ(transfer(1).status, IBV_WC_SUCCESS);
  void* ctx = nullptr;
  ibv_cq* cq = next_event(b_.ch, &ctx);
  ASSERT_EQ(cq, b_.v.cq);
  ASSERT_EQ(ibv_destroy_qp(b_.v.qp), 0);
  b_.v.qp = nullptr;
  std::atomic<bool> done{false};
  int ret = -1;
  std::thread t([&] {
    ret = ibv_destroy_cq(cq);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(done.load()) << "ibv_destroy_cq returned with an unacknowledged event";
  ibv_ack_cq_events(cq, 1);
  t.join();
  EXPECT_EQ(ret, 0);
  b_.v.cq = nullptr;
}

TEST_P(Events, ChannelIsBusyWhileACqUsesIt) {
  EXPECT_EQ(ibv_destroy_comp_channel(b_.ch), EBUSY);
  // A channel belongs to its context (as uverbs' completion event file does).
  ibv_comp_channel* other = ibv_create_comp_channel(a_.v.ctx);
  ASSERT_NE(other, nullptr);
  errno = 0;
  EXPECT_EQ(ibv_create_cq(b_.v.ctx, 4, nullptr, other, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(ibv_destroy_comp_channel(other), 0);
}

// Overrunning a CQ: IBV_EVENT_CQ_ERR names the CQ and IBV_EVENT_QP_FATAL the
// QP that could not complete (IBA 11.6.3 / 10.10.2.3).
TEST_P(Events, CqOverrunReportsCqErrAndQpFatalWithTheirObjects) {
  ChanSide small;
  open_chan_side(small, GetParam().a, GetParam().gid_index, /*cqe=*/1);
  ConnectParams c;
  c.gid_index = GetParam().gid_index;
  connect_to(small.v, b_.v, c);
  connect_to(b_.v, small.v, c);
  const int n = small.v.cq->cqe + 3;
  for (int i = 0; i < n; ++i) ASSERT_EQ(post_recv(b_.v, uint64_t(i), {sge(b_.v, 0, 64)}), 0);
  for (int i = 0; i < n; ++i) ASSERT_EQ(send_flags(small.v, uint64_t(i), 64, 0), 0);
  bool cq_err = false, qp_fatal = false;
  for (int i = 0; i < 2; ++i) {
    if (!readable(small.v.ctx->async_fd, 10000)) break;
    ibv_async_event ev{};
    ASSERT_EQ(ibv_get_async_event(small.v.ctx, &ev), 0);
    if (ev.event_type == IBV_EVENT_CQ_ERR) {
      EXPECT_EQ(ev.element.cq, small.v.cq);
      cq_err = true;
    } else if (ev.event_type == IBV_EVENT_QP_FATAL) {
      EXPECT_EQ(ev.element.qp, small.v.qp);
      qp_fatal = true;
    } else {
      ADD_FAILURE() << "unexpected " << ibv_event_type_str(ev.event_type);
    }
    ibv_ack_async_event(&ev);  // else destroying the CQ/QP below would wait forever
  }
  EXPECT_TRUE(cq_err);
  EXPECT_TRUE(qp_fatal);
  // Nothing else for this context; b's side saw no event at all.
  EXPECT_FALSE(readable(small.v.ctx->async_fd, 50));
  EXPECT_FALSE(readable(b_.v.ctx->async_fd, 0));
}

// A QP on `srq` taken to ERR: IBA 11.6.3 raises LAST_WQE_REACHED for it.
ibv_qp* errored_srq_qp(VerbsSide& v, ibv_srq* srq) {
  ibv_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = v.cq;
  ia.srq = srq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = 4;
  ia.cap.max_send_sge = 1;
  ibv_qp* qp = ibv_create_qp(v.pd, &ia);
  if (!qp) return nullptr;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return qp;
  a = {};
  a.qp_state = IBV_QPS_ERR;
  ibv_modify_qp(qp, &a, IBV_QP_STATE);
  return qp;
}

// uverbs discards a destroyed object's unread events, so an app never reads
// a record naming a QP it freed -- whose address malloc may already have
// given to a new QP that would then count an ack it never got. UCX's rc_verbs
// destroys its SRQ-attached QPs right after taking them to ERR, their
// LAST_WQE_REACHED still unread. A read event still has to be acknowledged.
TEST_P(Events, ADestroyedQpsUnreadEventsAreDiscardedAndReadOnesAcknowledged) {
  ibv_srq_init_attr sa{};
  sa.attr.max_wr = 16;
  sa.attr.max_sge = 1;
  ibv_srq* srq = ibv_create_srq(b_.v.pd, &sa);
  ASSERT_NE(srq, nullptr) << strerror(errno);
  const int async_fd = b_.v.ctx->async_fd;
  for (int round = 0; round < 3; ++round) {
    ibv_qp* qp = errored_srq_qp(b_.v, srq);
    ASSERT_NE(qp, nullptr) << strerror(errno);
    ASSERT_TRUE(readable(async_fd, 10000)) << "no LAST_WQE_REACHED in round " << round;
    ASSERT_EQ(ibv_destroy_qp(qp), 0);  // unread: nothing to wait for
  }
  EXPECT_FALSE(readable(async_fd, 200)) << "an event of a destroyed QP reached the app";
  // Read but not yet acknowledged: destroy waits for the ack, as uverbs does.
  ibv_qp* qp = errored_srq_qp(b_.v, srq);
  ASSERT_NE(qp, nullptr) << strerror(errno);
  ASSERT_TRUE(readable(async_fd, 10000));
  ibv_async_event ev{};
  ASSERT_EQ(ibv_get_async_event(b_.v.ctx, &ev), 0);
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
  EXPECT_EQ(ev.element.qp, qp);
  std::atomic<bool> done{false};
  std::thread t([&] {
    EXPECT_EQ(ibv_destroy_qp(qp), 0);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(done.load()) << "ibv_destroy_qp returned with an unacknowledged event";
  ibv_ack_async_event(&ev);
  t.join();
  EXPECT_EQ(ibv_destroy_srq(srq), 0);
}

// A hostile app scribbling over its CQ's arm fields gets no events for
// values that are not an arm, and wedges nothing: a proper arm still works.
TEST_P(Events, GarbageInTheArmFieldsIsHarmless) {
  connect();
  // The provider's CQ is {struct verbs_cq (an ibv_cq_ex), struct vhca_ring},
  // whose first member is the mapped ring header.
  auto* hdr = *reinterpret_cast<vhca_ring_hdr**>(reinterpret_cast<char*>(b_.v.cq) + sizeof(ibv_cq_ex));
  EXPECT_EQ(transfer(1).status, IBV_WC_SUCCESS);
  ASSERT_EQ(__atomic_load_n(&hdr->consumer, __ATOMIC_ACQUIRE), 1u) << "ring header not where expected";
  const uint32_t garbage[] = {0xdeadbeef, 3, 0xffffffff, 0x80000001};
  uint32_t sn = 0x7000;
  for (uint32_t g : garbage) {
    __atomic_store_n(&hdr->arm, g, __ATOMIC_RELAXED);
    __atomic_store_n(&hdr->arm_sn, ++sn, __ATOMIC_RELEASE);
    EXPECT_EQ(transfer(uint64_t(g)).status, IBV_WC_SUCCESS);
  }
  EXPECT_FALSE(readable(b_.ch->fd, 50));
  ASSERT_EQ(ibv_req_notify_cq(b_.v.cq, 0), 0);
  EXPECT_EQ(transfer(99).status, IBV_WC_SUCCESS);
  void* ctx = nullptr;
  ASSERT_EQ(next_event(b_.ch, &ctx), b_.v.cq);
  ibv_ack_cq_events(b_.v.cq, 1);
}

INSTANTIATE_TEST_SUITE_P(Fabrics, Events,
                         ::testing::Values(FabricParam{"InfiniBand", "vib0", "vib1", -1},
                                           FabricParam{"RoCEv2", "vroce0", "vroce1", 1}),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
