// IBA VL arbitration at one port, in virtual time: weighted round robin over
// the low- and high-priority tables, a packet that starts within its entry's
// weight goes out whole, LimitOfHighPriority, and a high-priority VL's
// latency under low-priority load.
#include <gtest/gtest.h>

#include <map>

#include "core/port_qos.hpp"
#include "dataplane/fabric/port.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

using test::make_ib;
using test::Recorder;

constexpr uint64_t G = 1'000'000'000ULL;
constexpr uint32_t kFrame = 1000;

struct ArbPort {
  explicit ArbPort(const PortQos& q)
      : qos(q), link(s, LinkLayer::kInfiniBand, {10 * G, 0, 4096}), rec(s) {
    connect_ports(tx, rx, link);
    rec.own(rx);
    tx.set_qos(&qos);
    tx.set_class_limit(0, EgressQueue::kUnbounded);
    tx.set_class_limit(1, EgressQueue::kUnbounded);
  }
  // n frames of `len` on `vl`, tagged vl << 16 | i.
  void backlog(unsigned vl, unsigned n, uint32_t len = kFrame) {
    for (unsigned i = 0; i < n; ++i) ASSERT_TRUE(tx.enqueue(vl, make_ib(len, uint8_t(vl), 0, 2, vl << 16 | i)));
  }
  // VL of each frame in the order it arrived.
  std::vector<unsigned> order() const {
    std::vector<unsigned> o;
    for (const auto& a : rec.got) o.push_back(a.tag >> 16);
    return o;
  }
  Scheduler s;
  PortQos qos;
  Link link;
  Port tx{s, "tx", LinkLayer::kInfiniBand};
  Port rx{s, "rx", LinkLayer::kInfiniBand};
  Recorder rec;
};

PortQos qos_with(VlArbTable high, VlArbTable low, uint8_t limit) {
  PortQos q = default_port_qos(2);
  EXPECT_TRUE(q.set_vlarb(high, low, limit));
  return q;
}

TEST(VlArbitration, WeightsShareTheWireAndAPacketStartedWithinItsWeightGoesWhole) {
  // VL0 may start packets while 192 x 64 = 12288 bytes last, VL1 while 4096:
  // with 1000-byte packets 13 of VL0 (the 13th starts with 288 left), then 5
  // of VL1, and again.
  ArbPort p(qos_with({}, VlArbTable::of({{0, 192}, {1, 64}}), 0));
  p.backlog(0, 100);
  p.backlog(1, 100);
  p.s.advance_to(36 * kFrame * 8 / 10);  // 36 frames' time at 10 Gb/s
  const std::vector<unsigned> o = p.order();
  ASSERT_GE(o.size(), 36u);
  std::vector<unsigned> want;
  for (int round = 0; round < 2; ++round) {
    want.insert(want.end(), 13, 0);
    want.insert(want.end(), 5, 1);
  }
  EXPECT_EQ(std::vector<unsigned>(o.begin(), o.begin() + 36), want);
}

TEST(VlArbitration, FullSizePacketsShareExactlyByWeight) {
  // 4 KiB packets (one weight-64 turn each): 3:1.
  ArbPort p(qos_with({}, VlArbTable::of({{0, 192}, {1, 64}}), 0));
  p.backlog(0, 300, 4122);
  p.backlog(1, 300, 4122);
  p.s.advance_to(200 * 4122 * 8 / 10);
  std::map<unsigned, unsigned> n;
  for (unsigned vl : p.order()) ++n[vl];
  EXPECT_EQ(n[0], 150u);
  EXPECT_EQ(n[1], 50u);
}

