// The QP state machine: every RC transition allowed or refused per the IBA
// (the kernel's qp_state_table), required/optional attribute masks, value
// checks, query_qp, the error state's flush and the SQ drain.
#include "tests/unit/engine/harness.hpp"

namespace vf::engine::test {
namespace {

const ibv_qp_state kAllStates[] = {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
                                   IBV_QPS_SQD,   IBV_QPS_SQE,  IBV_QPS_ERR};

// Valid RC transitions and the attributes each requires (besides STATE).
uint32_t required(ibv_qp_state cur, ibv_qp_state next, bool* valid) {
  *valid = true;
  if (next == IBV_QPS_RESET) return 0;
  if (next == IBV_QPS_ERR && cur != IBV_QPS_RESET) return 0;
  switch (cur) {
    case IBV_QPS_RESET:
      if (next == IBV_QPS_INIT) return kInitMask & ~IBV_QP_STATE;
      break;
    case IBV_QPS_INIT:
      if (next == IBV_QPS_INIT) return 0;
      if (next == IBV_QPS_RTR) return kRtrMask & ~IBV_QP_STATE;
      break;
    case IBV_QPS_RTR:
      if (next == IBV_QPS_RTS) return kRtsMask & ~IBV_QP_STATE;
      break;
    case IBV_QPS_RTS:
      if (next == IBV_QPS_RTS || next == IBV_QPS_SQD) return 0;
      break;
    case IBV_QPS_SQD:
      if (next == IBV_QPS_RTS || next == IBV_QPS_SQD) return 0;
      break;
    default: break;
  }
  *valid = false;
  return 0;
}

class QpState : public Pair {
 protected:
  // Only vHCA A and one app, for QPs that never carry traffic.
  void solo() {
    app_a = std::make_unique<App>(hca_a, 1);
    pd_a = app_a->alloc_pd();
    cq_a = app_a->cq();
  }
  // All attributes any transition may need, with valid values.
  static ibv_qp_attr full_attr(ibv_qp_state next) {
    ConnParams p;
    ibv_qp_attr a = rtr_attr(0x123, kLidB, 77, p);
    const ibv_qp_attr r = rts_attr(88, p);
    a.sq_psn = r.sq_psn;
    a.timeout = r.timeout;
    a.retry_cnt = r.retry_cnt;
    a.rnr_retry = r.rnr_retry;
    a.max_rd_atomic = r.max_rd_atomic;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
    a.qp_state = next;
    return a;
  }
  std::unique_ptr<AppQp> qp_in(ibv_qp_state s) {
    auto q = app_a->qp(pd_a, *cq_a, *cq_a);
    const ibv_qp_state path[] = {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS};
    if (s == IBV_QPS_RESET) return q;
    if (s == IBV_QPS_ERR) {
      EXPECT_EQ(app_a->modify(*q, full_attr(IBV_QPS_ERR), IBV_QP_STATE), 0);
      EXPECT_EQ(app_a->modify(*q, full_attr(IBV_QPS_INIT), kInitMask), 0);
      return q;
    }
    ibv_qp_state cur = IBV_QPS_RESET;
    for (ibv_qp_state n : path) {
      bool v;
      EXPECT_EQ(app_a->modify(*q, full_attr(n), IBV_QP_STATE | required(cur, n, &v)), 0);
      cur = n;
      if (n == s) return q;
    }
    if (s == IBV_QPS_SQD) {
      EXPECT_EQ(app_a->modify(*q, full_attr(IBV_QPS_SQD), IBV_QP_STATE), 0);
    }
    return q;
  }
  ibv_qp_state state(const AppQp& q) { return app_a->query(q).attr.qp_state; }
};

TEST_F(QpState, EveryTransitionAllowedOrRefusedPerIba) {
  solo();
  for (ibv_qp_state cur : kAllStates) {
    if (cur == IBV_QPS_SQE) continue;  // an RC QP never gets there
    for (ibv_qp_state next : kAllStates) {
      SCOPED_TRACE(testing::Message() << "cur=" << cur << " next=" << next);
      bool valid;
      const uint32_t req = required(cur, next, &valid);
      if (cur == IBV_QPS_ERR && next == IBV_QPS_ERR) valid = true;
      // The ERR helper above leaves the QP in INIT; build ERR directly.
      std::unique_ptr<AppQp> q;
      if (cur == IBV_QPS_ERR) {
        q = app_a->qp(pd_a, *cq_a, *cq_a);
        ASSERT_EQ(app_a->modify(*q, full_attr(IBV_QPS_INIT), kInitMask), 0);
        ASSERT_EQ(app_a->modify(*q, full_attr(IBV_QPS_ERR), IBV_QP_STATE), 0);
      } else {
        q = qp_in(cur);
      }
      ASSERT_EQ(state(*q), cur);
      if (!valid) {
        EXPECT_EQ(app_a->modify(*q, full_attr(next), IBV_QP_STATE), EINVAL);
        EXPECT_EQ(app_a->modify(*q, full_attr(next), kInitMask | kRtrMask | kRtsMask), EINVAL);
        EXPECT_EQ(state(*q), cur);
        continue;
      }
      // Each required attribute is required...
      for (uint32_t bit = 1; bit; bit <<= 1) {
        if (!(req & bit)) continue;
        EXPECT_EQ(app_a->modify(*q, full_attr(next), (IBV_QP_STATE | req) & ~bit), EINVAL)
            << "without mask bit " << bit;
      }
      // ...and attributes the transition does not take are refused.
      EXPECT_EQ(app_a->modify(*q, full_attr(next), IBV_QP_STATE | req | IBV_QP_QKEY), EINVAL);
      EXPECT_EQ(app_a->modify(*q, full_attr(next), IBV_QP_STATE | req | IBV_QP_CAP), EINVAL);
      EXPECT_EQ(state(*q), cur);  // a refused modify changes nothing
      EXPECT_EQ(app_a->modify(*q, full_attr(next), IBV_QP_STATE | req), 0);
      EXPECT_EQ(state(*q), next);
    }
  }
}

TEST_F(QpState, OptionalAttributes) {
  solo();
  auto q = qp_in(IBV_QPS_INIT);
  ibv_qp_attr a = full_attr(IBV_QPS_RTR);
  a.qp_access_flags = IBV_ACCESS_REMOTE_READ;
  EXPECT_EQ(app_a->modify(*q, a, kRtrMask | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX), 0);
  EXPECT_EQ(app_a->query(*q).attr.qp_access_flags, unsigned(IBV_ACCESS_REMOTE_READ));
  a = full_attr(IBV_QPS_RTS);
  a.min_rnr_timer = 20;
  a.cur_qp_state = IBV_QPS_RTR;
  EXPECT_EQ(app_a->modify(*q, a, kRtsMask | IBV_QP_MIN_RNR_TIMER | IBV_QP_CUR_STATE), 0);
  EXPECT_EQ(app_a->query(*q).attr.min_rnr_timer, 20);
  // RTS->RTS may change the RNR timer but not the ACK timeout.
  a = full_attr(IBV_QPS_RTS);
  a.min_rnr_timer = 3;
  EXPECT_EQ(app_a->modify(*q, a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER), 0);
  EXPECT_EQ(app_a->modify(*q, a, IBV_QP_STATE | IBV_QP_TIMEOUT), EINVAL);
  EXPECT_EQ(app_a->modify(*q, a, IBV_QP_MIN_RNR_TIMER), 0);  // no STATE: stays RTS
  EXPECT_EQ(state(*q), IBV_QPS_RTS);
  // SQD->SQD may change the path and the retry parameters.
  ASSERT_EQ(app_a->modify(*q, full_attr(IBV_QPS_SQD), IBV_QP_STATE), 0);
  a = full_attr(IBV_QPS_SQD);
  a.timeout = 20;
  a.retry_cnt = 2;
  EXPECT_EQ(app_a->modify(*q, a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_AV), 0);
  EXPECT_EQ(app_a->query(*q).attr.timeout, 20);
  EXPECT_EQ(app_a->query(*q).attr.retry_cnt, 2);
}

TEST_F(QpState, AttributeValuesChecked) {
  solo();
  auto q = qp_in(IBV_QPS_RESET);
  ibv_qp_attr a = full_attr(IBV_QPS_INIT);
  a.pkey_index = 1;
  EXPECT_EQ(app_a->modify(*q, a, kInitMask), EINVAL);
  a = full_attr(IBV_QPS_INIT);
  a.port_num = 2;
  EXPECT_EQ(app_a->modify(*q, a, kInitMask), EINVAL);
  a = full_attr(IBV_QPS_INIT);
  a.qp_access_flags = IBV_ACCESS_MW_BIND;
  EXPECT_EQ(app_a->modify(*q, a, kInitMask), EINVAL);
  a = full_attr(IBV_QPS_INIT);
  const uint32_t bogus_state = 42;  // what a hostile app can put there
  std::memcpy(&a.qp_state, &bogus_state, sizeof(bogus_state));
  EXPECT_EQ(app_a->modify(*q, a, kInitMask), EINVAL);
  EXPECT_EQ(app_a->modify(*q, full_attr(IBV_QPS_INIT), kInitMask | (1u << 30)), EINVAL);
  a = full_attr(IBV_QPS_INIT);
  a.cur_qp_state = IBV_QPS_RTS;  // CUR_STATE is not even allowed from RESET
  EXPECT_EQ(app_a->modify(*q, a, kInitMask | IBV_QP_CUR_STATE), EINVAL);
  ASSERT_EQ(app_a->modify(*q, full_attr(IBV_QPS_INIT), kInitMask), 0);

  auto bad_rtr = [&](auto edit) {
    ibv_qp_attr r = full_attr(IBV_QPS_RTR);
    edit(r);
    return app_a->modify(*q, r, kRtrMask);
  };
  EXPECT_EQ(bad_rtr([](ibv_qp_attr& r) { r.path_mtu = ibv_mtu(6); }), EINVAL);
  EXPECT_EQ(bad_rtr([](ibv_qp_attr& r) { r.path_mtu = ibv_mtu(0); }), EINVAL);
  EXPECT_EQ(bad_rtr([](ibv_qp_attr& r) { r.dest_qp_num = 1u << 24; }), EINVAL);
  EXPECT_EQ(bad_rtr([](ibv_qp_attr& r) { r.rq_psn = 1u << 24; }), EINVAL);
  EXPECT_EQ(bad_rtr([](ibv_qp_attr& r) { r.min_rnr_timer = 32; }), EINVAL);
  EXPECT_EQ(bad_rtr([](ibv_qp_attr& r) { r.max_dest_rd_atomic = 200; }), EINVAL);
  EXPECT_EQ(bad_rtr([](ibv_qp_attr& r) { r.ah_attr.dlid = 0; }), EINVAL);
  EXPECT_EQ(bad_rtr([](ibv_qp_attr& r) { r.ah_attr.sl = 16; }), EINVAL);
  EXPECT_EQ(bad_rtr([](ibv_qp_attr& r) {
              r.ah_attr.is_global = 1;
              r.ah_attr.grh.sgid_index = 9;
            }),
            EINVAL);
  EXPECT_EQ(state(*q), IBV_QPS_INIT);
  ASSERT_EQ(app_a->modify(*q, full_attr(IBV_QPS_RTR), kRtrMask), 0);
  auto bad_rts = [&](auto edit) {
    ibv_qp_attr r = full_attr(IBV_QPS_RTS);
    edit(r);
    return app_a->modify(*q, r, kRtsMask);
  };
  EXPECT_EQ(bad_rts([](ibv_qp_attr& r) { r.timeout = 32; }), EINVAL);
  EXPECT_EQ(bad_rts([](ibv_qp_attr& r) { r.retry_cnt = 8; }), EINVAL);
  EXPECT_EQ(bad_rts([](ibv_qp_attr& r) { r.rnr_retry = 8; }), EINVAL);
  EXPECT_EQ(bad_rts([](ibv_qp_attr& r) { r.sq_psn = 0x1000000; }), EINVAL);
  EXPECT_EQ(bad_rts([](ibv_qp_attr& r) { r.max_rd_atomic = 17; }), EINVAL);
  ibv_qp_attr r = full_attr(IBV_QPS_RTS);
  r.cur_qp_state = IBV_QPS_INIT;
  EXPECT_EQ(app_a->modify(*q, r, kRtsMask | IBV_QP_CUR_STATE), EINVAL);
  EXPECT_EQ(state(*q), IBV_QPS_RTR);
  EXPECT_EQ(app_a->modify(*q, full_attr(IBV_QPS_RTS), kRtsMask), 0);
}

TEST_F(QpState, QueryReturnsWhatWasSet) {
  ConnParams p;
  p.mtu = IBV_MTU_2048;
  p.timeout = 17;
  p.retry_cnt = 5;
  p.rnr_retry = 6;
  p.min_rnr_timer = 14;
  setup(p, QpCaps{32, 16, 3, 2, 128, true});
  auto rsp = app_a->query(*qp_a);
  const ibv_qp_attr& a = rsp.attr;
  EXPECT_EQ(a.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(a.cur_qp_state, IBV_QPS_RTS);
  EXPECT_EQ(a.path_mtu, IBV_MTU_2048);
  EXPECT_EQ(a.dest_qp_num, qp_b->qpn);
  EXPECT_EQ(a.rq_psn, p.psn_b);
  EXPECT_EQ(a.sq_psn, p.psn_a);
  EXPECT_EQ(a.timeout, 17);
  EXPECT_EQ(a.retry_cnt, 5);
  EXPECT_EQ(a.rnr_retry, 6);
  EXPECT_EQ(a.min_rnr_timer, 14);
  EXPECT_EQ(a.ah_attr.dlid, kLidB);
  EXPECT_EQ(a.port_num, 1);
  EXPECT_EQ(a.qp_access_flags, unsigned(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
  EXPECT_EQ(a.max_rd_atomic, 1);
  EXPECT_EQ(a.max_dest_rd_atomic, 1);
  EXPECT_EQ(a.cap.max_send_wr, 32u);
  EXPECT_EQ(a.cap.max_recv_wr, 16u);
  EXPECT_EQ(a.cap.max_send_sge, 3u);
  EXPECT_EQ(a.cap.max_recv_sge, 2u);
  EXPECT_EQ(a.cap.max_inline_data, 128u);
  EXPECT_EQ(rsp.init.qp_type, unsigned(IBV_QPT_RC));
  EXPECT_EQ(rsp.init.sq_sig_all, 1u);
  // RESET forgets it all.
  ibv_qp_attr reset{};
  reset.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(app_a->modify(*qp_a, reset, IBV_QP_STATE), 0);
  EXPECT_EQ(app_a->query(*qp_a).attr.dest_qp_num, 0u);
  EXPECT_EQ(app_a->query(*qp_a).attr.qp_state, IBV_QPS_RESET);
}

TEST_F(QpState, ErrorStateFlushesEverythingPosted) {
  solo();
  auto q = qp_in(IBV_QPS_INIT);
  std::vector<uint8_t> buf(4096);
  auto mr = app_a->mr(pd_a, buf.data(), buf.size());
  for (int i = 0; i < 3; ++i) app_a->post_recv(*q, recv_wqe(100 + i, {sge(buf.data(), 64, mr.lkey)}));
  for (int i = 0; i < 2; ++i) app_a->post_send(*q, send_wqe(200 + i, {sge(buf.data(), 64, mr.lkey)}, 0));
  run_for(1000);
  EXPECT_TRUE(app_a->drain(*cq_a).empty());  // INIT: nothing executes
  ASSERT_EQ(app_a->modify(*q, full_attr(IBV_QPS_ERR), IBV_QP_STATE), 0);
  auto c = wait_cqes(*app_a, *cq_a, 5);
  ASSERT_EQ(c.size(), 5u);
  std::vector<uint64_t> ids;
  for (auto& e : c) {
    EXPECT_EQ(e.status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(e.qp_num, q->qpn);
    ids.push_back(e.wr_id);
    EXPECT_EQ(e.opcode, e.wr_id >= 200 ? unsigned(IBV_WC_SEND) : unsigned(IBV_WC_RECV));
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{200, 201, 100, 101, 102}));
  app_a->post_recv(*q, recv_wqe(300, {sge(buf.data(), 64, mr.lkey)}));
  c = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].wr_id, 300u);
  EXPECT_EQ(c[0].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(q->sq.hdr()->consumer, 2u);
  EXPECT_EQ(q->rq.hdr()->consumer, 4u);
  EXPECT_FALSE(hca_a.poll(64));
}

TEST_F(QpState, ResetDiscardsPostedWork) {
  solo();
  auto q = qp_in(IBV_QPS_INIT);
  std::vector<uint8_t> buf(4096);
  auto mr = app_a->mr(pd_a, buf.data(), buf.size());
  app_a->post_recv(*q, recv_wqe(1, {sge(buf.data(), 64, mr.lkey)}));
  app_a->post_send(*q, send_wqe(2, {sge(buf.data(), 64, mr.lkey)}));
  ASSERT_EQ(app_a->modify(*q, full_attr(IBV_QPS_RESET), IBV_QP_STATE), 0);
  EXPECT_EQ(q->sq.hdr()->consumer, 1u);  // the app sees empty queues
  EXPECT_EQ(q->rq.hdr()->consumer, 1u);
  ASSERT_EQ(app_a->modify(*q, full_attr(IBV_QPS_INIT), kInitMask), 0);
  ASSERT_EQ(app_a->modify(*q, full_attr(IBV_QPS_ERR), IBV_QP_STATE), 0);
  run_for(1000);
  EXPECT_TRUE(app_a->drain(*cq_a).empty());  // nothing left to flush
}

TEST_F(QpState, SqDrainHoldsNewWorkAndReportsDrained) {
  setup();
  // In flight when the drain is requested: SQD waits for the ACK.
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_b->post_recv(*qp_b, recv_wqe(2, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), 3000, mr_a.lkey)}));
  settle();  // packets are on the wire
  ibv_qp_attr sqd{};
  sqd.qp_state = IBV_QPS_SQD;
  sqd.en_sqd_async_notify = 1;
  ASSERT_EQ(app_a->modify(*qp_a, sqd, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
  EXPECT_EQ(app_a->query(*qp_a).attr.sq_draining, 1);
  EXPECT_EQ(ev_a.count(IBV_EVENT_SQ_DRAINED, qp_a->handle), 0u);
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 100, mr_a.lkey)}));
  auto c = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].wr_id, 1u);
  EXPECT_EQ(ev_a.count(IBV_EVENT_SQ_DRAINED, qp_a->handle), 1u);
  EXPECT_EQ(app_a->query(*qp_a).attr.sq_draining, 0);
  run_for(1'000'000);
  EXPECT_EQ(sent_by(kLidA, false).size(), 3u);  // WQE 2 not started in SQD
  EXPECT_TRUE(app_a->drain(*cq_a).empty());
  ibv_qp_attr rts{};
  rts.qp_state = IBV_QPS_RTS;
  ASSERT_EQ(app_a->modify(*qp_a, rts, IBV_QP_STATE), 0);
  c = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].wr_id, 2u);
  EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
}

}  // namespace
}  // namespace vf::engine::test
