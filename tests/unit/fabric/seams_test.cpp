// The places later features plug into, exercised on a real fabric: a wire
// stage per link direction (capture tap, impairment), an egress enqueue hook
// (ECN / WRED), and a switch's shared packet memory.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

using engine::test::AppCq;
using engine::test::AppQp;

constexpr uint32_t kMsg = 64 * 1024;

// One RC pair per sender into host `target`, `wrs` WRITEs each; true when
// every WRITE completed successfully and every byte arrived.
struct Traffic {
  FabricLab& lab;
  unsigned senders, target, wrs;
  std::vector<uint8_t> sink;
  struct S {
    std::vector<uint8_t> buf;
    vhca_reg_mr_rsp mr;
    std::unique_ptr<AppCq> cq;
    std::unique_ptr<AppQp> qp, peer;
  };
  std::vector<S> s;

  bool run() {
    auto& t = *lab.host(target).app;
    sink.assign(size_t(senders) * wrs * kMsg, 0);
    const uint32_t tpd = t.alloc_pd();
    const auto tmr = t.mr(tpd, sink.data(), sink.size());
    auto tcq = t.cq(1023);
    s.resize(senders);
    engine::test::ConnParams p;
    p.mtu = IBV_MTU_4096;
    for (unsigned i = 0; i < senders; ++i) {
      auto& app = *lab.host(i).app;
      const uint32_t pd = app.alloc_pd();
      s[i].buf.resize(size_t(wrs) * kMsg);
      engine::test::fill_pattern(s[i].buf.data(), s[i].buf.size(), i + 7);
      s[i].mr = app.mr(pd, s[i].buf.data(), s[i].buf.size());
      s[i].cq = app.cq(255);
      s[i].qp = app.qp(pd, *s[i].cq, *s[i].cq);
      s[i].peer = t.qp(tpd, *tcq, *tcq);
      lab.connect(i, *s[i].qp, target, *s[i].peer, p);
      for (unsigned k = 0; k < wrs; ++k) {
        vhca_send_wqe w = engine::test::send_wqe(
            k, {engine::test::sge(s[i].buf.data() + size_t(k) * kMsg, kMsg, s[i].mr.lkey)},
            IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE);
        w.remote_addr = reinterpret_cast<uint64_t>(sink.data()) + (size_t(i) * wrs + k) * kMsg;
        w.rkey = tmr.rkey;
        app.post_send(*s[i].qp, w);
      }
    }
    unsigned ok = 0, done = 0;
    lab.run_until([&] {
      for (unsigned i = 0; i < senders; ++i) {
        vhca_cqe e;
        while (lab.host(i).app->poll_cq(*s[i].cq, e)) {
          ++done;
          ok += e.status == IBV_WC_SUCCESS;
        }
      }
      return done == senders * wrs;
    });
    bool same = true;
    for (unsigned i = 0; i < senders; ++i)
      same &= std::memcmp(sink.data() + size_t(i) * wrs * kMsg, s[i].buf.data(), s[i].buf.size()) == 0;
    return ok == senders * wrs && same;
  }
};

