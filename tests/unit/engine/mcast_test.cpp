// UD multicast in the engine, in virtual time: attach/detach with the
// kernel's checks, one datagram to a group received once by every member QP
// that may take it (each with its own Q_Key and state), copies that find no
// mbuf counted while the last member still gets the original, and packets
// whose DestQP and address disagree about being multicast dropped. Every
// test ends with the mbufs it began with (mbuf_checked_main).
#include <endian.h>

#include <vector>

#include "tests/unit/engine/ud_fixture.hpp"

namespace vf::engine::test {
namespace {

constexpr uint16_t kMlid = 0xC012;
constexpr uint32_t kGroupQpn = 0xFFFFFF;

ibv_gid mgid(uint8_t last = 1) {
  ibv_gid g{};
  const uint8_t raw[16] = {0xFF, 0x12, 0x40, 0x1B, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, last};
  std::memcpy(g.raw, raw, 16);
  return g;
}

class Mcast : public UdPair {
 protected:
  int attach(App& app, const AppQp& q, const ibv_gid& g = mgid(), uint16_t lid = kMlid) {
    return app.hca().attach_mcast(app.id(), req(q, g, lid));
  }
  int detach(App& app, const AppQp& q, const ibv_gid& g = mgid(), uint16_t lid = kMlid) {
    return app.hca().detach_mcast(app.id(), req(q, g, lid));
  }
  static vhca_mcast_req req(const AppQp& q, const ibv_gid& g, uint16_t lid) {
    vhca_mcast_req r{};
    r.qp_handle = q.handle;
    r.lid = lid;
    std::memcpy(r.gid, g.raw, 16);
    return r;
  }
  // Another UD QP on B, brought to RTS with `qkey` unless `up` is false.
  std::unique_ptr<AppQp> qp_on_b(uint32_t qkey, bool up = true) {
    auto q = std::make_unique<AppQp>();
    EXPECT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_UD, 0, *q), 0);
    if (up) ud_up(*app_b, *q, qkey);
    return q;
  }
  void post_on(AppQp& q, uint64_t id) {
    std::memset(rbuf(id), 0xEE, 8192);
    app_b->post_recv(q, recv_wqe(id, {sge(rbuf(id), 8192, mr_b.lkey)}));
  }
  // IB: the test wire carries the MLID to B, as a switch's MFT would.
  uint32_t group_ah() {
    net->attach(kMlid, hca_b.get());
    uint32_t h = 0;
    EXPECT_EQ(create_ah(*app_a, pd_a, global_ah(kMlid, mgid()), h), 0);
    return h;
  }
};

TEST_F(Mcast, EveryMemberThatMayReceiveGetsOneCopy) {
  build(false);
  auto c = qp_on_b(kQkeyB);
  auto wrong_qkey = qp_on_b(0x7777);
  auto not_ready = qp_on_b(kQkeyB, /*up=*/false);  // RESET: may not receive
  for (AppQp* q : {qp_b.get(), c.get(), wrong_qkey.get(), not_ready.get()}) ASSERT_EQ(attach(*app_b, *q), 0);
  post_on(*qp_b, 1);
  post_on(*c, 2);
  post_on(*wrong_qkey, 3);
  const uint32_t ah = group_ah();
  send_ud(9, 500, ah, kQkeyB, IBV_WR_SEND, 0, kGroupQpn);
  run_for(100'000);
  const auto cqes = app_b->drain(*cq_b);
  ASSERT_EQ(cqes.size(), 2u);
  std::vector<uint64_t> ids;
  for (const vhca_cqe& e : cqes) {
    EXPECT_EQ(e.status, IBV_WC_SUCCESS);
    EXPECT_EQ(e.src_qp, qp_a->qpn);
    EXPECT_EQ(e.byte_len, 540u);
    EXPECT_TRUE(e.wc_flags & IBV_WC_GRH);
    ids.push_back(e.wr_id);
    std::vector<uint8_t> want(500);
    fill_pattern(want.data(), 500, 9);
    EXPECT_EQ(std::memcmp(rbuf(e.wr_id) + 40, want.data(), 500), 0) << "member " << e.wr_id;
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2})) << "qp_b, then c; not the wrong Q_Key, not the QP in RESET";
  const Counters& k = hca_b->counters();
  EXPECT_EQ(k.mcast_rx_packets, 1u);
  EXPECT_EQ(k.qkey_violations, 1u);
  for (AppQp* q : {qp_b.get(), c.get(), wrong_qkey.get(), not_ready.get()}) EXPECT_EQ(detach(*app_b, *q), 0);
}

