// ETS at a congested switch port, end to end: two RC senders on different
// lossless priorities WRITE into one vHCA through one switch. With the
// priorities in ETS classes of 70 % and 30 %, the bottleneck splits 70:30
// while both are backlogged (PFC keeps it lossless; the 30 % flow is paused
// more); with plain round robin it splits evenly. Virtual time, so the
// figures are exact and repeatable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

using engine::test::AppCq;
using engine::test::AppQp;
using engine::test::ConnParams;

constexpr unsigned kTarget = 2;
constexpr unsigned kWrs = 128;
constexpr uint32_t kMsg = 16 * 1024;
constexpr uint8_t kTclass[2] = {26 << 2 | 2, 34 << 2 | 2};  // DSCP 26 -> priority 3, DSCP 34 -> 4

struct Share {
  double first;  // sender 0's share of the WRs completed when the first sender finished
  uint64_t drops, retransmitted;
  uint64_t paused_us[2];  // rx_prioN_pause_duration at each sender
};

Share run(bool ets) {
  LabConfig c;
  c.link_layer = LinkLayer::kEthernet;
  c.hosts = 3;
  c.link = {2'000'000'000ULL, 500, 1500};
  c.port.eth.trust_dscp = true;
  c.port.eth.pfc.enable = 1u << 3 | 1u << 4;
  if (ets) {
    c.port.eth.ets.enabled = true;
    c.port.eth.ets.bw = {0, 0, 0, 70, 30, 0, 0, 0};  // TC3 = priority 3, TC4 = priority 4
  }
  FabricLab lab(c);
  auto& target = *lab.host(kTarget).app;
  std::vector<uint8_t> sink(2 * size_t(kWrs) * kMsg);
  const uint32_t tpd = target.alloc_pd();
  const auto tmr = target.mr(tpd, sink.data(), sink.size());
  auto tcq = target.cq(1023);
  struct Sender {
    std::vector<uint8_t> buf;
    vhca_reg_mr_rsp mr;
    std::unique_ptr<AppCq> cq;
    std::unique_ptr<AppQp> qp, peer;
  };
  std::vector<Sender> s(2);
  for (unsigned i = 0; i < 2; ++i) {
    auto& app = *lab.host(i).app;
    const uint32_t pd = app.alloc_pd();
    s[i].buf.assign(size_t(kWrs) * kMsg, uint8_t(i + 1));
    s[i].mr = app.mr(pd, s[i].buf.data(), s[i].buf.size());
    s[i].cq = app.cq(255);
    engine::test::QpCaps caps;
    caps.send_wr = kWrs;
    s[i].qp = app.qp(pd, *s[i].cq, *s[i].cq, caps);
    s[i].peer = target.qp(tpd, *tcq, *tcq);
    ConnParams p;
    p.traffic_class = kTclass[i];
    lab.connect(i, *s[i].qp, kTarget, *s[i].peer, p);
  }
  for (unsigned i = 0; i < 2; ++i)
    for (unsigned k = 0; k < kWrs; ++k) {
      vhca_send_wqe w = engine::test::send_wqe(
          k, {engine::test::sge(s[i].buf.data() + size_t(k) * kMsg, kMsg, s[i].mr.lkey)}, IBV_SEND_SIGNALED,
          IBV_WR_RDMA_WRITE);
      w.remote_addr = reinterpret_cast<uint64_t>(sink.data()) + (size_t(i) * kWrs + k) * kMsg;
      w.rkey = tmr.rkey;
      lab.host(i).app->post_send(*s[i].qp, w);
    }
  std::vector<unsigned> done(2, 0);
  std::vector<unsigned> at_first(2, 0);
  bool first_seen = false;
  lab.run_until([&] {
    for (unsigned i = 0; i < 2; ++i) {
      vhca_cqe e;
      while (lab.host(i).app->poll_cq(*s[i].cq, e)) {
        EXPECT_EQ(e.status, IBV_WC_SUCCESS);
        ++done[i];
      }
    }
    if (!first_seen && (done[0] == kWrs || done[1] == kWrs)) {
      first_seen = true;
      at_first = done;
    }
    return done[0] == kWrs && done[1] == kWrs;
  });
  Share r{};
  r.first = double(at_first[0]) / double(at_first[0] + at_first[1]);
  const Nanos now = lab.sched.now();
  r.drops = lab.switch_port_to(kTarget).snapshot(now).port_xmit_discards;
  for (unsigned i = 0; i < 2; ++i) {
    r.drops += lab.switch_port_to(i).snapshot(now).port_rcv_discards;
    r.retransmitted += lab.host(i).hca->counters().retransmitted_packets;
  }
  for (unsigned i = 0; i < 2; ++i) r.paused_us[i] = lab.host_pfc(i).snapshot().prio[3 + i].rx_pause_duration;
  return r;
}

TEST(EtsShare, SeventyThirtyAtTheBottleneckAndEvenWithoutEts) {
  const Share ets = run(true);
  const Share rr = run(false);
  std::printf("ETS 70/30: sender 0 had %.1f %% of the completions when the first finished "
              "(paused %llu us, the 30 %% sender %llu us); round robin: %.1f %%\n",
              100 * ets.first, (unsigned long long)ets.paused_us[0], (unsigned long long)ets.paused_us[1],
              100 * rr.first);
  EXPECT_NEAR(ets.first, 0.70, 0.03);
  EXPECT_NEAR(rr.first, 0.50, 0.03);
  EXPECT_EQ(ets.drops + ets.retransmitted, 0u) << "PFC keeps both classes lossless";
  EXPECT_GT(ets.paused_us[1], 2 * ets.paused_us[0]) << "the 30 % class is held back by pauses";
}

}  // namespace
}  // namespace vf::test
