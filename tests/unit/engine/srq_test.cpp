// Shared receive queues: verbs (create/modify/query/destroy and their
// errnos), RC QPs sharing one SRQ in order, the limit event, QPs in error on
// an SRQ (LAST_WQE_REACHED), and a hostile SRQ ring.
#include "tests/unit/engine/srq_ud_support.hpp"

namespace vf::engine::test {
namespace {

class Srq : public Pair {
 protected:
  // An RC QP on A connected to one on B that takes its receives from `srq`.
  std::pair<std::unique_ptr<AppQp>, std::unique_ptr<AppQp>> srq_pair(const AppSrq& srq) {
    auto qa = app_a->qp(pd_a, *cq_a, *cq_a);
    auto qb = std::make_unique<AppQp>();
    EXPECT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_RC, srq.handle, *qb), 0);
    connect(*app_a, *qa, kLidA, *app_b, *qb, kLidB, params);
    return {std::move(qa), std::move(qb)};
  }
  // SENDs `len` bytes (pattern `seed`) from qa; waits for A's completion.
  ibv_wc_status send_from(AppQp& qa, uint64_t id, uint32_t len, uint32_t seed) {
    uint8_t* src = buf_a.data() + 65536 * (id % 8);
    fill_pattern(src, len, seed);
    app_a->post_send(qa, send_wqe(id, {sge(src, len, mr_a.lkey)}));
    auto got = wait_cqes(*app_a, *cq_a, 1);
    return got.size() == 1 ? ibv_wc_status(got[0].status) : IBV_WC_GENERAL_ERR;
  }
  vhca_recv_wqe srq_wqe(uint64_t id, uint32_t len = 4096) {
    return recv_wqe(id, {sge(buf_b.data() + 8192 * id, len, mr_b.lkey)});
  }
};

TEST_F(Srq, CreateModifyQueryValidation) {
  setup();
  const DeviceLimits& l = hca_b.config().limits;
  AppSrq s;
  EXPECT_EQ(create_srq(*app_b, 999, 16, 1, s), EINVAL);                    // no such PD
  EXPECT_EQ(create_srq(*app_b, pd_b, l.max_srq_wr + 1, 1, s), EINVAL);     // too deep
  EXPECT_EQ(create_srq(*app_b, pd_b, 16, l.max_srq_sge + 1, s), EINVAL);   // too many SGEs
  App other(hca_b, 9);
  EXPECT_EQ(create_srq(other, pd_b, 16, 1, s), EINVAL);  // another client's PD
  ASSERT_EQ(create_srq(*app_b, pd_b, 100, 3, s, /*limit ignored*/ 50), 0);
  EXPECT_EQ(s.rsp.entries, 128u);
  EXPECT_EQ(s.rsp.attr.max_wr, 128u);
  EXPECT_EQ(s.rsp.attr.max_sge, 3u);
  EXPECT_EQ(s.rsp.attr.srq_limit, 0u);
  EXPECT_EQ(hca_b.counts().srqs, 1u);
  ibv_srq_attr q = query_srq(*app_b, s);
  EXPECT_EQ(q.max_wr, 128u);
  EXPECT_EQ(q.max_sge, 3u);
  EXPECT_EQ(q.srq_limit, 0u);  // not armed at creation

  EXPECT_EQ(modify_srq(*app_b, s, IBV_SRQ_MAX_WR, 256, 0), EINVAL);  // no resize (as mlx5)
  EXPECT_EQ(modify_srq(*app_b, s, IBV_SRQ_LIMIT, 0, 129), EINVAL);   // limit > max_wr
  EXPECT_EQ(modify_srq(*app_b, s, 1u << 7, 0, 1), EINVAL);           // unknown mask bit
  EXPECT_EQ(query_srq(*app_b, s).srq_limit, 0u);                     // nothing changed
  EXPECT_EQ(modify_srq(*app_b, s, IBV_SRQ_LIMIT, 0, 128), 0);
  EXPECT_EQ(query_srq(*app_b, s).srq_limit, 128u);
  vhca_modify_srq_req mq{};
  mq.srq_handle = s.handle;
  mq.attr_mask = IBV_SRQ_LIMIT;
  EXPECT_EQ(hca_b.modify_srq(other.id(), mq), EINVAL);  // handle of another client
  vhca_handle_req h{};
  h.handle = s.handle;
  vhca_query_srq_rsp qr{};
  EXPECT_EQ(hca_b.query_srq(77, h, qr), EINVAL);

  // The ring is a sealed memfd like an RQ's: the mapping holds the entries.
  EXPECT_GE(s.ring.len, vhca_ring_bytes(128, sizeof(vhca_recv_wqe)));

  // Device limits are reported.
  vhca_query_device_rsp d{};
  ASSERT_EQ(hca_b.query_device(app_b->id(), d), 0);
  EXPECT_EQ(d.attr.max_srq, int(l.max_srq));
  EXPECT_GT(d.attr.max_srq, 0);
  EXPECT_EQ(d.attr.max_srq_wr, int(l.max_srq_wr));
  EXPECT_EQ(d.attr.max_srq_sge, VHCA_MAX_SGE);
}

