// VL arbitration on a whole fabric: two RC senders on SL0 and SL1 (VL0 and
// VL1 by the default SL→VL map) WRITE into one vHCA; the switch port towards
// it, the bottleneck, weighs VL0 3:1 against VL1 in its low-priority table.
// The wire is shared 3:1, and credit flow control keeps it lossless. And a
// VL in the high-priority table stays fast behind a bulk load that keeps
// the bottleneck's low-priority VL queued.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

using engine::test::AppCq;
using engine::test::AppQp;

constexpr uint32_t kMsg = 64 * 1024;
constexpr unsigned kWrs = 24;

TEST(VlArbitration, TwoSlsThroughOneBottleneckShareItByWeight) {
  LabConfig c;
  c.hosts = 3;
  c.link = {2'000'000'000ULL, 500, 4096};
  FabricLab lab(c);
  auto& sw = static_cast<dp::IbSwitch&>(*lab.fabric.find_switch("sw0"));
  sw.set_vlarb(3, {}, VlArbTable::of({{0, 192}, {1, 64}}), 0);  // towards host 2

  auto& target = *lab.host(2).app;
  std::vector<uint8_t> sink(2 * kWrs * size_t(kMsg));
  const uint32_t tpd = target.alloc_pd();
  const auto tmr = target.mr(tpd, sink.data(), sink.size());
  auto tcq = target.cq(255);
  engine::test::ConnParams p;
  p.mtu = IBV_MTU_4096;
  struct Sender {
    std::vector<uint8_t> buf;
    vhca_reg_mr_rsp mr;
    std::unique_ptr<AppCq> cq;
    std::unique_ptr<AppQp> qp, peer;
    unsigned done = 0;
  };
  std::vector<Sender> s(2);
  for (unsigned i = 0; i < 2; ++i) {
    auto& app = *lab.host(i).app;
    const uint32_t pd = app.alloc_pd();
    s[i].buf.assign(kWrs * size_t(kMsg), uint8_t(i + 1));
    s[i].mr = app.mr(pd, s[i].buf.data(), s[i].buf.size());
    s[i].cq = app.cq(255);
    s[i].qp = app.qp(pd, *s[i].cq, *s[i].cq);
    s[i].peer = target.qp(tpd, *tcq, *tcq);
    lab.connect(i, *s[i].qp, 2, *s[i].peer, p, uint8_t(i));  // SL i
    for (unsigned k = 0; k < kWrs; ++k) {
      vhca_send_wqe w = engine::test::send_wqe(
          k, {engine::test::sge(s[i].buf.data() + size_t(k) * kMsg, kMsg, s[i].mr.lkey)}, IBV_SEND_SIGNALED,
          IBV_WR_RDMA_WRITE);
      w.remote_addr = reinterpret_cast<uint64_t>(sink.data()) + (size_t(i) * kWrs + k) * kMsg;
      w.rkey = tmr.rkey;
      app.post_send(*s[i].qp, w);
    }
  }
  // Until the VL0 flow is done; then read what each VL got through the bottleneck.
  dp::Port& out = lab.switch_port_to(2);
  dp::PortSnapshot at_first_done{};
  lab.run_until([&] {
    for (unsigned i = 0; i < 2; ++i) {
      vhca_cqe e;
      while (lab.host(i).app->poll_cq(*s[i].cq, e)) {
        EXPECT_EQ(e.status, IBV_WC_SUCCESS);
        if (++s[i].done == kWrs && s[1 - i].done < kWrs) at_first_done = out.snapshot(lab.sched.now());
      }
    }
    return s[0].done == kWrs && s[1].done == kWrs;
  });
  ASSERT_EQ(s[0].done, kWrs);
  ASSERT_EQ(s[1].done, kWrs);
  const double vl0 = double(at_first_done.classes[0].xmit_bytes);
  const double vl1 = double(at_first_done.classes[1].xmit_bytes);
  std::printf("bottleneck when the first flow finished: VL0 %.0f KiB, VL1 %.0f KiB (%.2f : 1)\n", vl0 / 1024,
              vl1 / 1024, vl0 / vl1);
  EXPECT_NEAR(vl0 / vl1, 3.0, 0.3);
  const dp::PortSnapshot end = out.snapshot(lab.sched.now());
  EXPECT_EQ(end.port_xmit_discards, 0u);
  EXPECT_EQ(lab.host(0).hca->counters().retransmitted_packets + lab.host(1).hca->counters().retransmitted_packets,
            0u);
}

// Latency of small WRITEs on SL1 (VL1) from host 2 while hosts 0 and 1 keep
// the same bottleneck (the switch port towards host 3) oversubscribed with
// 64 KiB WRITEs on SL0 (VL0), so VL0 always has packets queued there: the
// worst of 20 WRITEs, one every 100 us, post to completion.
Nanos worst_small_write_latency(const VlArbTable& high, const VlArbTable& low, uint8_t limit) {
  LabConfig c;
  c.hosts = 4;
  c.link = {2'000'000'000ULL, 500, 4096};
  FabricLab lab(c);
  auto& sw = static_cast<dp::IbSwitch&>(*lab.fabric.find_switch("sw0"));
  sw.set_vlarb(4, high, low, limit);  // towards host 3

  auto& target = *lab.host(3).app;
  std::vector<uint8_t> sink(64 * size_t(kMsg) + 4096);
  const uint32_t tpd = target.alloc_pd();
  const auto tmr = target.mr(tpd, sink.data(), sink.size());
  auto tcq = target.cq(1023);
  engine::test::ConnParams p;
  p.mtu = IBV_MTU_4096;
  std::vector<uint8_t> bulk(64 * size_t(kMsg), 1), small(64, 2);
  struct Bulk {
    vhca_reg_mr_rsp mr;
    std::unique_ptr<AppCq> cq;
    std::unique_ptr<AppQp> qp, peer;
  };
  std::vector<Bulk> bk(2);
  for (unsigned i = 0; i < 2; ++i) {
    auto& a = *lab.host(i).app;
    const uint32_t pd = a.alloc_pd();
    bk[i].mr = a.mr(pd, bulk.data(), bulk.size());
    bk[i].cq = a.cq(255);
    bk[i].qp = a.qp(pd, *bk[i].cq, *bk[i].cq);
    bk[i].peer = target.qp(tpd, *tcq, *tcq);
    lab.connect(i, *bk[i].qp, 3, *bk[i].peer, p, 0);
    for (unsigned k = 0; k < 64; ++k) {
      vhca_send_wqe w = engine::test::send_wqe(
          k, {engine::test::sge(bulk.data() + size_t(k) * kMsg, kMsg, bk[i].mr.lkey)}, IBV_SEND_SIGNALED,
          IBV_WR_RDMA_WRITE);
      w.remote_addr = reinterpret_cast<uint64_t>(sink.data()) + size_t(k) * kMsg;
      w.rkey = tmr.rkey;
      a.post_send(*bk[i].qp, w);
    }
  }
  auto& b = *lab.host(2).app;
  const uint32_t pb = b.alloc_pd();
  const auto bmr = b.mr(pb, small.data(), small.size());
  auto bcq = b.cq(255);
  auto bqp = b.qp(pb, *bcq, *bcq);
  auto tb = target.qp(tpd, *tcq, *tcq);
  lab.connect(2, *bqp, 3, *tb, p, 1);

  Nanos worst = 0;
  vhca_cqe e;
  for (unsigned k = 0; k < 20; ++k) {
    const Nanos next = lab.sched.now() + 100'000;
    lab.run_until([] { return false; }, next);
    lab.sched.advance_to(next);
    for (unsigned i = 0; i < 2; ++i)
      while (lab.host(i).app->poll_cq(*bk[i].cq, e)) EXPECT_EQ(e.status, IBV_WC_SUCCESS);
    vhca_send_wqe w = engine::test::send_wqe(100 + k, {engine::test::sge(small.data(), 64, bmr.lkey)},
                                             IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE);
    w.remote_addr = reinterpret_cast<uint64_t>(sink.data()) + 64 * size_t(kMsg);
    w.rkey = tmr.rkey;
    const Nanos posted = lab.sched.now();
    b.post_send(*bqp, w);
    bool done = false;
    lab.run_until([&] { return done = b.poll_cq(*bcq, e); }, posted + 10'000'000);
    EXPECT_TRUE(done);
    EXPECT_EQ(e.status, IBV_WC_SUCCESS);
    worst = std::max(worst, lab.sched.now() - posted);
  }
  EXPECT_GT(lab.switch_port_to(3).snapshot(lab.sched.now()).classes[0].depth_pkts, 0u)
      << "the bulk flows kept VL0 queued at the bottleneck throughout";
  return worst;
}

TEST(VlArbitration, AHighPriorityVlStaysFastBehindABulkLoad) {
  // One 4 KiB packet at 2 Gb/s is 16.5 us on the wire.
  const Nanos packet = 16'500;
  // VL1 high (limit 0: one high packet, then low may send one), VL0 low.
  const Nanos high = worst_small_write_latency(VlArbTable::of({{1, 4}}), VlArbTable::of({{0, 255}}), 0);
  // VL1 only in the low table, behind VL0's weight of 255 x 64 bytes.
  const Nanos low = worst_small_write_latency({}, VlArbTable::of({{0, 255}, {1, 4}}), 0);
  std::printf("small WRITE behind bulk: worst %.1f us as high priority, %.1f us as low priority\n",
              double(high) / 1e3, double(low) / 1e3);
  // The round trip of a small WRITE on an idle path is ~2.5 us here (two
  // hops each way, the ACK back); as high priority it waits at most for the
  // bulk packet already on the wire.
  EXPECT_LT(high, 3'000 + packet);
  // Behind VL0's weight (16 KiB: up to four 4 KiB packets per turn) it waits
  // for several of them.
  EXPECT_GT(low, 3 * packet);
  EXPECT_GT(low, high + packet);
}

}  // namespace
}  // namespace vf::test
