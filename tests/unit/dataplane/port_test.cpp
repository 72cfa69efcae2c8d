// A port's egress side: arbitration order, the egress gate (hold, PortXmitWait,
// release in order), bounded queues, MTU, counters and exact pacing.
#include <gtest/gtest.h>

#include <array>

#include "dataplane/fabric/port.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

using test::make_ib;
using test::Recorder;

constexpr uint64_t G = 1'000'000'000ULL;

// A sender port wired to a bare receiver port owned by a Recorder.
struct Pair {
  explicit Pair(LinkParams lp = {100 * G, 100, 4096}, PortConfig pc = {})
      : link(s, LinkLayer::kInfiniBand, lp),
        tx(s, "tx", LinkLayer::kInfiniBand, pc),
        rx(s, "rx", LinkLayer::kInfiniBand, pc),
        rec(s) {
    connect_ports(tx, rx, link);
    rec.own(rx);
  }
  Scheduler s;
  Link link;
  Port tx;
  Port rx;
  Recorder rec;
};

// A gate test double: per-class open flags, and what went through.
struct TestGate {
  std::array<bool, kNumDataClasses> open{true, true, true, true, true, true, true, true};
  std::vector<std::pair<unsigned, uint32_t>> sent;
  EgressGate gate() {
    return EgressGate{this,
                      [](void* c, unsigned cls, uint32_t) { return static_cast<TestGate*>(c)->open[cls]; },
                      [](void* c, unsigned cls, uint32_t bytes) {
                        static_cast<TestGate*>(c)->sent.emplace_back(cls, bytes);
                      }};
  }
};

TEST(Port, SendsImmediatelyWhenWireIsFree) {
  Pair p;
  ASSERT_TRUE(p.tx.enqueue(0, make_ib(1000, 0, 0, 1, 7)));
  p.s.run_until_idle();
  ASSERT_EQ(p.rec.got.size(), 1u);
  EXPECT_EQ(p.rec.got[0].at, 180u);
  EXPECT_EQ(p.rec.got[0].tag, 7u);
  const PortSnapshot t = p.tx.snapshot(p.s.now());
  const PortSnapshot r = p.rx.snapshot(p.s.now());
  EXPECT_EQ(t.port_xmit_pkts, 1u);
  EXPECT_EQ(t.port_xmit_data, 250u);  // 4-octet words
  EXPECT_EQ(r.port_rcv_pkts, 1u);
  EXPECT_EQ(r.port_rcv_data, 250u);
  EXPECT_EQ(r.classes[0].rcv_pkts, 1u);
  EXPECT_EQ(r.classes[0].rx_buffered_bytes, 0u);  // released by the owner
  EXPECT_EQ(r.classes[0].rx_buffered_peak, 1000u);
}

TEST(Port, BackToBackThroughThePortKeepsExactPacing) {
  // 3 Gb/s: each 1000-byte frame is 2666.67 ns; the port's timer fires at whole
  // ns but frames still depart exactly back to back.
  Pair p({3 * G, 0, 4096}, PortConfig{.queue_pkts = 1024, .ctrl_queue_pkts = 64});
  constexpr uint32_t kFrames = 100'000;
  uint32_t queued = 0;
  while (queued < kFrames || !p.s.idle()) {
    for (; queued < kFrames && p.tx.has_room(0); ++queued) ASSERT_TRUE(p.tx.enqueue(0, make_ib(1000, 0, 0, 1)));
    p.s.run_next();
  }
  ASSERT_EQ(p.rec.got.size(), kFrames);
  EXPECT_EQ(p.rec.got.back().at, 266'666'667u);  // ceil(1e5 * 8000 / 3)
}