TEST_F(Srq, QpOnSrqGetsOneEntryRqRingAndNoRecvCaps) {
  setup();
  AppSrq s;
  ASSERT_EQ(create_srq(*app_b, pd_b, 16, 2, s), 0);
  AppQp q;
  ASSERT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_RC, s.handle, q), 0);
  EXPECT_EQ(q.rsp.rq_entries, 1u);
  EXPECT_EQ(q.rsp.cap.max_recv_wr, 0u);
  EXPECT_EQ(q.rsp.cap.max_recv_sge, 0u);
  EXPECT_NE(q.rq.base, nullptr);  // the daemon always gets two fds
  AppQp bad;
  EXPECT_EQ(create_qp_ex(*app_a, pd_a, *cq_a, *cq_a, IBV_QPT_RC, s.handle, bad), EINVAL);  // not A's
  EXPECT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_RC, s.handle + 5, bad), EINVAL);
}

TEST_F(Srq, DestroyBusyWhileQpsUseIt) {
  setup();
  AppSrq s;
  ASSERT_EQ(create_srq(*app_b, pd_b, 16, 1, s), 0);
  AppQp q;
  ASSERT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_RC, s.handle, q), 0);
  EXPECT_EQ(destroy_srq(*app_b, s.handle), EBUSY);
  vhca_handle_req h{};
  h.handle = pd_b;
  EXPECT_EQ(hca_b.dealloc_pd(app_b->id(), h), EBUSY);
  EXPECT_EQ(destroy_srq(*app_a, s.handle), ENOENT);  // another client's handle
  vhca_destroy_qp_rsp dr{};
  h.handle = q.handle;
  ASSERT_EQ(hca_b.destroy_qp(app_b->id(), h, dr), 0);
  EXPECT_EQ(destroy_srq(*app_b, s.handle), 0);
  EXPECT_EQ(destroy_srq(*app_b, s.handle), ENOENT);
  EXPECT_EQ(hca_b.counts().srqs, 0u);
}