TEST(VlArbitration, AnEntryWithNothingToSendPassesItsTurn) {
  ArbPort p(qos_with({}, VlArbTable::of({{0, 64}, {1, 64}}), 0));
  p.backlog(1, 10);
  p.s.run_until_idle();
  EXPECT_EQ(p.rec.got.size(), 10u) << "VL1 alone takes the whole wire";
  // A VL in no table (or with weight 0 only) never sends.
  ArbPort q(qos_with({}, VlArbTable::of({{0, 64}, {1, 0}}), 0));
  q.backlog(1, 3);
  q.backlog(0, 3);
  q.s.run_until_idle();
  EXPECT_EQ(q.order(), (std::vector<unsigned>{0, 0, 0}));
  EXPECT_EQ(q.tx.class_queued(1), 3u);
}

TEST(VlArbitration, LimitOfHighPriorityLetsOneLowPacketThrough) {
  // High may send 1 x 4 KiB before a low packet must go: 5 x 1000 bytes
  // (the 5th starts at 4000 < 4096), then one low, and again.
  ArbPort p(qos_with(VlArbTable::of({{1, 255}}), VlArbTable::of({{0, 255}}), 1));
  p.backlog(1, 50);  // (the first frame queued leaves at once: the wire is idle)
  p.backlog(0, 50);
  p.s.advance_to(18 * kFrame * 8 / 10);
  const std::vector<unsigned> o = p.order();
  ASSERT_GE(o.size(), 18u);
  EXPECT_EQ(std::vector<unsigned>(o.begin(), o.begin() + 18),
            (std::vector<unsigned>{1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0}));
  // 255: the high table is never interrupted.
  ArbPort u(qos_with(VlArbTable::of({{1, 255}}), VlArbTable::of({{0, 255}}), 255));
  u.backlog(1, 20);
  u.backlog(0, 5);
  u.s.run_until_idle();
  const std::vector<unsigned> uo = u.order();
  EXPECT_EQ(std::vector<unsigned>(uo.begin(), uo.begin() + 20), std::vector<unsigned>(20, 1));
}

// Latency of one VL1 packet queued behind a saturating VL0 load.
Nanos vl1_wait(const PortQos& q) {
  ArbPort p(q);
  p.backlog(0, 200);
  p.s.advance_to(10'000);
  p.backlog(1, 1);
  const Nanos queued = p.s.now();
  p.s.run_until_idle();
  for (const auto& a : p.rec.got)
    if (a.tag >> 16 == 1) return a.at - queued;
  return kNever;
}

TEST(VlArbitration, AHighPriorityVlWaitsAtMostForThePacketOnTheWire) {
  const Nanos frame = kFrame * 8 / 10;  // 800 ns at 10 Gb/s
  // High priority, limit 0: at most the VL0 packet on the wire, then its own.
  const Nanos high = vl1_wait(qos_with(VlArbTable::of({{1, 64}}), VlArbTable::of({{0, 255}}), 0));
  EXPECT_LE(high, 2 * frame);
  // The same VL in the low table behind VL0's weight of 255 x 64 bytes: it
  // waits for VL0's turn to end (up to 17 packets).
  const Nanos low = vl1_wait(qos_with({}, VlArbTable::of({{0, 255}, {1, 64}}), 0));
  EXPECT_GT(low, 5 * frame);
  EXPECT_LE(low, 18 * frame);
}

TEST(VlArbitration, TablesNamingAMissingVlAreRefused) {
  PortQos q = default_port_qos(2);
  EXPECT_FALSE(q.set_vlarb({}, VlArbTable::of({{0, 64}, {2, 64}}), 0)) << "VL2 is not operational";
  EXPECT_FALSE(q.set_vlarb(VlArbTable::of({{15, 1}}), {}, 0)) << "VL15 is never arbitrated";
  EXPECT_TRUE(q.set_vlarb({}, VlArbTable::of({{0, 64}, {5, 0}}), 0)) << "weight 0 entries are ignored";
  VlArbTable big;
  big.size = kVlArbCap + 1;
  EXPECT_FALSE(q.set_vlarb({}, big, 0));
  EXPECT_EQ(q.vlarb_low.size, 2u) << "the last accepted tables stay";
}

}  // namespace
}  // namespace vf::dp
