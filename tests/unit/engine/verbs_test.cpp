// Slow-path verbs: device/port queries report exactly the limits that are
// enforced, object creation checks, busy objects, sealed rings, teardown.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/unit/engine/harness.hpp"

namespace vf::engine::test {
namespace {

class Verbs : public Pair {};

TEST_F(Verbs, QueryDeviceReportsEnforcedLimits) {
  App app(hca_a, 1);
  vhca_query_device_rsp rsp{};
  ASSERT_EQ(hca_a.query_device(1, rsp), 0);
  const ibv_device_attr& d = rsp.attr;
  const DeviceLimits& l = hca_a.config().limits;
  EXPECT_EQ(d.node_guid, htobe64(0xA));
  EXPECT_EQ(d.sys_image_guid, htobe64(0xA));
  EXPECT_EQ(d.max_qp, int(l.max_qp));
  EXPECT_EQ(d.max_qp_wr, int(l.max_qp_wr));
  EXPECT_EQ(d.max_sge, VHCA_MAX_SGE);
  EXPECT_EQ(d.max_cq, int(l.max_cq));
  EXPECT_EQ(d.max_cqe, int(l.max_cqe));
  EXPECT_EQ(d.max_mr, int(l.max_mr));
  EXPECT_EQ(d.max_pd, int(l.max_pd));
  EXPECT_EQ(d.max_mr_size, l.max_mr_size);
  EXPECT_EQ(d.phys_port_cnt, 1);
  EXPECT_EQ(d.max_pkeys, 1);
  EXPECT_EQ(d.max_srq, int(l.max_srq));
  EXPECT_EQ(d.max_srq_wr, int(l.max_srq_wr));
  EXPECT_EQ(d.max_srq_sge, int(l.max_srq_sge));
  EXPECT_EQ(d.max_ah, int(l.max_ah));
  EXPECT_TRUE(d.device_cap_flags & IBV_DEVICE_RC_RNR_NAK_GEN);
  EXPECT_EQ(hca_a.query_device(99, rsp), EINVAL);  // unknown client
}

TEST_F(Verbs, QueryPortIbAndRoce) {
  App app(hca_a, 1);
  vhca_query_port_req q{};
  q.port_num = 1;
  vhca_query_port_rsp r{};
  ASSERT_EQ(hca_a.query_port(1, q, r), 0);
  EXPECT_EQ(r.attr.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(r.attr.phys_state, 5);
  EXPECT_EQ(r.attr.link_layer, IBV_LINK_LAYER_INFINIBAND);
  EXPECT_EQ(r.attr.lid, kLidA);
  EXPECT_EQ(r.attr.sm_lid, 1);
  EXPECT_EQ(r.attr.active_mtu, IBV_MTU_4096);
  EXPECT_EQ(r.attr.max_mtu, IBV_MTU_4096);
  EXPECT_EQ(r.attr.active_speed, 32);
  EXPECT_EQ(r.attr.active_width, 2);
  EXPECT_EQ(r.attr.gid_tbl_len, 1);
  EXPECT_EQ(r.attr.pkey_tbl_len, 1);
  EXPECT_EQ(r.attr.max_msg_sz, 1u << 31);
  q.port_num = 2;
  EXPECT_EQ(hca_a.query_port(1, q, r), EINVAL);

  reconfigure([](HcaConfig&, PortInfo& p) {
    p.link_layer = LinkLayer::kEthernet;
    p.mtu = 1024;
    p.gids = {to_gid(gid_of(1)), to_gid(gid_of(2))};
    p.active_speed = 64;
    p.active_width = 1;
  });
  App app2(hca_a, 1);
  q.port_num = 1;
  ASSERT_EQ(hca_a.query_port(1, q, r), 0);
  EXPECT_EQ(r.attr.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(r.attr.lid, 0);
  EXPECT_EQ(r.attr.active_mtu, IBV_MTU_1024);
  EXPECT_EQ(r.attr.gid_tbl_len, 2);
  EXPECT_EQ(r.attr.active_speed, 64);
  EXPECT_EQ(r.attr.active_width, 1);
}

TEST_F(Verbs, RoceQpNeedsGrh) {
  reconfigure([](HcaConfig& c, PortInfo& p) {
    p.link_layer = LinkLayer::kEthernet;
    p.gids = {to_gid(gid_of(c.node_guid))};
  });
  App app(hca_a, 1);
  uint32_t pd = app.alloc_pd();
  auto cq = app.cq();
  auto q = app.qp(pd, *cq, *cq);
  ASSERT_EQ(app.modify(*q, init_attr(), kInitMask), 0);
  ConnParams p;
  ibv_qp_attr a = rtr_attr(0x10001, 0, 1, p);
  EXPECT_EQ(app.modify(*q, a, kRtrMask), EINVAL);
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = gid_of(0xB);
  a.ah_attr.grh.sgid_index = 0;
  EXPECT_EQ(app.modify(*q, a, kRtrMask), 0);
}

TEST_F(Verbs, RoceSendRecv) {
  reconfigure([](HcaConfig& c, PortInfo& p) {
    p.link_layer = LinkLayer::kEthernet;
    p.gids = {to_gid(gid_of(c.node_guid))};
  });
  app_a = std::make_unique<App>(hca_a, 1);
  app_b = std::make_unique<App>(hca_b, 2);
  pd_a = app_a->alloc_pd();
  pd_b = app_b->alloc_pd();
  cq_a = app_a->cq();
  cq_b = app_b->cq();
  qp_a = app_a->qp(pd_a, *cq_a, *cq_a);
  qp_b = app_b->qp(pd_b, *cq_b, *cq_b);
  buf_a.assign(1 << 20, 0);
  buf_b.assign(1 << 20, 0);
  mr_a = app_a->mr(pd_a, buf_a.data(), buf_a.size());
  mr_b = app_b->mr(pd_b, buf_b.data(), buf_b.size());
  auto rtr = [&](const AppQp& peer, uint16_t lid, uint64_t guid, uint32_t psn) {
    ibv_qp_attr a = rtr_attr(peer.qpn, lid, psn, params);  // the test wire routes by LID
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = gid_of(guid);
    return a;
  };
  ASSERT_EQ(app_a->modify(*qp_a, init_attr(), kInitMask), 0);
  ASSERT_EQ(app_b->modify(*qp_b, init_attr(), kInitMask), 0);
  ASSERT_EQ(app_a->modify(*qp_a, rtr(*qp_b, kLidB, 0xB, params.psn_b), kRtrMask), 0);
  ASSERT_EQ(app_b->modify(*qp_b, rtr(*qp_a, kLidA, 0xA, params.psn_a), kRtrMask), 0);
  ASSERT_EQ(app_a->modify(*qp_a, rts_attr(params.psn_a, params), kRtsMask), 0);
  ASSERT_EQ(app_b->modify(*qp_b, rts_attr(params.psn_b, params), kRtsMask), 0);
  EXPECT_TRUE(exchange_ok(*qp_a, *qp_b));
}

TEST_F(Verbs, PacketsFromTheWrongSourceAreDropped) {
  setup();
  // A third vHCA (LID 3) sends to B's QP, which is connected to A.
  TestPort port_c(net, 3, gid_of(0xC));
  Hca hca_c(hca_config("vhca_c", 0xC), sched, port_c);
  net.attach(3, &hca_c);
  extra_hcas.push_back(&hca_c);
  App app_c(hca_c, 5);
  uint32_t pd = app_c.alloc_pd();
  auto cq = app_c.cq();
  auto q = app_c.qp(pd, *cq, *cq);
  auto mr = app_c.mr(pd, buf_a.data(), 4096);
  ConnParams p = params;
  p.retry_cnt = 0;
  p.timeout = 8;
  ASSERT_EQ(app_c.modify(*q, init_attr(), kInitMask), 0);
  ASSERT_EQ(app_c.modify(*q, rtr_attr(qp_b->qpn, kLidB, 1, p), kRtrMask), 0);
  ASSERT_EQ(app_c.modify(*q, rts_attr(p.psn_a, p), kRtsMask), 0);  // even the right PSN
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_c.post_send(*q, send_wqe(1, {sge(buf_a.data(), 100, mr.lkey)}));
  run_for(10'000'000);
  EXPECT_TRUE(app_b->drain(*cq_b).empty());
  EXPECT_GE(hca_b.counters().rx_dropped, 1u);
  EXPECT_EQ(hca_b.counters().rx_qp_mismatch, hca_b.counters().rx_dropped) << "counted as from the wrong source";
  auto c = app_c.drain(*cq);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, IBV_WC_RETRY_EXC_ERR);
  // The receive C could not reach is still there for A.
  app_a->post_send(*qp_a, send_wqe(9, {sge(buf_a.data(), 100, mr_a.lkey)}));
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].wr_id, 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
  hca_c.close_client(5);
  net.detach(3);
  extra_hcas.clear();
}

TEST_F(Verbs, CreateChecksAndLimits) {
  reconfigure([](HcaConfig& c, PortInfo&) {
    c.limits.max_qp = 2;
    c.limits.max_cq = 3;
    c.limits.max_pd = 2;
    c.limits.max_mr = 2;
    c.limits.max_qp_wr = 128;
    c.limits.max_cqe = 1000;
  });
  App app(hca_a, 1);
  vhca_alloc_pd_rsp pr{};
  uint32_t pd = app.alloc_pd();
  app.alloc_pd();
  EXPECT_EQ(hca_a.alloc_pd(1, pr), ENOMEM);
  std::vector<uint8_t> b(4096);
  vhca_reg_mr_rsp mr{};
  EXPECT_EQ(app.reg_mr(pd, b.data(), 64, 0, mr), 0);
  EXPECT_EQ(app.reg_mr(pd, b.data(), 64, 0, mr), 0);
  EXPECT_EQ(app.reg_mr(pd, b.data(), 64, 0, mr), ENOMEM);

  vhca_create_cq_req cq{};
  vhca_create_cq_rsp cr{};
  Fd fd;
  cq.cqe = 0;
  EXPECT_EQ(hca_a.create_cq(1, cq, cr, fd), EINVAL);
  EXPECT_EQ(fd.fd, -1);
  cq.cqe = 1001;
  EXPECT_EQ(hca_a.create_cq(1, cq, cr, fd), EINVAL);
  cq.cqe = 1000;
  cq.comp_vector = 1;
  EXPECT_EQ(hca_a.create_cq(1, cq, cr, fd), EINVAL);
  auto c1 = app.cq(1000);
  EXPECT_EQ(c1->entries, 1024u);
  auto c2 = app.cq(5);
  EXPECT_EQ(c2->entries, 8u);
  auto c3 = app.cq(5);
  cq.cqe = 5;
  cq.comp_vector = 0;
  EXPECT_EQ(hca_a.create_cq(1, cq, cr, fd), ENOMEM);

  AppQp q;
  QpCaps caps;
  caps.send_wr = 129;
  EXPECT_EQ(app.create_qp(pd, *c1, *c1, caps, q), EINVAL);
  caps = {};
  caps.send_sge = VHCA_MAX_SGE + 1;
  EXPECT_EQ(app.create_qp(pd, *c1, *c1, caps, q), EINVAL);
  caps = {};
  caps.inline_data = VHCA_MAX_INLINE + 1;
  EXPECT_EQ(app.create_qp(pd, *c1, *c1, caps, q), EINVAL);
  caps = {};
  caps.send_wr = 100;
  caps.recv_wr = 0;
  caps.send_sge = 0;
  AppQp q1, q2, q3;
  ASSERT_EQ(app.create_qp(pd, *c1, *c2, caps, q1), 0);
  EXPECT_EQ(q1.rsp.sq_entries, 128u);
  EXPECT_EQ(q1.rsp.rq_entries, 1u);
  EXPECT_EQ(q1.rsp.cap.max_send_wr, 128u);
  EXPECT_EQ(q1.rsp.cap.max_send_sge, 1u);
  EXPECT_EQ(q1.rsp.cap.max_inline_data, caps.inline_data);
  EXPECT_NE(q1.qpn, 0u);
  EXPECT_NE(q1.qpn, 1u);
  ASSERT_EQ(app.create_qp(pd, *c1, *c1, {}, q2), 0);
  EXPECT_EQ(app.create_qp(pd, *c1, *c1, {}, q3), ENOMEM);

  vhca_create_qp_req req{};
  req.pd_handle = pd;
  req.send_cq_handle = c1->handle;
  req.recv_cq_handle = c1->handle;
  req.qp_type = IBV_QPT_UD;
  vhca_create_qp_rsp rsp{};
  Fd s, r;
  EXPECT_EQ(hca_a.create_qp(1, req, rsp, s, r), ENOMEM);  // the type is fine; the table is full
  req.qp_type = 77;
  EXPECT_EQ(hca_a.create_qp(1, req, rsp, s, r), EINVAL);
  req.qp_type = IBV_QPT_RC;
  req.srq_handle = 1;
  EXPECT_EQ(hca_a.create_qp(1, req, rsp, s, r), EINVAL);
  EXPECT_EQ(s.fd, -1);
  EXPECT_EQ(r.fd, -1);

  // Busy objects.
  vhca_handle_req h{};
  h.handle = c1->handle;
  EXPECT_EQ(hca_a.destroy_cq(1, h), EBUSY);
  h.handle = pd;
  EXPECT_EQ(hca_a.dealloc_pd(1, h), EBUSY);
  h.handle = q1.handle;
  vhca_destroy_qp_rsp dr{};
  EXPECT_EQ(hca_a.destroy_qp(1, h, dr), 0);
  EXPECT_EQ(hca_a.destroy_qp(1, h, dr), ENOENT);
  h.handle = c2->handle;
  EXPECT_EQ(hca_a.destroy_cq(1, h), 0);
  // A QPN is not reused at once for the next QP in the same slot.
  AppQp q4;
  ASSERT_EQ(app.create_qp(pd, *c1, *c1, {}, q4), 0);
  EXPECT_NE(q4.qpn, q1.qpn);
  EXPECT_EQ(q4.qpn & 0xFFFF, q1.qpn & 0xFFFF);

  hca_a.close_client(1);
  auto n = hca_a.counts();
  EXPECT_EQ(n.clients + n.pds + n.mrs + n.cqs + n.qps, 0u);
}

TEST_F(Verbs, RingsAreSealedMemfds) {
  App app(hca_a, 1);
  vhca_create_cq_req q{};
  q.cqe = 10;
  vhca_create_cq_rsp r{};
  Fd fd;
  ASSERT_EQ(hca_a.create_cq(1, q, r, fd), 0);
  ASSERT_GE(fd.fd, 0);
  const int seals = fcntl(fd.fd, F_GET_SEALS);
  EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  EXPECT_NE(ftruncate(fd.fd, 0), 0);  // an app cannot pull the pages from under the engine
  EXPECT_NE(fcntl(fd.fd, F_ADD_SEALS, F_SEAL_WRITE), 0);
  EXPECT_TRUE(fcntl(fd.fd, F_GETFD) & FD_CLOEXEC);
  close(fd.fd);
}

// RESIZE_CQ's phases, as a hostile provider may send them: COMMIT or an
// unknown phase without a PREPARE change nothing, ABORT drops the prepared
// ring, and an impossible consumer index refuses the resize.
TEST_F(Verbs, ResizeCqPhasesAreCheckedAndAbortable) {
  App app(hca_a, 1);
  vhca_create_cq_req q{};
  q.cqe = 10;
  vhca_create_cq_rsp r{};
  Fd ring;
  ASSERT_EQ(hca_a.create_cq(1, q, r, ring), 0);
  auto resize = [&](uint32_t phase, uint32_t cqe, vhca_resize_cq_rsp& rsp, Fd& fd) {
    vhca_resize_cq_req req{};
    req.cq_handle = r.cq_handle;
    req.cqe = cqe;
    req.phase = phase;
    return hca_a.resize_cq(1, req, rsp, fd);
  };
  vhca_resize_cq_rsp rr{};
  Fd none;
  EXPECT_EQ(resize(VHCA_RESIZE_CQ_COMMIT, 0, rr, none), EINVAL) << "nothing prepared";
  EXPECT_EQ(resize(7, 100, rr, none), EINVAL) << "no such phase";
  EXPECT_EQ(resize(VHCA_RESIZE_CQ_PREPARE, 0, rr, none), EINVAL);
  Fd fresh;
  ASSERT_EQ(resize(VHCA_RESIZE_CQ_PREPARE, 100, rr, fresh), 0);
  EXPECT_EQ(rr.entries, 128u);
  EXPECT_GE(fresh.fd, 0);
  close(fresh.fd);
  EXPECT_EQ(resize(VHCA_RESIZE_CQ_ABORT, 0, rr, none), 0);
  EXPECT_EQ(resize(VHCA_RESIZE_CQ_COMMIT, 0, rr, none), EINVAL) << "the abort dropped it";
  ASSERT_EQ(resize(VHCA_RESIZE_CQ_PREPARE, 100, rr, fresh), 0);
  close(fresh.fd);
  EXPECT_EQ(resize(VHCA_RESIZE_CQ_COMMIT, 0, rr, none), 0);
  EXPECT_EQ(rr.entries, 128u);
  EXPECT_EQ(none.fd, -1) << "only PREPARE hands out a ring";
  // The app's copy of the old ring is stale now; a consumer index beyond
  // the producer in the live one makes any resize impossible.
  ASSERT_EQ(resize(VHCA_RESIZE_CQ_PREPARE, 200, rr, fresh), 0);
  ASSERT_EQ(resize(VHCA_RESIZE_CQ_COMMIT, 0, rr, none), 0);
  void* p = mmap(nullptr, sizeof(vhca_ring_hdr) + 256 * sizeof(vhca_cqe), PROT_READ | PROT_WRITE, MAP_SHARED,
                 fresh.fd, 0);
  ASSERT_NE(p, MAP_FAILED);
  static_cast<vhca_ring_hdr*>(p)->consumer = 1000;
  EXPECT_EQ(resize(VHCA_RESIZE_CQ_PREPARE, 300, rr, none), EINVAL);
  munmap(p, sizeof(vhca_ring_hdr) + 256 * sizeof(vhca_cqe));
  close(fresh.fd);
  close(ring.fd);
}

TEST_F(Verbs, OpenTwiceAndUnknownClients) {
  App app(hca_a, 1);
  vhca_open_context_rsp rsp{};
  EXPECT_EQ(hca_a.open_client(1, getpid(), self_mem_fd(), rsp), EEXIST);
  vhca_alloc_pd_rsp pr{};
  EXPECT_EQ(hca_a.alloc_pd(42, pr), EINVAL);
  hca_a.close_client(42);  // harmless
  hca_a.close_client(1);
  EXPECT_EQ(hca_a.alloc_pd(1, pr), EINVAL);
  EXPECT_EQ(hca_a.counts().clients, 0u);
}

TEST_F(Verbs, IdleEngineReportsNoWork) {
  setup();
  EXPECT_FALSE(hca_a.poll(64));
  EXPECT_FALSE(hca_b.poll(64));
  EXPECT_TRUE(sched.idle());
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 64, mr_b.lkey)}));
  EXPECT_FALSE(hca_b.poll(64));  // a posted receive is not work until a packet comes
  app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), 64, mr_a.lkey)}));
  EXPECT_TRUE(hca_a.poll(64));  // a posted send is
  EXPECT_FALSE(hca_a.poll(64));
  EXPECT_FALSE(sched.idle());   // retransmit timer + the wire
  ASSERT_EQ(wait_cqes(*app_a, *cq_a, 1).size(), 1u);
  EXPECT_TRUE(sched.idle());
}