TEST_F(Srq, RcQpsShareOneSrqInOrder) {
  setup();
  AppSrq s;
  ASSERT_EQ(create_srq(*app_b, pd_b, 16, 1, s), 0);
  auto [a1, b1] = srq_pair(s);
  auto [a2, b2] = srq_pair(s);
  auto [a3, b3] = srq_pair(s);
  for (uint64_t id = 1; id <= 6; ++id) post_srq(s, srq_wqe(id));
  // Messages alternate over the three QPs; the SRQ hands out its WQEs in
  // posting order whichever QP asks.
  AppQp* senders[6] = {a1.get(), a2.get(), a3.get(), a2.get(), a1.get(), a3.get()};
  AppQp* receivers[6] = {b1.get(), b2.get(), b3.get(), b2.get(), b1.get(), b3.get()};
  for (unsigned i = 0; i < 6; ++i) {
    ASSERT_EQ(send_from(*senders[i], 100 + i, 1000 + 100 * i, i), IBV_WC_SUCCESS);
    auto got = wait_cqes(*app_b, *cq_b, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(got[0].wr_id, i + 1) << "message " << i;
    EXPECT_EQ(got[0].qp_num, receivers[i]->qpn);
    EXPECT_EQ(got[0].byte_len, 1000 + 100 * i);
    std::vector<uint8_t> want(1000 + 100 * i);
    fill_pattern(want.data(), want.size(), i);
    EXPECT_EQ(std::memcmp(buf_b.data() + 8192 * (i + 1), want.data(), want.size()), 0);
    EXPECT_EQ(srq_consumer(s), i + 1);  // published like an RQ's
  }
}

TEST_F(Srq, LimitEventFiresOnceAndRearmsOnlyByModify) {
  setup();
  AppSrq s;
  ASSERT_EQ(create_srq(*app_b, pd_b, 16, 1, s), 0);
  auto [qa, qb] = srq_pair(s);
  for (uint64_t id = 1; id <= 8; ++id) post_srq(s, srq_wqe(id));
  ASSERT_EQ(modify_srq(*app_b, s, IBV_SRQ_LIMIT, 0, 4), 0);
  auto limit_events = [&] { return ev_b.count(IBV_EVENT_SRQ_LIMIT_REACHED, s.handle); };
  // 8 posted: after 4 messages 4 remain (not below 4), after the 5th 3 do.
  for (unsigned i = 1; i <= 7; ++i) {
    ASSERT_EQ(send_from(*qa, i, 64, i), IBV_WC_SUCCESS);
    ASSERT_EQ(wait_cqes(*app_b, *cq_b, 1).size(), 1u);
    EXPECT_EQ(limit_events(), i < 5 ? 0u : 1u) << "after message " << i;
  }
  EXPECT_EQ(query_srq(*app_b, s).srq_limit, 0u);  // disarmed by the event
  // 1 left. Post 4 (5 remain), re-arm at 3: two more messages leave 3 (no
  // event), the third leaves 2.
  for (uint64_t id = 9; id <= 12; ++id) post_srq(s, srq_wqe(id));
  ASSERT_EQ(modify_srq(*app_b, s, IBV_SRQ_LIMIT, 0, 3), 0);
  for (unsigned i = 8; i <= 10; ++i) {
    ASSERT_EQ(send_from(*qa, i, 64, i), IBV_WC_SUCCESS);
    ASSERT_EQ(wait_cqes(*app_b, *cq_b, 1).size(), 1u);
    EXPECT_EQ(limit_events(), i < 10 ? 1u : 2u) << "after message " << i;
  }
  ASSERT_EQ(send_from(*qa, 11, 64, 11), IBV_WC_SUCCESS);
  EXPECT_EQ(limit_events(), 2u);  // not re-armed
  // DESTROY_SRQ reports the events raised for it, as DESTROY_QP does.
  vhca_destroy_qp_rsp dq{};
  vhca_handle_req h{};
  h.handle = qb->handle;
  ASSERT_EQ(hca_b.destroy_qp(app_b->id(), h, dq), 0);
  h.handle = s.handle;
  vhca_destroy_qp_rsp ds{};
  ASSERT_EQ(hca_b.destroy_srq(app_b->id(), h, ds), 0);
  EXPECT_EQ(ds.events_reported, 2u);
}

TEST_F(Srq, QpInErrorReportsLastWqeAndLeavesTheSrqToOthers) {
  setup();
  AppSrq s;
  ASSERT_EQ(create_srq(*app_b, pd_b, 16, 1, s), 0);
  auto [a1, b1] = srq_pair(s);
  auto [a2, b2] = srq_pair(s);
  for (uint64_t id = 1; id <= 3; ++id) post_srq(s, srq_wqe(id));
  ibv_qp_attr e{};
  e.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(app_b->modify(*b1, e, IBV_QP_STATE), 0);
  run_for(1'000'000);
  EXPECT_EQ(ev_b.count(IBV_EVENT_QP_LAST_WQE_REACHED, b1->handle), 1u);
  EXPECT_EQ(ev_b.count(IBV_EVENT_QP_LAST_WQE_REACHED, b2->handle), 0u);
  EXPECT_TRUE(app_b->drain(*cq_b).empty());  // the SRQ's WQEs are not flushed
  EXPECT_EQ(srq_consumer(s), 0u);
  ASSERT_EQ(send_from(*a2, 1, 500, 1), IBV_WC_SUCCESS);
  auto got = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].wr_id, 1u);
  EXPECT_EQ(got[0].qp_num, b2->qpn);
  run_for(1'000'000);
  EXPECT_EQ(ev_b.count(IBV_EVENT_QP_LAST_WQE_REACHED, b1->handle), 1u);  // once
}

TEST_F(Srq, QpFailingMidMessageFlushesTheWqeItTook) {
  setup();
  AppSrq s;
  ASSERT_EQ(create_srq(*app_b, pd_b, 16, 1, s), 0);
  auto [qa, qb] = srq_pair(s);
  post_srq(s, srq_wqe(1));
  post_srq(s, srq_wqe(2));
  // Only the first packet of a 3-packet message arrives; then B's QP fails.
  unsigned n = 0;
  net.filter = [&](const Sent& p) {
    return (p.from_lid == kLidA && !p.is_ack() && n++ > 0) ? Verdict{Verdict::kDrop, 0} : Verdict{};
  };
  app_a->post_send(*qa, send_wqe(9, {sge(buf_a.data(), 3000, mr_a.lkey)}));
  run_for(100'000);
  EXPECT_EQ(srq_consumer(s), 1u);  // taken by the QP at the first packet
  ibv_qp_attr e{};
  e.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(app_b->modify(*qb, e, IBV_QP_STATE), 0);
  auto got = wait_cqes(*app_b, *cq_b, 1, sched.now() + 1'000'000);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].wr_id, 1u);
  EXPECT_EQ(got[0].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(ev_b.count(IBV_EVENT_QP_LAST_WQE_REACHED, qb->handle), 1u);
  EXPECT_EQ(srq_consumer(s), 1u);  // WQE 2 stays in the SRQ
  net.filter = nullptr;
}