LabConfig two_gig(unsigned hosts) {
  LabConfig c;
  c.hosts = hosts;
  c.link = {2'000'000'000ULL, 500, 4096};
  return c;
}

struct Tap {
  uint64_t frames = 0, bytes = 0;
  uint64_t link_packets = 0;  // IB flow-control packets (6 bytes)
  Nanos min_flight = kNever;  // arrive - depart, whole ns
  Nanos last_depart = 0;
  bool in_order = true;
  static dp::WireVerdict on(void* ctx, rte_mbuf* m, const dp::WireTime& d, const dp::WireTime& a) {
    auto& t = *static_cast<Tap*>(ctx);
    ++t.frames;
    t.bytes += rte_pktmbuf_pkt_len(m);
    t.link_packets += rte_pktmbuf_pkt_len(m) == 6;
    t.in_order &= d.ns >= t.last_depart;
    t.last_depart = d.ns;
    if (a.ns - d.ns < t.min_flight) t.min_flight = a.ns - d.ns;
    return dp::WireVerdict::kPass;
  }
};

TEST(WireStage, TheTapSeesEveryFrameWithItsTimes) {
  FabricLab lab(two_gig(2));
  Tap tap;
  dp::LinkDirection& out = lab.link_of(0).a_to_b();
  const uint64_t before = out.frames_sent.get();  // the link's first flow-control packets
  const uint64_t ctrl_before = lab.host(0).port->port().snapshot(0).classes[dp::kCtrlClass].xmit_pkts;
  out.set_tap({&tap, &Tap::on});
  Traffic t{lab, 1, 1, 4, {}, {}};
  ASSERT_TRUE(t.run());
  EXPECT_EQ(tap.frames, out.frames_sent.get() - before);
  // Data packets in PortXmitPkts, link packets (the PMA leaves them out) in
  // the link-control class.
  const dp::PortSnapshot tx = lab.host(0).port->port().snapshot(lab.sched.now());
  EXPECT_EQ(tap.frames, tx.port_xmit_pkts + tx.classes[dp::kCtrlClass].xmit_pkts - ctrl_before);
  EXPECT_EQ(tap.link_packets, tx.classes[dp::kCtrlClass].xmit_pkts - ctrl_before);
  EXPECT_GT(tap.link_packets, 0u) << "the vHCA returns credits for the ACKs it receives";
  EXPECT_GE(tap.frames, 4u * 16);  // 4 x 64 KiB in 4 KiB packets
  EXPECT_TRUE(tap.in_order);
  // Every frame spends at least its serialization time plus the 500 ns
  // delay between its first bit leaving and its last bit arriving.
  EXPECT_GE(tap.min_flight, 500u);
}

struct EveryNth {
  uint64_t n, seen = 0, dropped = 0;
  static dp::WireVerdict on(void* ctx, rte_mbuf*, const dp::WireTime&, const dp::WireTime&) {
    auto& e = *static_cast<EveryNth*>(ctx);
    if (++e.seen % e.n) return dp::WireVerdict::kPass;
    ++e.dropped;
    return dp::WireVerdict::kLose;
  }
};

TEST(WireStage, AnImpairmentLosesFramesAndRcRecovers) {
  FabricLab lab(two_gig(2));
  EveryNth loss{50};
  dp::LinkDirection& out = lab.link_of(0).a_to_b();
  out.set_impairment({&loss, &EveryNth::on});
  Traffic t{lab, 1, 1, 8, {}, {}};
  ASSERT_TRUE(t.run());
  EXPECT_GT(loss.dropped, 0u);
  EXPECT_EQ(out.lost.get(), loss.dropped);
  // What the wire lost never reached the switch; RC sent it again. (Lost
  // flow-control packets are replaced by the next one: nothing waits.)
  const dp::PortSnapshot rx = lab.switch_port_to(0).snapshot(lab.sched.now());
  EXPECT_EQ(rx.port_rcv_pkts + rx.classes[dp::kCtrlClass].rcv_pkts + out.in_flight(),
            out.frames_sent.get() - loss.dropped);
  EXPECT_GE(lab.host(0).hca->counters().retransmitted_packets, loss.dropped);
}

struct DepthCap {
  uint32_t max_pkts;
  uint64_t calls = 0, refused = 0, max_bytes_seen = 0;
  static bool on(void* ctx, unsigned, rte_mbuf*, uint32_t depth_pkts, uint64_t depth_bytes) {
    auto& d = *static_cast<DepthCap*>(ctx);
    ++d.calls;
    if (depth_bytes > d.max_bytes_seen) d.max_bytes_seen = depth_bytes;
    if (depth_pkts < d.max_pkts) return true;
    ++d.refused;
    return false;
  }
};

TEST(EnqueueHook, SeesTheQueueDepthAndItsDropsAreDiscards) {
  FabricLab lab(two_gig(3));
  DepthCap cap{8};
  dp::Port& to_target = lab.switch_port_to(2);
  to_target.set_enqueue_hook({&cap, &DepthCap::on});
  Traffic t{lab, 2, 2, 8, {}, {}};
  ASSERT_TRUE(t.run());
  EXPECT_GT(cap.calls, 0u);
  EXPECT_GT(cap.refused, 0u) << "two senders into one link exceed 8 queued frames";
  EXPECT_EQ(to_target.snapshot(lab.sched.now()).port_xmit_discards, cap.refused);
  EXPECT_LE(cap.max_bytes_seen, 8u * (4096 + 128));
}

TEST(SharedBuffer, AFullSwitchMemoryDropsAtIngressAndEmptiesAgain) {
  LabConfig c = two_gig(5);
  c.switch_buffer_bytes = 64 * 1024;  // 15 full-size frames for the whole switch
  FabricLab lab(c);
  Traffic t{lab, 4, 4, 4, {}, {}};
  ASSERT_TRUE(t.run());
  const dp::SharedBuffer& b = *lab.fabric.find_switch("sw0")->buffer();
  EXPECT_GT(b.refused.get(), 0u);
  EXPECT_LE(b.peak(), b.size());
  EXPECT_GT(b.peak(), b.size() - (4096 + 128)) << "it did fill";
  EXPECT_EQ(b.used(), 0u) << "every frame gave its bytes back";
  uint64_t discards = 0;
  for (unsigned i = 0; i < 4; ++i) discards += lab.switch_port_to(i).snapshot(lab.sched.now()).port_rcv_discards;
  EXPECT_EQ(discards, b.refused.get());
}

}  // namespace
}  // namespace vf::test