TEST_F(Mcast, CopiesWithoutAnMbufAreCountedAndTheLastMemberGetsTheOriginal) {
  build(false);
  auto c = qp_on_b(kQkeyB);
  ASSERT_EQ(attach(*app_b, *qp_b), 0);
  ASSERT_EQ(attach(*app_b, *c), 0);
  post_on(*qp_b, 1);
  post_on(*c, 2);
  const uint32_t ah = group_ah();
  send_ud(4, 64, ah, kQkeyB, IBV_WR_SEND, 0, kGroupQpn);
  settle();  // the datagram is on the wire
  std::vector<rte_mbuf*> hoard;  // the pool runs dry before it arrives
  while (rte_mbuf* m = rte_pktmbuf_alloc(vf::test::test_mbuf_pool())) hoard.push_back(m);
  run_for(100'000);
  for (rte_mbuf* m : hoard) rte_pktmbuf_free(m);
  const auto cqes = app_b->drain(*cq_b);
  ASSERT_EQ(cqes.size(), 1u) << "one member's copy was lost";
  EXPECT_EQ(cqes[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(hca_b->counters().mcast_copy_failures, 1u);
  EXPECT_EQ(detach(*app_b, *qp_b), 0);
  EXPECT_EQ(detach(*app_b, *c), 0);
}

// A QPN behind a multicast address would reach that QPN on every member:
// only DestQP 0xFFFFFF may be sent to a group, and a datagram to 0xFFFFFF
// without a group's address reaches no one.
TEST_F(Mcast, DestQpAndAddressMustAgreeAboutTheGroup) {
  build(false);
  ASSERT_EQ(attach(*app_b, *qp_b), 0);
  post_on(*qp_b, 1);
  const uint32_t group = group_ah();
  send_ud(1, 64, group, kQkeyB, IBV_WR_SEND, 0, qp_b->qpn);  // the group's address, a unicast QPN
  send_ud(2, 64, ah_to_b(true), kQkeyB, IBV_WR_SEND, 0, kGroupQpn);  // a unicast address, DestQP 0xFFFFFF
  run_for(100'000);
  EXPECT_TRUE(app_b->drain(*cq_b).empty());
  EXPECT_EQ(hca_b->counters().rx_dropped, 2u);
  EXPECT_EQ(hca_b->counters().mcast_rx_no_member, 1u);
  EXPECT_EQ(detach(*app_b, *qp_b), 0);
}

TEST_F(Mcast, AttachAndDetachAreCheckedAsTheKernelChecksThem) {
  build(false);
  AppQp rc;
  ASSERT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_RC, 0, rc), 0);
  EXPECT_EQ(attach(*app_b, rc), EINVAL) << "UD only";
  EXPECT_EQ(attach(*app_b, *qp_b, gid_b), EINVAL) << "a unicast GID";
  EXPECT_EQ(attach(*app_b, *qp_b, mgid(), 0x0005), EINVAL) << "a unicast LID";
  EXPECT_EQ(attach(*app_b, *qp_b, mgid(), 0xFFFF), EINVAL) << "the permissive LID";
  App other(*hca_b, 3);
  EXPECT_EQ(attach(other, *qp_b), EINVAL) << "another client's QP handle";
  ASSERT_EQ(attach(*app_b, *qp_b), 0);
  EXPECT_EQ(attach(*app_b, *qp_b), 0) << "twice: a no-op";
  auto c = qp_on_b(kQkeyB);
  EXPECT_EQ(attach(*app_b, *c, mgid(), kMlid + 1), EINVAL) << "the group's MLID is kMlid";
  EXPECT_EQ(detach(*app_b, *c), EINVAL) << "not attached";
  vhca_handle_req d{};
  d.handle = qp_b->handle;
  vhca_destroy_qp_rsp rsp{};
  EXPECT_EQ(hca_b->destroy_qp(app_b->id(), d, rsp), EBUSY);
  EXPECT_EQ(detach(*app_b, *qp_b), 0);
  EXPECT_EQ(detach(*app_b, *qp_b), EINVAL);
}

// Limits are the device's (query_device reports them): here 2 groups, 2 QPs
// a group, 3 attachments in all.
TEST_F(Mcast, LimitsAreTheDevicesAndFreedPlacesCanBeRetaken) {
  build(false);
  DeviceLimits l;
  l.max_mcast_grp = 2;
  l.max_mcast_qp_attach = 2;
  l.max_total_mcast_qp_attach = 3;
  HcaConfig cfg = hca_config("small", 0xC);
  cfg.limits = l;
  Hca small(cfg, sched, *port_b);
  App app(small, 9);
  const uint32_t pd = app.alloc_pd();
  auto cq = app.cq();
  std::vector<std::unique_ptr<AppQp>> qps;
  for (int i = 0; i < 3; ++i) {
    qps.push_back(std::make_unique<AppQp>());
    ASSERT_EQ(create_qp_ex(app, pd, *cq, *cq, IBV_QPT_UD, 0, *qps.back()), 0);
  }
  EXPECT_EQ(attach(app, *qps[0], mgid(1)), 0);
  EXPECT_EQ(attach(app, *qps[1], mgid(1)), 0);
  EXPECT_EQ(attach(app, *qps[2], mgid(1)), ENOMEM) << "2 QPs a group";
  EXPECT_EQ(attach(app, *qps[2], mgid(2), kMlid + 1), 0);
  EXPECT_EQ(attach(app, *qps[2], mgid(3), kMlid + 2), ENOMEM) << "3 attachments in all";
  EXPECT_EQ(detach(app, *qps[0], mgid(1)), 0);
  EXPECT_EQ(attach(app, *qps[2], mgid(3), kMlid + 2), ENOMEM) << "2 groups";
  EXPECT_EQ(attach(app, *qps[2], mgid(1)), 0) << "the freed place";
  vhca_query_device_rsp dev{};
  ASSERT_EQ(small.query_device(app.id(), dev), 0);
  EXPECT_EQ(dev.attr.max_mcast_grp, 2);
  EXPECT_EQ(dev.attr.max_mcast_qp_attach, 2);
  EXPECT_EQ(dev.attr.max_total_mcast_qp_attach, 3);
}

}  // namespace
}  // namespace vf::engine::test