TEST(Port, ArbiterServesVl15FirstThenRoundRobinsDataVls) {
  Pair p;
  // Occupy the wire with a VL7 frame so everything below queues up.
  p.tx.enqueue(7, make_ib(1000, 7, 7, 1, 100));
  for (uint32_t i = 0; i < 3; ++i) p.tx.enqueue(0, make_ib(100, 0, 0, 1, 10 + i));
  for (uint32_t i = 0; i < 3; ++i) p.tx.enqueue(1, make_ib(100, 1, 1, 1, 20 + i));
  p.tx.enqueue(2, make_ib(100, 2, 2, 1, 30));
  p.tx.enqueue(kMgmtClass, make_ib(100, kVl15, 0, 1, 99));
  EXPECT_EQ(p.tx.queued(), 8u);
  p.s.run_until_idle();
  EXPECT_EQ(p.rec.tags(), (std::vector<uint32_t>{100, 99, 10, 20, 30, 11, 21, 12, 22}));
  EXPECT_EQ(p.rec.got[1].cls, kMgmtClass);
}

TEST(Port, RoundRobinIsFairAcrossBackloggedVlsAndSkipsGatedOnes) {
  Pair p({100 * G, 0, 4096}, PortConfig{.queue_pkts = 64, .ctrl_queue_pkts = 8});
  TestGate g;
  g.open[4] = false;
  for (uint32_t i = 0; i < 30; ++i)
    for (uint8_t vl : {1, 4, 6, 7}) p.tx.enqueue(vl, make_ib(500, vl, vl, 1, uint32_t(vl) << 8 | i));
  p.tx.set_gate(g.gate());  // the first VL1 frame is already on the wire
  p.s.run_until_idle();
  // 3 x 30 frames went; VL4 holds all of its 30. Every window of three
  // consecutive departures serves VL1, VL6 and VL7 once each.
  ASSERT_EQ(p.rec.got.size(), 90u);
  for (size_t w = 0; w + 3 <= p.rec.got.size(); w += 3) {
    std::array<int, 8> n{};
    for (size_t k = w; k < w + 3; ++k) ++n[p.rec.got[k].cls];
    EXPECT_EQ(n[1], 1);
    EXPECT_EQ(n[6], 1);
    EXPECT_EQ(n[7], 1);
  }
  EXPECT_EQ(p.tx.snapshot(0).classes[4].depth_pkts, 30u);
}

TEST(Port, ControlFramesJumpAheadOfEverything) {
  Pair p;
  p.tx.enqueue(0, make_ib(1000, 0, 0, 1, 1));
  p.tx.enqueue(kMgmtClass, make_ib(100, kVl15, 0, 1, 2));
  p.tx.enqueue(0, make_ib(100, 0, 0, 1, 3));
  p.tx.send_control(make_ib(100, 0, 0, 1, 4));
  p.s.run_until_idle();
  EXPECT_EQ(p.rec.tags(), (std::vector<uint32_t>{1, 4, 2, 3}));
  // Link-level frames stay out of the PMA totals.
  EXPECT_EQ(p.tx.snapshot(0).port_xmit_pkts, 3u);
  EXPECT_EQ(p.tx.snapshot(0).classes[kCtrlClass].xmit_pkts, 1u);
}

// Two VLs held at once both wait with the port; one that joins the wait
// later counts from when it joined.
TEST(Port, EveryHeldVlCountsItsShareOfTheWait) {
  Pair p;
  TestGate g;
  g.open[0] = g.open[2] = false;
  p.tx.set_gate(g.gate());
  p.tx.enqueue(0, make_ib(1000, 0, 0, 1, 1));
  p.s.advance_to(300);
  p.tx.enqueue(2, make_ib(1000, 2, 2, 1, 2));
  p.s.advance_to(1000);
  const PortSnapshot s = p.tx.snapshot(1000);
  EXPECT_EQ(s.port_xmit_wait_ns, 1000u);
  EXPECT_EQ(s.classes[0].xmit_wait_ns, 1000u);
  EXPECT_EQ(s.classes[2].xmit_wait_ns, 700u);
  g.open[2] = true;
  p.tx.wake();  // VL2 goes at 1000; VL0 is still held, the port waits again from 1080
  p.s.advance_to(2000);
  const PortSnapshot t = p.tx.snapshot(2000);
  EXPECT_EQ(t.classes[2].xmit_wait_ns, 700u);
  EXPECT_EQ(t.classes[0].xmit_wait_ns, 1000u + 920u);
  EXPECT_EQ(t.port_xmit_wait_ns, 1000u + 920u);
}

