// UC, UD and SRQ through the real provider and a real fabricd, on both link
// layers, plus the QP state machine as an application sees it.
#include <arpa/inet.h>
#include <linux/capability.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "ud_helpers.hpp"
#include "verbs_fixture.hpp"

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

// UC: like RC without the responder-side attributes an ACK protocol needs.
void connect_uc(VerbsSide& s, const VerbsSide& peer, int gid_index) {
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  check(ibv_modify_qp(s.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
        "UC INIT");
  at = {};
  at.qp_state = IBV_QPS_RTR;
  at.path_mtu = s.port.active_mtu;
  at.dest_qp_num = peer.qp->qp_num;
  at.ah_attr.dlid = peer.port.lid;
  at.ah_attr.port_num = 1;
  if (gid_index >= 0) {
    at.ah_attr.is_global = 1;
    at.ah_attr.grh.dgid = peer.gid;
    at.ah_attr.grh.sgid_index = uint8_t(gid_index);
    at.ah_attr.grh.hop_limit = 64;
  }
  check(ibv_modify_qp(s.qp, &at,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN),
        "UC RTR");
  at = {};
  at.qp_state = IBV_QPS_RTS;
  check(ibv_modify_qp(s.qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN), "UC RTS");
}

constexpr uint32_t kQkey = kUdQkey;

class QpTypes : public ::testing::TestWithParam<FabricParam> {
 protected:
  void open() {
    SideParams p;
    p.gid_index = GetParam().gid_index;
    p.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    open_side(a_, GetParam().a, p);
    open_side(b_, GetParam().b, p);
  }
  int gid() const { return GetParam().gid_index; }
  VerbsSide a_, b_;
};

TEST_P(QpTypes, UcSendAndWriteWithImmediateDeliver) {
  open();
  recreate_qp(a_, IBV_QPT_UC);
  recreate_qp(b_, IBV_QPT_UC);
  connect_uc(a_, b_, gid());
  connect_uc(b_, a_, gid());
  for (size_t i = 0; i < 20000; ++i) a_.buf[i] = char(i * 3 + 1);
  ASSERT_EQ(post_recv(b_, 1, {sge(b_, 0, 20000)}), 0);
  ASSERT_EQ(post_send(a_, 2, {sge(a_, 0, 20000)}), 0);
  ibv_wc s = wait_one(a_), r = wait_one(b_);
  ASSERT_EQ(s.status, IBV_WC_SUCCESS) << ibv_wc_status_str(s.status);
  ASSERT_EQ(r.status, IBV_WC_SUCCESS) << ibv_wc_status_str(r.status);
  EXPECT_EQ(r.byte_len, 20000u);
  EXPECT_TRUE(std::equal(a_.buf.begin(), a_.buf.begin() + 20000, b_.buf.begin()));

  ASSERT_EQ(post_recv(b_, 3, {sge(b_, 900000, 8)}), 0);
  RemoteOp w;
  w.op = IBV_WR_RDMA_WRITE_WITH_IMM;
  w.remote_addr = remote_addr(b_, 100000);
  w.rkey = b_.mr->rkey;
  w.imm = htonl(77);
  ASSERT_EQ(post_remote(a_, 4, {sge(a_, 0, 5000)}, w), 0);
  s = wait_one(a_);
  r = wait_one(b_);
  ASSERT_EQ(s.status, IBV_WC_SUCCESS) << ibv_wc_status_str(s.status);
  ASSERT_EQ(r.status, IBV_WC_SUCCESS) << ibv_wc_status_str(r.status);
  EXPECT_EQ(r.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(ntohl(r.imm_data), 77u);
  EXPECT_TRUE(std::equal(a_.buf.begin(), a_.buf.begin() + 5000, b_.buf.begin() + 100000));
}

TEST_P(QpTypes, UcRefusesReadAndRcOnlyAttributes) {
  open();
  recreate_qp(a_, IBV_QPT_UC);
  recreate_qp(b_, IBV_QPT_UC);
  connect_uc(a_, b_, gid());
  // Timeout/retry belong to RC: a UC RTS transition carrying them is refused.
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_RTS;
  at.timeout = 14;
  EXPECT_EQ(ibv_modify_qp(b_.qp, &at, IBV_QP_STATE | IBV_QP_TIMEOUT), EINVAL);
  RemoteOp rd;
  rd.op = IBV_WR_RDMA_READ;
  rd.remote_addr = remote_addr(b_);
  rd.rkey = b_.mr->rkey;
  const int err = post_remote(a_, 9, {sge(a_, 0, 8)}, rd);
  if (err == 0) {
    ibv_wc wc = wait_one(a_);
    EXPECT_EQ(wc.status, IBV_WC_LOC_QP_OP_ERR) << ibv_wc_status_str(wc.status);
  } else {
    EXPECT_EQ(err, EINVAL);
  }
}

TEST_P(QpTypes, UdDeliversWithTheGrhAreaAndSourceQp) {
  open();
  recreate_qp(a_, IBV_QPT_UD);
  recreate_qp(b_, IBV_QPT_UD);
  ud_to_rts(a_);
  ud_to_rts(b_);
  ibv_ah* ah = ah_to(a_.pd, b_, gid());
  ASSERT_NE(ah, nullptr) << std::strerror(errno);
  std::memcpy(a_.buf.data(), "unreliable datagram", 20);
  ASSERT_EQ(post_recv(b_, 5, {sge(b_, 0, 40 + 512)}), 0);
  ASSERT_EQ(post_ud(a_, ah, b_.qp->qp_num, kQkey, sge(a_, 0, 20)), 0);
  ibv_wc s = wait_one(a_), r = wait_one(b_);
  ASSERT_EQ(s.status, IBV_WC_SUCCESS) << ibv_wc_status_str(s.status);
  ASSERT_EQ(r.status, IBV_WC_SUCCESS) << ibv_wc_status_str(r.status);
  EXPECT_EQ(r.opcode, IBV_WC_RECV);
  EXPECT_EQ(r.byte_len, 40u + 20u);
  EXPECT_EQ(r.src_qp, a_.qp->qp_num);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 40, "unreliable datagram", 20), 0);
  if (gid() >= 0) {
    EXPECT_TRUE(r.wc_flags & IBV_WC_GRH);
    // What libibverbs rebuilds a reply AH from: the sender's GID.
    ibv_ah_attr back{};
    ASSERT_EQ(ibv_init_ah_from_wc(b_.ctx, 1, &r, reinterpret_cast<ibv_grh*>(b_.buf.data()), &back),
              0);
    EXPECT_EQ(std::memcmp(&back.grh.dgid, &a_.gid, 16), 0);
  } else {
    EXPECT_EQ(r.slid, a_.port.lid);
  }
  EXPECT_EQ(ibv_destroy_ah(ah), 0);
}