TEST_F(Srq, HostileProducerFailsTheSrqAndItsQps) {
  setup();
  AppSrq s, other;
  ASSERT_EQ(create_srq(*app_b, pd_b, 16, 1, s), 0);
  ASSERT_EQ(create_srq(*app_b, pd_b, 16, 1, other), 0);
  auto [a1, b1] = srq_pair(s);
  auto [a2, b2] = srq_pair(s);
  auto [a3, b3] = srq_pair(other);
  post_srq(s, srq_wqe(1));
  __atomic_store_n(&s.ring.hdr()->producer, 1000u, __ATOMIC_RELEASE);  // > a ring's worth
  const uint64_t hostile = hca_b.counters().hostile_ring_events;
  EXPECT_NE(send_from(*a1, 1, 100, 1), IBV_WC_SUCCESS);  // NAKed: remote operational error
  run_for(1'000'000);
  EXPECT_EQ(hca_b.counters().hostile_ring_events, hostile + 1);
  EXPECT_EQ(ev_b.count(IBV_EVENT_SRQ_ERR, s.handle), 1u);
  EXPECT_EQ(app_b->query(*b1).attr.qp_state, IBV_QPS_ERR);
  EXPECT_EQ(app_b->query(*b2).attr.qp_state, IBV_QPS_ERR);
  EXPECT_EQ(ev_b.count(IBV_EVENT_QP_LAST_WQE_REACHED, b1->handle), 1u);
  EXPECT_EQ(ev_b.count(IBV_EVENT_QP_LAST_WQE_REACHED, b2->handle), 1u);
  // The other SRQ and its QP are untouched.
  EXPECT_EQ(app_b->query(*b3).attr.qp_state, IBV_QPS_RTS);
  post_srq(other, srq_wqe(5));
  EXPECT_EQ(send_from(*a3, 2, 100, 2), IBV_WC_SUCCESS);
  auto got = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().wr_id, 5u);
  EXPECT_EQ(got.back().status, IBV_WC_SUCCESS);
  // A QP created on the broken SRQ later never reads it: its first request
  // fails it (a NAK, not endless RNR NAKs).
  auto [a4, b4] = srq_pair(s);
  const uint64_t rnr = hca_b.counters().rnr_naks_sent;
  EXPECT_EQ(send_from(*a4, 3, 100, 3), IBV_WC_REM_OP_ERR);
  EXPECT_EQ(hca_b.counters().rnr_naks_sent, rnr);
  EXPECT_EQ(app_b->query(*b4).attr.qp_state, IBV_QPS_ERR);
  EXPECT_EQ(destroy_srq(*app_b, s.handle), EBUSY);
}

TEST_F(Srq, WqeSgeCountOverSrqMaxIsLocalQpOpError) {
  setup();
  AppSrq s;
  ASSERT_EQ(create_srq(*app_b, pd_b, 16, 1, s), 0);
  auto [qa, qb] = srq_pair(s);
  post_srq(s, recv_wqe(1, {sge(buf_b.data(), 100, mr_b.lkey), sge(buf_b.data() + 100, 100, mr_b.lkey)}));
  EXPECT_NE(send_from(*qa, 1, 100, 1), IBV_WC_SUCCESS);
  auto got = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].wr_id, 1u);
  EXPECT_EQ(got[0].status, IBV_WC_LOC_QP_OP_ERR);
  EXPECT_EQ(srq_consumer(s), 1u);
}

TEST_F(Srq, CloseClientTearsDownSrqs) {
  setup();
  AppSrq s;
  ASSERT_EQ(create_srq(*app_b, pd_b, 16, 1, s), 0);
  AppQp q;
  ASSERT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_RC, s.handle, q), 0);
  hca_b.close_client(app_b->id());
  EXPECT_EQ(hca_b.counts().srqs, 0u);
  EXPECT_EQ(hca_b.counts().pds, 0u);
}

}  // namespace
}  // namespace vf::engine::test
