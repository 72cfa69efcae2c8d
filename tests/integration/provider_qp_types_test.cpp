// The QP types beyond RC SEND, through the real provider and fabricd: UD
// sends through address handles, RC receives from a shared receive queue,
// UC RDMA WRITE with immediate. They skip while the engine answers
// EOPNOTSUPP (before its UD/SRQ/UC support is merged).
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <poll.h>

#include <cstdlib>
#include <cstring>
#include <ostream>
#include "verbs_fixture.hpp"

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

constexpr uint32_t kQkey = 0x11110000;
constexpr size_t kGrh = 40;  // UD receive buffers start with room for the GRH

// Context, PD, MR, CQ; no QP (each test makes its own kind).
struct Host {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_mr* mr = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_srq* srq = nullptr;
  ibv_ah* ah = nullptr;
  ibv_port_attr port{};
  ibv_gid gid{};
  std::vector<char> buf = std::vector<char>(1 << 16);
  ~Host() {
    if (ah) ibv_destroy_ah(ah);
    if (qp) ibv_destroy_qp(qp);
    if (srq) ibv_destroy_srq(srq);
    if (cq) ibv_destroy_cq(cq);
    if (mr) ibv_dereg_mr(mr);
    if (pd) ibv_dealloc_pd(pd);
    if (ctx) ibv_close_device(ctx);
  }
  void open(const char* dev, int gid_index) {
    ctx = open_device(dev);
    check(ibv_query_port(ctx, 1, &port), "ibv_query_port");
    if (gid_index >= 0) check(ibv_query_gid(ctx, 1, gid_index, &gid) ? errno : 0, "ibv_query_gid");
    pd = ibv_alloc_pd(ctx);
    mr = ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    cq = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
    if (!pd || !mr || !cq) check(errno, "setup");
  }
  ibv_sge sge(size_t off, uint32_t len) {
    return ibv_sge{reinterpret_cast<uintptr_t>(buf.data() + off), len, mr->lkey};
  }
};

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

ibv_qp* make_qp(Host& h, ibv_qp_type type, ibv_srq* srq = nullptr) {
  ibv_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = h.cq;
  ia.srq = srq;
  ia.qp_type = type;
  ia.cap.max_send_wr = ia.cap.max_recv_wr = 16;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.sq_sig_all = 1;
  return ibv_create_qp(h.pd, &ia);
}

void ud_to_rts(ibv_qp* qp) {
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qkey = kQkey;
  check(ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), "INIT");
  at = {};
  at.qp_state = IBV_QPS_RTR;
  check(ibv_modify_qp(qp, &at, IBV_QP_STATE), "RTR");
  at = {};
  at.qp_state = IBV_QPS_RTS;
  check(ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN), "RTS");
}

class ProviderQpTypes : public ::testing::TestWithParam<FabricParam> {
 protected:
  void SetUp() override {
    a_.open(GetParam().a, GetParam().gid_index);
    b_.open(GetParam().b, GetParam().gid_index);
  }
  ibv_ah_attr ah_to(const Host& peer) {
    ibv_ah_attr ah{};
    ah.dlid = peer.port.lid;
    ah.port_num = 1;
    if (GetParam().gid_index >= 0) {
      ah.is_global = 1;
      ah.grh.dgid = peer.gid;
      ah.grh.sgid_index = uint8_t(GetParam().gid_index);
      ah.grh.hop_limit = 64;
    }
    return ah;
  }
  Host a_, b_;
};