TEST_P(QpTypes, UdWrongQkeyIsDroppedAndTooLongFails) {
  open();
  recreate_qp(a_, IBV_QPT_UD);
  recreate_qp(b_, IBV_QPT_UD);
  ud_to_rts(a_);
  ud_to_rts(b_);
  ibv_ah* ah = ah_to(a_.pd, b_, gid());
  ASSERT_NE(ah, nullptr);
  ASSERT_EQ(post_recv(b_, 1, {sge(b_, 0, 40 + 8192)}), 0);
  ASSERT_EQ(post_ud(a_, ah, b_.qp->qp_num, kQkey + 1, sge(a_, 0, 16)), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_SUCCESS);  // UD: the sender cannot know
  EXPECT_TRUE(stays_empty(b_.cq, 300)) << "a datagram with the wrong Q_Key was delivered";
  // Larger than the path MTU: a UD message is one packet.
  const uint32_t mtu = 128u << a_.port.active_mtu;
  ASSERT_EQ(post_ud(a_, ah, b_.qp->qp_num, kQkey, sge(a_, 0, mtu + 1), 2), 0);
  ibv_wc wc = wait_one(a_);
  EXPECT_EQ(wc.status, IBV_WC_LOC_LEN_ERR) << ibv_wc_status_str(wc.status);
  ibv_destroy_ah(ah);
}

TEST_P(QpTypes, AddressHandleArgumentsAreChecked) {
  open();
  ibv_ah_attr a{};
  a.port_num = 2;  // one port
  a.dlid = 1;
  EXPECT_EQ(ibv_create_ah(a_.pd, &a), nullptr);
  a.port_num = 1;
  a.is_global = 1;
  a.grh.sgid_index = 200;  // beyond the GID table
  EXPECT_EQ(ibv_create_ah(a_.pd, &a), nullptr);
  if (gid() >= 0) {  // RoCE: an AH must carry a GRH
    a.is_global = 0;
    EXPECT_EQ(ibv_create_ah(a_.pd, &a), nullptr);
  }
}