// Every packet a vHCA receives and does not process is counted by why, so a
// retransmission at the sender can be matched to its cause at the receiver.
TEST_F(Verbs, PacketsForAQpThatCannotTakeThemAreCountedByWhy) {
  ConnParams p = params;
  p.retry_cnt = 0;  // each sender gives up after one timeout
  p.timeout = 8;
  setup(p);
  auto send_one = [&](uint64_t id) {
    app_a->post_send(*qp_a, send_wqe(id, {sge(buf_a.data(), 100, mr_a.lkey)}));
    run_for(10'000'000);
  };
  const Counters& b = hca_b.counters();
  // B's QP back in RESET: not ready.
  ibv_qp_attr reset{};
  reset.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(app_b->modify(*qp_b, reset, IBV_QP_STATE), 0);
  send_one(1);
  EXPECT_EQ(b.rx_qp_not_ready, 1u);
  // B's QP destroyed while A still sends to it: destroyed, not unknown.
  vhca_handle_req h{};
  h.handle = qp_b->handle;
  vhca_destroy_qp_rsp dr{};
  ASSERT_EQ(hca_b.destroy_qp(app_b->id(), h, dr), 0);
  auto q2 = app_a->qp(pd_a, *cq_a, *cq_a);
  ASSERT_EQ(app_a->modify(*q2, init_attr(), kInitMask), 0);
  ASSERT_EQ(app_a->modify(*q2, rtr_attr(qp_b->qpn, kLidB, 1, p), kRtrMask), 0);
  ASSERT_EQ(app_a->modify(*q2, rts_attr(p.psn_a, p), kRtsMask), 0);
  app_a->post_send(*q2, send_wqe(2, {sge(buf_a.data(), 100, mr_a.lkey)}));
  run_for(10'000'000);
  EXPECT_EQ(b.rx_qp_destroyed, 1u);
  // A QP number B never handed out: unknown.
  auto q3 = app_a->qp(pd_a, *cq_a, *cq_a);
  ASSERT_EQ(app_a->modify(*q3, init_attr(), kInitMask), 0);
  ASSERT_EQ(app_a->modify(*q3, rtr_attr(qp_b->qpn + 0x100, kLidB, 1, p), kRtrMask), 0);
  ASSERT_EQ(app_a->modify(*q3, rts_attr(p.psn_a, p), kRtsMask), 0);
  app_a->post_send(*q3, send_wqe(3, {sge(buf_a.data(), 100, mr_a.lkey)}));
  run_for(10'000'000);
  EXPECT_EQ(b.rx_qp_unknown, 1u);
  EXPECT_EQ(b.rx_qp_mismatch, 0u);
  EXPECT_EQ(b.rx_dropped, b.rx_qp_not_ready + b.rx_qp_destroyed + b.rx_qp_unknown);
}

}  // namespace
}  // namespace vf::engine::test

