// UC: SEND and RDMA WRITE without acknowledgements (IBA 9.8): the requester
// completes at the last packet sent, a gap drops exactly the message it
// breaks (its receive WQE is reused), READ/atomics do not exist.
#include <arpa/inet.h>

#include "tests/unit/engine/harness.hpp"

namespace vf::engine::test {
namespace {

class Uc : public Pair {
 protected:
  void setup_uc() {
    setup();
    QpCaps caps;
    caps.type = IBV_QPT_UC;
    ua = app_a->qp(pd_a, *cq_a, *cq_a, caps);
    ub = app_b->qp(pd_b, *cq_b, *cq_b, caps);
    connect_uc(*app_a, *ua, kLidA, *ub, 300);
    connect_uc(*app_b, *ub, kLidB, *ua, 900);
  }
  // UC: INIT needs P_Key, port, access; RTR AV, MTU, dest QPN, RQ PSN; RTS the SQ PSN only.
  void connect_uc(App& app, AppQp& q, uint16_t, AppQp& peer, uint32_t sq_psn) {
    ASSERT_EQ(app.modify(q, init_attr(), kInitMask), 0);
    ibv_qp_attr r = rtr_attr(peer.qpn, &app == app_a.get() ? kLidB : kLidA,
                             &app == app_a.get() ? 900 : 300, params);
    ASSERT_EQ(app.modify(q, r, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                   IBV_QP_RQ_PSN),
              0);
    ibv_qp_attr s{};
    s.qp_state = IBV_QPS_RTS;
    s.sq_psn = sq_psn;
    ASSERT_EQ(app.modify(q, s, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
  }
  std::unique_ptr<AppQp> ua, ub;
};

TEST_F(Uc, RcOnlyAttributesAreRefused) {
  setup();
  QpCaps caps;
  caps.type = IBV_QPT_UC;
  auto q = app_a->qp(pd_a, *cq_a, *cq_a, caps);
  EXPECT_EQ(app_a->query(*q).init.qp_type, IBV_QPT_UC);
  ASSERT_EQ(app_a->modify(*q, init_attr(), kInitMask), 0);
  // RTR with responder resources / RNR timer: RC attributes.
  EXPECT_EQ(app_a->modify(*q, rtr_attr(qp_b->qpn, kLidB, 1, params), kRtrMask), EINVAL);
  ASSERT_EQ(app_a->modify(*q, rtr_attr(qp_b->qpn, kLidB, 1, params),
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN),
            0);
  EXPECT_EQ(app_a->modify(*q, rts_attr(1, params), kRtsMask), EINVAL);  // timeout, retry, rd_atomic
}

TEST_F(Uc, SendAndWriteWithoutAcks) {
  setup_uc();
  fill_pattern(buf_a.data(), 10000, 3);
  app_b->post_recv(*ub, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_b->post_recv(*ub, recv_wqe(2, {sge(buf_b.data() + 100000, 64, mr_b.lkey)}));
  vhca_send_wqe s = send_wqe(10, {sge(buf_a.data(), 3000, mr_a.lkey)});
  app_a->post_send(*ua, s);
  vhca_send_wqe w = send_wqe(11, {sge(buf_a.data() + 5000, 2500, mr_a.lkey)}, IBV_SEND_SIGNALED,
                             IBV_WR_RDMA_WRITE);
  w.remote_addr = reinterpret_cast<uint64_t>(buf_b.data() + 20000);
  w.rkey = mr_b.rkey;
  app_a->post_send(*ua, w);
  vhca_send_wqe wi = send_wqe(12, {sge(buf_a.data() + 8000, 100, mr_a.lkey)}, IBV_SEND_SIGNALED,
                              IBV_WR_RDMA_WRITE_WITH_IMM, htonl(42));
  wi.remote_addr = reinterpret_cast<uint64_t>(buf_b.data() + 30000);
  wi.rkey = mr_b.rkey;
  app_a->post_send(*ua, wi);
  auto sc = wait_cqes(*app_a, *cq_a, 3);
  ASSERT_EQ(sc.size(), 3u);
  for (auto& c : sc) EXPECT_EQ(c.status, IBV_WC_SUCCESS);
  EXPECT_EQ(sc[1].opcode, IBV_WC_RDMA_WRITE);
  auto rc = wait_cqes(*app_b, *cq_b, 2);
  ASSERT_EQ(rc.size(), 2u);
  EXPECT_EQ(rc[0].wr_id, 1u);
  EXPECT_EQ(rc[0].byte_len, 3000u);
  EXPECT_EQ(rc[0].opcode, IBV_WC_RECV);
  EXPECT_EQ(rc[1].wr_id, 2u);
  EXPECT_EQ(rc[1].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(rc[1].imm_data, htonl(42));
  EXPECT_EQ(std::memcmp(buf_b.data(), buf_a.data(), 3000), 0);
  EXPECT_EQ(std::memcmp(buf_b.data() + 20000, buf_a.data() + 5000, 2500), 0);
  EXPECT_EQ(std::memcmp(buf_b.data() + 30000, buf_a.data() + 8000, 100), 0);
  // Nothing at all came back from B; every packet is a UC opcode without AckReq.
  for (auto& p : net.log) {
    EXPECT_EQ(p.from_lid, kLidA);
    EXPECT_EQ(p.opcode >> 5, 1);
    EXPECT_FALSE(p.ackreq);
  }
  EXPECT_TRUE(sched.idle());  // no retransmission timer
}

TEST_F(Uc, GapDropsExactlyTheBrokenMessage) {
  setup_uc();
  fill_pattern(buf_a.data(), 9000, 4);
  for (int i = 0; i < 3; ++i)
    app_b->post_recv(*ub, recv_wqe(i + 1, {sge(buf_b.data() + i * 10000, 4096, mr_b.lkey)}));
  // Three 3-packet messages; the middle packet of the second is lost.
  const uint32_t lost = 300 + 4;
  net.filter = [&](const Sent& x) {
    return x.psn == lost ? Verdict{Verdict::kDrop} : Verdict{};
  };
  for (int i = 0; i < 3; ++i)
    app_a->post_send(*ua, send_wqe(10 + i, {sge(buf_a.data() + i * 3000, 3000, mr_a.lkey)}));
  auto sc = wait_cqes(*app_a, *cq_a, 3);
  ASSERT_EQ(sc.size(), 3u);  // the requester cannot know
  for (auto& c : sc) EXPECT_EQ(c.status, IBV_WC_SUCCESS);
  auto rc = wait_cqes(*app_b, *cq_b, 2);
  run_for(1'000'000);
  auto more = app_b->drain(*cq_b);
  EXPECT_TRUE(more.empty());
  ASSERT_EQ(rc.size(), 2u);
  EXPECT_EQ(rc[0].wr_id, 1u);
  EXPECT_EQ(std::memcmp(buf_b.data(), buf_a.data(), 3000), 0);
  // The third message landed in the WQE the second one had started.
  EXPECT_EQ(rc[1].wr_id, 2u);
  EXPECT_EQ(rc[1].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rc[1].byte_len, 3000u);
  EXPECT_EQ(std::memcmp(buf_b.data() + 10000, buf_a.data() + 6000, 3000), 0);
  EXPECT_EQ(app_b->query(*ub).attr.qp_state, IBV_QPS_RTS);
  // The next message uses the third WQE.
  net.filter = nullptr;
  app_a->post_send(*ua, send_wqe(20, {sge(buf_a.data(), 10, mr_a.lkey)}));
  auto r3 = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(r3.size(), 1u);
  EXPECT_EQ(r3[0].wr_id, 3u);
}

TEST_F(Uc, NoReceiveWqeDropsTheMessage) {
  setup_uc();
  fill_pattern(buf_a.data(), 100, 5);
  app_a->post_send(*ua, send_wqe(1, {sge(buf_a.data(), 100, mr_a.lkey)}));
  EXPECT_EQ(wait_cqes(*app_a, *cq_a, 1).size(), 1u);
  run_for(1'000'000);
  EXPECT_TRUE(app_b->drain(*cq_b).empty());
  EXPECT_EQ(hca_b.counters().rnr_naks_sent, 0u);
  app_b->post_recv(*ub, recv_wqe(7, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_a->post_send(*ua, send_wqe(2, {sge(buf_a.data(), 50, mr_a.lkey)}));
  auto r = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 7u);
  EXPECT_EQ(r[0].byte_len, 50u);
}

TEST_F(Uc, BadWriteIsDroppedSilently) {
  setup_uc();
  fill_pattern(buf_a.data(), 3000, 6);
  auto write = [&](uint64_t id, uint32_t rkey, uint32_t off) {
    vhca_send_wqe w = send_wqe(id, {sge(buf_a.data(), 3000, mr_a.lkey)}, IBV_SEND_SIGNALED,
                               IBV_WR_RDMA_WRITE);
    w.remote_addr = reinterpret_cast<uint64_t>(buf_b.data() + off);
    w.rkey = rkey;
    app_a->post_send(*ua, w);
  };
  write(1, mr_b.rkey ^ 0x10000, 0);  // unknown rkey
  write(2, mr_b.rkey, 40000);        // good
  auto sc = wait_cqes(*app_a, *cq_a, 2);
  ASSERT_EQ(sc.size(), 2u);
  run_for(1'000'000);
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(buf_b[i], 0) << i;
  EXPECT_EQ(std::memcmp(buf_b.data() + 40000, buf_a.data(), 3000), 0);
  EXPECT_EQ(app_b->query(*ub).attr.qp_state, IBV_QPS_RTS);
  EXPECT_TRUE(app_b->drain(*cq_b).empty());
  EXPECT_EQ(ev_b.count(IBV_EVENT_QP_ACCESS_ERR, ub->handle), 0u);
  for (auto& p : net.log) EXPECT_EQ(p.from_lid, kLidA);
}

TEST_F(Uc, GapInWriteDropsOnlyThatWrite) {
  setup_uc();
  fill_pattern(buf_a.data(), 6000, 7);
  net.filter = [&](const Sent& x) {
    return x.psn == 300 + 1 ? Verdict{Verdict::kDrop} : Verdict{};
  };
  for (int i = 0; i < 2; ++i) {
    vhca_send_wqe w = send_wqe(i, {sge(buf_a.data() + i * 3000, 3000, mr_a.lkey)},
                               IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE);
    w.remote_addr = reinterpret_cast<uint64_t>(buf_b.data() + i * 10000);
    w.rkey = mr_b.rkey;
    app_a->post_send(*ua, w);
  }
  ASSERT_EQ(wait_cqes(*app_a, *cq_a, 2).size(), 2u);
  run_for(1'000'000);
  // The first WRITE lost its middle packet: its last packet is not written.
  for (int i = 2048; i < 3000; ++i) ASSERT_EQ(buf_b[i], 0) << i;
  EXPECT_EQ(std::memcmp(buf_b.data() + 10000, buf_a.data() + 3000, 3000), 0);
}

TEST_F(Uc, ReadAndAtomicsAreRefused) {
  for (uint8_t op : {uint8_t(IBV_WR_RDMA_READ), uint8_t(IBV_WR_ATOMIC_FETCH_AND_ADD),
                     uint8_t(IBV_WR_ATOMIC_CMP_AND_SWP)}) {
    SCOPED_TRACE(int(op));
    if (!app_a) setup_uc();
    QpCaps caps;
    caps.type = IBV_QPT_UC;
    ua = app_a->qp(pd_a, *cq_a, *cq_a, caps);
    ub = app_b->qp(pd_b, *cq_b, *cq_b, caps);
    connect_uc(*app_a, *ua, kLidA, *ub, 300);
    connect_uc(*app_b, *ub, kLidB, *ua, 900);
    net.log.clear();
    vhca_send_wqe w = send_wqe(5, {sge(buf_a.data(), 8, mr_a.lkey)}, IBV_SEND_SIGNALED, op);
    w.remote_addr = reinterpret_cast<uint64_t>(buf_b.data());
    w.rkey = mr_b.rkey;
    app_a->post_send(*ua, w);
    auto v = wait_cqes(*app_a, *cq_a, 1);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].status, IBV_WC_LOC_QP_OP_ERR);
    EXPECT_EQ(app_a->query(*ua).attr.qp_state, IBV_QPS_ERR);
    EXPECT_TRUE(net.log.empty());
  }
}

}  // namespace
}  // namespace vf::engine::test