// RoCE: setting an address vector resolves its next hop's MAC first, as the
// kernel does for rxe and mlx5 (modify_qp with IBV_QP_AV, create_ah), so
// nobody answering fails the verb with ETIMEDOUT after the kernel's second
// and leaves the QP where it was. IB resolves nothing: an AH to a LID
// nobody has is made at once.
TEST_P(QpTypes, AnAddressVectorToNobodyFailsAsTheKernelFailsIt) {
  open();
  ibv_gid nobody = b_.gid;
  nobody.raw[15] = 250;  // ::ffff:198.18.0.250 on RoCE; an unused GUID on IB
  ibv_ah_attr a{};
  a.dlid = 0x3f0;  // a LID nobody has
  a.port_num = 1;
  if (gid() >= 0) {
    a.is_global = 1;
    a.grh.dgid = nobody;
    a.grh.sgid_index = uint8_t(gid());
    a.grh.hop_limit = 64;
  }
  errno = 0;
  ibv_ah* ah = ibv_create_ah(a_.pd, &a);
  if (gid() < 0) {
    EXPECT_NE(ah, nullptr) << std::strerror(errno);
    if (ah) ibv_destroy_ah(ah);
    return;
  }
  EXPECT_EQ(ah, nullptr);
  EXPECT_EQ(errno, ETIMEDOUT) << std::strerror(errno);
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  ASSERT_EQ(ibv_modify_qp(a_.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
  at = {};
  at.qp_state = IBV_QPS_RTR;
  at.path_mtu = a_.port.active_mtu;
  at.dest_qp_num = b_.qp->qp_num;
  at.max_dest_rd_atomic = 1;
  at.min_rnr_timer = 12;
  at.ah_attr = a;
  EXPECT_EQ(ibv_modify_qp(a_.qp, &at,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                              IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
            ETIMEDOUT);
  ibv_qp_init_attr ia{};
  ASSERT_EQ(ibv_query_qp(a_.qp, &at, IBV_QP_STATE, &ia), 0);
  EXPECT_EQ(at.qp_state, IBV_QPS_INIT);
  // The real neighbour resolves, and the AH is made.
  ah = ah_to(a_.pd, b_, gid());
  EXPECT_NE(ah, nullptr) << std::strerror(errno);
  if (ah) ibv_destroy_ah(ah);
}

// Two RC QPs on b share one SRQ; receives are taken in posting order,
// whichever QP the message arrives on.
TEST_P(QpTypes, SharedReceiveQueueFeedsTwoQps) {
  open();
  ibv_srq_init_attr si{};
  si.attr.max_wr = 16;
  si.attr.max_sge = 2;
  ibv_srq* srq = ibv_create_srq(b_.pd, &si);
  ASSERT_NE(srq, nullptr) << std::strerror(errno);
  VerbsSide a2;
  SideParams p;
  p.gid_index = gid();
  open_side(a2, GetParam().a, p);
  recreate_qp(b_, IBV_QPT_RC, srq);
  ibv_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = b_.cq;
  ia.qp_type = IBV_QPT_RC;
  ia.srq = srq;
  ia.cap.max_send_wr = 16;
  ia.cap.max_send_sge = 1;
  ibv_qp* second = ibv_create_qp(b_.pd, &ia);
  ASSERT_NE(second, nullptr) << std::strerror(errno);
  VerbsSide b2view;  // borrows b_'s context for connect_to; owns nothing
  b2view.qp = second;
  b2view.port = b_.port;
  b2view.gid = b_.gid;
  ConnectParams c;
  c.gid_index = gid();
  connect_to(a_, b_, c);
  connect_to(b_, a_, c);
  connect_to(a2, b2view, c);
  connect_to(b2view, a2, c);
  b2view.qp = nullptr;

  for (uint64_t i = 0; i < 4; ++i) {
    ibv_sge g = sge(b_, i * 1000, 1000);
    ibv_recv_wr wr{}, *bad = nullptr;
    wr.wr_id = 100 + i;
    wr.sg_list = &g;
    wr.num_sge = 1;
    ASSERT_EQ(ibv_post_srq_recv(srq, &wr, &bad), 0);
  }
  // post_recv on a QP attached to an SRQ is an error.
  EXPECT_NE(post_recv(b_, 1, {sge(b_, 0, 8)}), 0);
  std::memset(a_.buf.data(), 'A', 10);
  std::memset(a2.buf.data(), 'B', 10);
  ASSERT_EQ(post_send(a2, 1, {sge(a2, 0, 10)}), 0);
  ibv_wc r1 = wait_one(b_);
  ASSERT_EQ(post_send(a_, 2, {sge(a_, 0, 10)}), 0);
  ibv_wc r2 = wait_one(b_);
  ASSERT_EQ(r1.status, IBV_WC_SUCCESS) << ibv_wc_status_str(r1.status);
  ASSERT_EQ(r2.status, IBV_WC_SUCCESS) << ibv_wc_status_str(r2.status);
  EXPECT_EQ(r1.wr_id, 100u);
  EXPECT_EQ(r1.qp_num, second->qp_num);
  EXPECT_EQ(b_.buf[0], 'B');
  EXPECT_EQ(r2.wr_id, 101u);
  EXPECT_EQ(r2.qp_num, b_.qp->qp_num);
  EXPECT_EQ(b_.buf[1000], 'A');
  EXPECT_EQ(wait_one(a_).status, IBV_WC_SUCCESS);
  EXPECT_EQ(wait_one(a2).status, IBV_WC_SUCCESS);

  EXPECT_EQ(ibv_destroy_srq(srq), EBUSY) << "an SRQ in use cannot be destroyed";
  ASSERT_EQ(ibv_destroy_qp(second), 0);
  ASSERT_EQ(ibv_destroy_qp(b_.qp), 0);
  b_.qp = nullptr;
  EXPECT_EQ(ibv_destroy_srq(srq), 0);
}

TEST_P(QpTypes, SrqLimitRaisesItsAsyncEventOnce) {
  open();
  ibv_srq_init_attr si{};
  si.attr.max_wr = 8;
  si.attr.max_sge = 1;
  ibv_srq* srq = ibv_create_srq(b_.pd, &si);
  ASSERT_NE(srq, nullptr) << std::strerror(errno);
  recreate_qp(b_, IBV_QPT_RC, srq);
  ConnectParams c;
  c.gid_index = gid();
  connect_to(a_, b_, c);
  connect_to(b_, a_, c);
  for (uint64_t i = 0; i < 4; ++i) {
    ibv_sge g = sge(b_, i * 64, 64);
    ibv_recv_wr wr{}, *bad = nullptr;
    wr.wr_id = i;
    wr.sg_list = &g;
    wr.num_sge = 1;
    ASSERT_EQ(ibv_post_srq_recv(srq, &wr, &bad), 0);
  }
  ibv_srq_attr la{};
  la.srq_limit = 9;  // above max_wr
  EXPECT_EQ(ibv_modify_srq(srq, &la, IBV_SRQ_LIMIT), EINVAL);
  la.srq_limit = 2;
  ASSERT_EQ(ibv_modify_srq(srq, &la, IBV_SRQ_LIMIT), 0);
  ibv_srq_attr q{};
  ASSERT_EQ(ibv_query_srq(srq, &q), 0);
  EXPECT_EQ(q.srq_limit, 2u);
  EXPECT_GE(q.max_wr, 8u);
  for (uint64_t i = 0; i < 3; ++i) {  // 4 -> 1 posted: below the limit of 2
    ASSERT_EQ(post_send(a_, i, {sge(a_, 0, 8)}), 0);
    EXPECT_EQ(wait_one(b_).status, IBV_WC_SUCCESS);
    EXPECT_EQ(wait_one(a_).status, IBV_WC_SUCCESS);
  }
  pollfd pfd{b_.ctx->async_fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 5000), 1) << "no async event";
  ibv_async_event ev{};
  ASSERT_EQ(ibv_get_async_event(b_.ctx, &ev), 0);
  EXPECT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
  EXPECT_EQ(ev.element.srq, srq);
  ibv_ack_async_event(&ev);
  pfd.revents = 0;
  EXPECT_EQ(poll(&pfd, 1, 200), 0) << "the limit fires once per arming";
  ASSERT_EQ(ibv_destroy_qp(b_.qp), 0);
  b_.qp = nullptr;
  EXPECT_EQ(ibv_destroy_srq(srq), 0);
}

TEST_P(QpTypes, QueryQpReturnsWhatModifySet) {
  open();
  ConnectParams c;
  c.gid_index = gid();
  c.timeout = 17;
  c.retry_cnt = 5;
  c.rnr_retry = 3;
  c.min_rnr_timer = 12;
  connect_to(a_, b_, c);
  ibv_qp_attr at{};
  ibv_qp_init_attr ia{};
  ASSERT_EQ(ibv_query_qp(a_.qp, &at,
                         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                             IBV_QP_MIN_RNR_TIMER | IBV_QP_DEST_QPN | IBV_QP_PATH_MTU | IBV_QP_CAP,
                         &ia),
            0);
  EXPECT_EQ(at.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(at.timeout, 17);
  EXPECT_EQ(at.retry_cnt, 5);
  EXPECT_EQ(at.rnr_retry, 3);
  EXPECT_EQ(at.min_rnr_timer, 12);
  EXPECT_EQ(at.dest_qp_num, b_.qp->qp_num);
  EXPECT_EQ(at.path_mtu, a_.port.active_mtu);
  EXPECT_GE(ia.cap.max_send_wr, 64u);
}

TEST_P(QpTypes, MissingRequiredAttributesAreRejected) {
  open();
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  // RC RESET->INIT requires ACCESS_FLAGS.
  EXPECT_EQ(ibv_modify_qp(a_.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), EINVAL);
  // RESET->RTS is not a transition.
  at.qp_state = IBV_QPS_RTS;
  EXPECT_EQ(ibv_modify_qp(a_.qp, &at, IBV_QP_STATE), EINVAL);
  EXPECT_EQ(qp_state(a_.qp), IBV_QPS_RESET);
}

TEST_P(QpTypes, MovingToErrorFlushesPostedWork) {
  open();
  ConnectParams c;
  c.gid_index = gid();
  connect_to(a_, b_, c);
  connect_to(b_, a_, c);
  ASSERT_EQ(post_recv(b_, 1, {sge(b_, 0, 64)}), 0);
  ASSERT_EQ(post_recv(b_, 2, {sge(b_, 64, 64)}), 0);
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(b_.qp, &at, IBV_QP_STATE), 0);
  for (uint64_t id : {1u, 2u}) {
    ibv_wc wc = wait_one(b_);
    EXPECT_EQ(wc.wr_id, id);
    EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(wc.status);
  }
}

// The Q_Key ib_modify_qp sets on a fresh UD QP of `dev`, in a process of
// its own: 0 or the errno.
int set_qkey(const char* dev, uint32_t qkey) {
  int n = 0, st = -1;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_context* ctx = nullptr;
  for (int i = 0; list && i < n && !ctx; ++i)
    if (std::strcmp(ibv_get_device_name(list[i]), dev) == 0) ctx = ibv_open_device(list[i]);
  ibv_pd* pd = ctx ? ibv_alloc_pd(ctx) : nullptr;
  ibv_cq* cq = pd ? ibv_create_cq(ctx, 4, nullptr, nullptr, 0) : nullptr;
  ibv_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = cq;
  ia.qp_type = IBV_QPT_UD;
  ia.cap = {1, 1, 1, 1, 0};
  ibv_qp* qp = cq ? ibv_create_qp(pd, &ia) : nullptr;
  if (qp) {
    ibv_qp_attr at{};
    at.qp_state = IBV_QPS_INIT;
    at.port_num = 1;
    at.qkey = qkey;
    st = ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
    ibv_destroy_qp(qp);
  }
  if (cq) ibv_destroy_cq(cq);
  if (pd) ibv_dealloc_pd(pd);
  if (ctx) ibv_close_device(ctx);
  if (list) ibv_free_device_list(list);
  return st;
}

// uverbs: a Q_Key with the high bit (controlled, e.g. QP1's 0x80010000)
// needs CAP_NET_RAW, or any app could speak for the CM agents.
TEST_P(QpTypes, ControlledQkeysNeedCapNetRaw) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct d[2]{};
    if (syscall(SYS_capget, &h, d)) _exit(10);
    d[CAP_TO_INDEX(CAP_NET_RAW)].effective &= ~CAP_TO_MASK(CAP_NET_RAW);
    d[CAP_TO_INDEX(CAP_NET_RAW)].permitted &= ~CAP_TO_MASK(CAP_NET_RAW);
    if (syscall(SYS_capset, &h, d)) _exit(11);
    if (set_qkey(GetParam().a, 0x80000001u) != EPERM) _exit(12);
    if (set_qkey(GetParam().a, 0x11111111u) != 0) _exit(13);  // an ordinary one is anyone's
    _exit(0);
  }
  int st = 0;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0) << "10/11: capget/capset, 12: no EPERM without CAP_NET_RAW, 13: a plain Q_Key refused";
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct d[2]{};
  ASSERT_EQ(syscall(SYS_capget, &h, d), 0);
  if (d[CAP_TO_INDEX(CAP_NET_RAW)].effective & CAP_TO_MASK(CAP_NET_RAW)) {  // as in CI, run as root
    EXPECT_EQ(set_qkey(GetParam().a, 0x80000001u), 0) << "the privileged may";
  }
}

INSTANTIATE_TEST_SUITE_P(Fabrics, QpTypes, ::testing::Values(kIbFabric, kRoceFabric),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