TEST_P(ProviderQpTypes, UdSendThroughAnAhReachesThePeerWithItsSource) {
  a_.qp = make_qp(a_, IBV_QPT_UD);
  ASSERT_NE(a_.qp, nullptr) << strerror(errno);
  b_.qp = make_qp(b_, IBV_QPT_UD);
  ASSERT_NE(b_.qp, nullptr) << strerror(errno);
  ud_to_rts(a_.qp);
  ud_to_rts(b_.qp);
  ibv_ah_attr attr = ah_to(b_);
  a_.ah = ibv_create_ah(a_.pd, &attr);
  ASSERT_NE(a_.ah, nullptr) << strerror(errno);

  for (size_t i = 0; i < 256; ++i) a_.buf[i] = char(i * 3 + 1);
  ibv_sge r = b_.sge(0, kGrh + 256);
  ibv_recv_wr rwr{}, *rbad = nullptr;
  rwr.wr_id = 7;
  rwr.sg_list = &r;
  rwr.num_sge = 1;
  ASSERT_EQ(ibv_post_recv(b_.qp, &rwr, &rbad), 0);
  ibv_sge s = a_.sge(0, 256);
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = 9;
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = &s;
  wr.num_sge = 1;
  wr.wr.ud.ah = a_.ah;
  wr.wr.ud.remote_qpn = b_.qp->qp_num;
  wr.wr.ud.remote_qkey = kQkey;
  ASSERT_EQ(ibv_post_send(a_.qp, &wr, &bad), 0);
  ibv_wc sw = poll_one(a_.cq);
  EXPECT_EQ(sw.status, IBV_WC_SUCCESS) << ibv_wc_status_str(sw.status);
  ibv_wc rw = poll_one(b_.cq);
  ASSERT_EQ(rw.status, IBV_WC_SUCCESS) << ibv_wc_status_str(rw.status);
  EXPECT_EQ(rw.wr_id, 7u);
  EXPECT_EQ(rw.byte_len, kGrh + 256);
  EXPECT_EQ(rw.src_qp, a_.qp->qp_num);
  EXPECT_EQ(std::memcmp(b_.buf.data() + kGrh, a_.buf.data(), 256), 0);
  if (GetParam().gid_index >= 0) {
    EXPECT_TRUE(rw.wc_flags & IBV_WC_GRH);
  }
}

TEST_P(ProviderQpTypes, RcReceivesFromAnSrqAndItsLimitRaisesAnEvent) {
  ibv_srq_init_attr sa{};
  sa.attr.max_wr = 16;
  sa.attr.max_sge = 1;
  b_.srq = ibv_create_srq(b_.pd, &sa);
  ASSERT_NE(b_.srq, nullptr) << strerror(errno);
  EXPECT_GE(sa.attr.max_wr, 16u);
  a_.qp = make_qp(a_, IBV_QPT_RC);
  b_.qp = make_qp(b_, IBV_QPT_RC, b_.srq);
  ASSERT_NE(a_.qp, nullptr);
  ASSERT_NE(b_.qp, nullptr) << strerror(errno);
  // connect_to wants VerbsSides; the fields it reads are the same.
  VerbsSide va, vb;
  va.qp = a_.qp;
  va.port = a_.port;
  va.gid = a_.gid;
  vb.qp = b_.qp;
  vb.port = b_.port;
  vb.gid = b_.gid;
  ConnectParams c;
  c.gid_index = GetParam().gid_index;
  connect_to(va, vb, c);
  connect_to(vb, va, c);
  va.qp = vb.qp = nullptr;

  for (int i = 0; i < 4; ++i) {
    ibv_sge r = b_.sge(size_t(i) * 64, 64);
    ibv_recv_wr rwr{}, *rbad = nullptr;
    rwr.wr_id = 100 + uint64_t(i);
    rwr.sg_list = &r;
    rwr.num_sge = 1;
    ASSERT_EQ(ibv_post_srq_recv(b_.srq, &rwr, &rbad), 0);
  }
  ibv_srq_attr lim{};
  lim.srq_limit = 3;
  ASSERT_EQ(ibv_modify_srq(b_.srq, &lim, IBV_SRQ_LIMIT), 0);
  ibv_srq_attr q{};
  ASSERT_EQ(ibv_query_srq(b_.srq, &q), 0);
  EXPECT_EQ(q.srq_limit, 3u);

  for (int i = 0; i < 2; ++i) {
    ibv_sge s = a_.sge(0, 32);
    ibv_send_wr wr{}, *bad = nullptr;
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = &s;
    wr.num_sge = 1;
    ASSERT_EQ(ibv_post_send(a_.qp, &wr, &bad), 0);
    EXPECT_EQ(poll_one(a_.cq).status, IBV_WC_SUCCESS);
    ibv_wc rw = poll_one(b_.cq);
    EXPECT_EQ(rw.status, IBV_WC_SUCCESS);
    EXPECT_EQ(rw.wr_id, 100u + uint64_t(i));  // SRQ order
  }
  pollfd p{b_.ctx->async_fd, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1) << "no SRQ_LIMIT_REACHED";
  ibv_async_event ev{};
  ASSERT_EQ(ibv_get_async_event(b_.ctx, &ev), 0);
  EXPECT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
  EXPECT_EQ(ev.element.srq, b_.srq);
  ibv_ack_async_event(&ev);  // ibv_destroy_srq waits for it
}

