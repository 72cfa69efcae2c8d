// The credit-loop lesson, in virtual time on configs/ring.yaml: five switches
// in a ring, one vHCA on each, every vHCA WRITEs to the vHCA two switches
// clockwise. Min-hop routes all of it clockwise, the five ring links wait on
// each other in a circle, and once their VL buffers fill nothing moves again:
// a deadlock that credit flow control makes possible (no packet is dropped,
// none can go). Up/Down routing sends the flows that would close the circle
// the other way round, and the same load completes. The tables are the
// daemon's own (daemon/sm/routing.hpp), the fabric the dataplane's.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/sm/credit_loops.hpp"
#include "daemon/sm/routing.hpp"
#include "dataplane/fabric/credit_deadlock.hpp"
#include "tests/support/config_lab.hpp"

namespace vf::test {
namespace {

using engine::test::AppCq;
using engine::test::AppQp;

constexpr uint32_t kMsg = 64 * 1024;
constexpr unsigned kWrs = 32;

struct RingRun {
  unsigned completed = 0, failed = 0;
  uint64_t ring_xmit_before = 0, ring_xmit_after = 0;  // frames the ring links sent, 50 ms apart
  uint64_t ring_queued = 0;                            // frames waiting on the ring links at the end
  uint64_t discards = 0;
  Nanos finish = 0;
  std::vector<std::vector<std::string>> detected;  // by the dataplane's detector, checked every 10 ms
};

RingRun run_ring(config::Routing routing) {
  const config::Config c = config::load_config(std::string(VF_SOURCE_DIR) + "/configs/ring.yaml");
  config::Fabric f = c.fabrics[0];
  f.sm.routing = routing;
  FabricLab lab(lab_topology(f, compute_routes(f)));
  const unsigned n = lab.size();
  engine::test::ConnParams p;
  p.mtu = IBV_MTU_4096;
  struct Flow {
    std::vector<uint8_t> src, dst;
    vhca_reg_mr_rsp smr, dmr;
    std::unique_ptr<AppCq> cq, peer_cq;
    std::unique_ptr<AppQp> qp, peer;
    unsigned done = 0;
  };
  std::vector<Flow> fl(n);
  for (unsigned i = 0; i < n; ++i) {
    const unsigned to = (i + 2) % n;
    auto& a = *lab.host(i).app;
    auto& b = *lab.host(to).app;
    Flow& x = fl[i];
    x.src.assign(kWrs * size_t(kMsg), uint8_t(i));
    x.dst.assign(kWrs * size_t(kMsg), 0);
    const uint32_t pa = a.alloc_pd(), pb = b.alloc_pd();
    x.smr = a.mr(pa, x.src.data(), x.src.size());
    x.dmr = b.mr(pb, x.dst.data(), x.dst.size());
    x.cq = a.cq(255);
    x.peer_cq = b.cq(255);
    x.qp = a.qp(pa, *x.cq, *x.cq);
    x.peer = b.qp(pb, *x.peer_cq, *x.peer_cq);
    lab.connect(i, *x.qp, to, *x.peer, p);
    for (unsigned k = 0; k < kWrs; ++k) {
      vhca_send_wqe w = engine::test::send_wqe(
          k, {engine::test::sge(x.src.data() + size_t(k) * kMsg, kMsg, x.smr.lkey)}, IBV_SEND_SIGNALED,
          IBV_WR_RDMA_WRITE);
      w.remote_addr = reinterpret_cast<uint64_t>(x.dst.data()) + size_t(k) * kMsg;
      w.rkey = x.dmr.rkey;
      a.post_send(*x.qp, w);
    }
  }
  RingRun r;
  auto poll = [&] {
    bool all = true;
    for (unsigned i = 0; i < n; ++i) {
      vhca_cqe e;
      while (lab.host(i).app->poll_cq(*fl[i].cq, e)) {
        ++fl[i].done;
        e.status == IBV_WC_SUCCESS ? ++r.completed : ++r.failed;
      }
      all &= fl[i].done == kWrs;
    }
    return all;
  };
  // The ring links: every switch's port 2 (towards the next switch).
  auto ring_sent = [&] {
    uint64_t s = 0;
    for (unsigned i = 0; i < n; ++i)
      s += lab.fabric.port({"sw" + std::to_string(i), 2}).snapshot(0).port_xmit_pkts +
           lab.fabric.port({"sw" + std::to_string(i), 3}).snapshot(0).port_xmit_pkts;
    return s;
  };
  // 32 x 64 KiB per flow at 2 Gb/s takes ~10 ms alone, ~20 ms when two flows
  // share a link: 100 ms is plenty -- unless nothing moves.
  dp::CreditDeadlockDetector detector(lab.fabric);
  for (int t = 0; t < 10; ++t) {
    lab.run_until(poll, lab.sched.now() + 10'000'000);
    for (auto& circle : detector.check()) r.detected.push_back(std::move(circle));
  }
  r.ring_xmit_before = ring_sent();
  for (int t = 0; t < 5; ++t) {
    lab.run_until(poll, lab.sched.now() + 10'000'000);
    for (auto& circle : detector.check()) r.detected.push_back(std::move(circle));
  }
  r.ring_xmit_after = ring_sent();
  r.finish = lab.sched.now();
  for (unsigned i = 0; i < n; ++i) {
    const std::string sw = "sw" + std::to_string(i);
    for (unsigned port = 1; port <= 3; ++port) {
      const dp::PortSnapshot s = lab.fabric.port({sw, port}).snapshot(0);
      r.discards += s.port_xmit_discards + s.port_rcv_errors + s.port_rcv_discards;
      if (port == 2) r.ring_queued += s.classes[0].depth_pkts;
    }
  }
  return r;
}

TEST(CreditLoop, MinHopOnTheRingDeadlocks) {
  const RingRun r = run_ring(config::Routing::MinHop);
  std::printf("ring, minhop: %u WRITEs done, %u failed, %llu frames stuck on the ring links, "
              "ring links sent %llu frames in the last 50 ms\n",
              r.completed, r.failed, (unsigned long long)r.ring_queued,
              (unsigned long long)(r.ring_xmit_after - r.ring_xmit_before));
  EXPECT_LT(r.completed, 5 * kWrs) << "the load never completes";
  EXPECT_GT(r.ring_queued, 0u) << "frames wait on the ring links...";
  EXPECT_EQ(r.ring_xmit_after, r.ring_xmit_before) << "...and not one moves for 50 ms";
  EXPECT_EQ(r.discards, 0u) << "lossless: stuck, not dropped";
  // The dataplane sees it too: one circle, the five ring links, once.
  ASSERT_EQ(r.detected.size(), 1u);
  std::string circle;
  for (const auto& n : r.detected[0]) circle += n + " ";
  std::printf("detected: %s\n", circle.c_str());
  ASSERT_EQ(r.detected[0].size(), 5u) << circle;
  for (const auto& n : r.detected[0]) EXPECT_NE(n.find("/2 VL0"), std::string::npos) << circle;
}

TEST(CreditLoop, UpDownOnTheRingCompletes) {
  const RingRun r = run_ring(config::Routing::UpDown);
  std::printf("ring, updn: %u WRITEs done, %u failed, %.1f ms\n", r.completed, r.failed, double(r.finish) / 1e6);
  EXPECT_EQ(r.completed, 5 * kWrs);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_EQ(r.discards, 0u);
  EXPECT_TRUE(r.detected.empty()) << "busy links that move are no deadlock";
}

}  // namespace
}  // namespace vf::test