TEST(Port, ClosedGateHoldsFramesCountsXmitWaitAndReleasesInOrder) {
  Pair p;
  TestGate g;
  g.open[0] = false;
  p.tx.set_gate(g.gate());
  for (uint32_t i = 0; i < 3; ++i) p.tx.enqueue(0, make_ib(1000, 0, 0, 1, i));
  p.s.run_until_idle();
  EXPECT_TRUE(p.rec.got.empty());
  EXPECT_EQ(p.tx.queued(), 3u);

  // An open class still flows past the closed one, and while it does the port
  // is not waiting.
  p.s.advance_to(400);
  p.tx.enqueue(1, make_ib(1000, 1, 1, 1, 50));
  p.s.run_until_idle();  // wire busy 400..480, delivered at 580
  ASSERT_EQ(p.rec.tags(), (std::vector<uint32_t>{50}));
  EXPECT_EQ(p.s.now(), 580u);
  // Waiting: 0..400, and from 480 on.
  p.s.advance_to(1000);
  EXPECT_EQ(p.tx.snapshot(1000).port_xmit_wait_ns, 400u + 520u);
  EXPECT_EQ(p.tx.snapshot(0).port_xmit_wait_ns, 400u);  // completed waits only
  // Per VL (PortVLXmitWait): VL0 was the held one throughout; VL1 never waited.
  EXPECT_EQ(p.tx.snapshot(1000).classes[0].xmit_wait_ns, 400u + 520u);
  EXPECT_EQ(p.tx.snapshot(1000).classes[1].xmit_wait_ns, 0u);

  g.open[0] = true;
  p.tx.wake();
  p.s.run_until_idle();
  EXPECT_EQ(p.rec.tags(), (std::vector<uint32_t>{50, 0, 1, 2}));
  EXPECT_EQ(p.rec.got[1].at, 1180u);
  EXPECT_EQ(p.rec.got[3].at, 1340u);
  EXPECT_EQ(p.tx.snapshot(p.s.now()).port_xmit_wait_ns, 920u);
  EXPECT_EQ(p.tx.snapshot(0).classes[0].xmit_wait_ns, 920u);
  // The gate saw every data frame that went.
  ASSERT_EQ(g.sent.size(), 4u);
  EXPECT_EQ(g.sent[0], std::make_pair(1u, 1000u));
}

TEST(Port, GateDoesNotHoldVl15) {
  Pair p;
  TestGate g;
  g.open.fill(false);
  p.tx.set_gate(g.gate());
  p.tx.enqueue(0, make_ib(100, 0, 0, 1, 1));
  p.tx.enqueue(kMgmtClass, make_ib(100, kVl15, 0, 1, 2));
  p.s.run_until_idle();
  EXPECT_EQ(p.rec.tags(), (std::vector<uint32_t>{2}));
}

TEST(Port, FullQueueDiscardsAndCounts) {
  Pair p({100 * G, 100, 4096}, PortConfig{.queue_pkts = 4, .ctrl_queue_pkts = 4});
  // The first goes straight onto the wire, four wait, the rest are discarded.
  for (uint32_t i = 0; i < 8; ++i) p.tx.enqueue(3, make_ib(1000, 3, 3, 1, i));
  EXPECT_EQ(p.tx.queued(), 4u);
  PortSnapshot t = p.tx.snapshot(0);
  EXPECT_EQ(t.port_xmit_discards, 3u);
  EXPECT_EQ(t.classes[3].xmit_discards, 3u);
  EXPECT_EQ(t.classes[3].depth_pkts, 4u);
  EXPECT_EQ(t.classes[3].depth_bytes, 4000u);
  EXPECT_EQ(t.classes[3].max_depth_pkts, 4u);
  EXPECT_EQ(t.tx_drops, 3u);
  p.s.run_until_idle();
  EXPECT_EQ(p.rec.got.size(), 5u);
  t = p.tx.snapshot(0);
  EXPECT_EQ(t.classes[3].depth_pkts, 0u);
  EXPECT_EQ(t.classes[3].depth_bytes, 0u);
}