void uc_connect(ibv_qp* qp, const Host& peer, ibv_qp* peer_qp, int gid_index) {
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  check(ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "INIT");
  at = {};
  at.qp_state = IBV_QPS_RTR;
  at.path_mtu = peer.port.active_mtu;
  at.dest_qp_num = peer_qp->qp_num;
  at.ah_attr.dlid = peer.port.lid;
  at.ah_attr.port_num = 1;
  if (gid_index >= 0) {
    at.ah_attr.is_global = 1;
    at.ah_attr.grh.dgid = peer.gid;
    at.ah_attr.grh.sgid_index = uint8_t(gid_index);
    at.ah_attr.grh.hop_limit = 64;
  }
  check(ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN),
        "RTR");
  at = {};
  at.qp_state = IBV_QPS_RTS;
  check(ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN), "RTS");
}

TEST_P(ProviderQpTypes, UcWriteWithImmediateLandsAndReadIsRefused) {
  a_.qp = make_qp(a_, IBV_QPT_UC);
  ASSERT_NE(a_.qp, nullptr) << strerror(errno);
  b_.qp = make_qp(b_, IBV_QPT_UC);
  ASSERT_NE(b_.qp, nullptr) << strerror(errno);
  uc_connect(a_.qp, b_, b_.qp, GetParam().gid_index);
  uc_connect(b_.qp, a_, a_.qp, GetParam().gid_index);
  for (size_t i = 0; i < 5000; ++i) a_.buf[i] = char(i * 5 + 2);
  ibv_recv_wr rwr{}, *rbad = nullptr;  // WRITE with immediate consumes a receive
  rwr.wr_id = 3;
  ASSERT_EQ(ibv_post_recv(b_.qp, &rwr, &rbad), 0);
  ibv_sge s = a_.sge(0, 5000);
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = 4;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.imm_data = htonl(0xfeed);
  wr.sg_list = &s;
  wr.num_sge = 1;
  wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(b_.buf.data() + 1000);
  wr.wr.rdma.rkey = b_.mr->rkey;
  ASSERT_EQ(ibv_post_send(a_.qp, &wr, &bad), 0);
  EXPECT_EQ(poll_one(a_.cq).status, IBV_WC_SUCCESS);
  ibv_wc rw = poll_one(b_.cq);
  ASSERT_EQ(rw.status, IBV_WC_SUCCESS) << ibv_wc_status_str(rw.status);
  EXPECT_EQ(rw.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(rw.wr_id, 3u);
  EXPECT_EQ(ntohl(rw.imm_data), 0xfeedu);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 1000, a_.buf.data(), 5000), 0);
  // UC has no RDMA READ (IBA 9.2): the post itself fails.
  wr.opcode = IBV_WR_RDMA_READ;
  EXPECT_EQ(ibv_post_send(a_.qp, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
}

INSTANTIATE_TEST_SUITE_P(Fabrics, ProviderQpTypes,
                         ::testing::Values(FabricParam{"InfiniBand", "vib0", "vib1", -1},
                                           FabricParam{"RoCEv2", "vroce0", "vroce1", 1}),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