TEST(Port, FrameLargerThanMtuIsDiscarded) {
  Pair p({100 * G, 100, 256});
  EXPECT_FALSE(p.tx.enqueue(0, make_ib(256 + 129, 0, 0, 1)));
  EXPECT_TRUE(p.tx.enqueue(0, make_ib(256 + 128, 0, 0, 1)));
  EXPECT_EQ(p.tx.snapshot(0).port_xmit_discards, 1u);
}

TEST(Port, UnconnectedPortDiscards) {
  Scheduler s;
  Port lone(s, "lone", LinkLayer::kInfiniBand);
  EXPECT_FALSE(lone.enqueue(0, make_ib(100, 0, 0, 1)));
  EXPECT_EQ(lone.snapshot(0).port_xmit_discards, 1u);
}

TEST(Port, IngressClassifiesByVlAndCountsBadVl) {
  Pair p;
  p.tx.enqueue(5, make_ib(100, 5, 5, 1, 1));
  p.tx.enqueue(kMgmtClass, make_ib(100, kVl15, 0, 1, 2));
  p.tx.enqueue(0, make_ib(100, 9, 0, 1, 3));  // VL9 does not exist
  p.tx.enqueue(0, make_ib(4, 0, 0, 1, 4));    // runt: no LRH
  p.s.run_until_idle();
  ASSERT_EQ(p.rec.got.size(), 2u);
  EXPECT_EQ(p.rec.got[0].cls, 5u);
  EXPECT_EQ(p.rec.got[1].cls, kMgmtClass);
  EXPECT_EQ(p.rx.snapshot(0).port_rcv_errors, 2u);
  EXPECT_EQ(p.rx.snapshot(0).rx_drops, 2u);
}

TEST(Port, IngressHooksSeeAdmitReleaseAndControl) {
  Pair p;
  struct Hooks {
    uint64_t admitted = 0, released = 0, control = 0;
    bool refuse = false;
  } h;
  p.rx.set_ingress(IngressHooks{
      &h,
      [](void* c, Port&, rte_mbuf* m) {
        if (test::tag_of(m) != 0xC0) return false;
        ++static_cast<Hooks*>(c)->control;
        rte_pktmbuf_free(m);
        return true;
      },
      [](void* c, unsigned, uint32_t bytes) {
        auto* k = static_cast<Hooks*>(c);
        if (k->refuse) return false;
        k->admitted += bytes;
        return true;
      },
      [](void* c, unsigned, uint32_t bytes) { static_cast<Hooks*>(c)->released += bytes; }});
  p.tx.enqueue(0, make_ib(100, 0, 0, 1, 1));
  p.tx.send_control(make_ib(30, 0, 0, 1, 0xC0));
  p.s.run_until_idle();
  h.refuse = true;
  p.tx.enqueue(0, make_ib(200, 0, 0, 1, 2));
  p.s.run_until_idle();
  EXPECT_EQ(h.control, 1u);
  EXPECT_EQ(h.admitted, 100u);
  EXPECT_EQ(h.released, 100u);
  EXPECT_EQ(p.rec.tags(), (std::vector<uint32_t>{1}));
  const PortSnapshot r = p.rx.snapshot(0);
  EXPECT_EQ(r.port_rcv_pkts, 2u);  // the control frame is not a packet to the PMA
  EXPECT_EQ(r.rx_drops, 1u);
}

}  // namespace
}  // namespace vf::dp
