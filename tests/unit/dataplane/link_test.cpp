// Wire timing of a link direction, in virtual time: serialization from the
// frame's wire bytes and the rate, propagation delay, back-to-back frames,
// Ethernet overhead, full duplex, and exactness over a million frames.
#include <gtest/gtest.h>

#include "dataplane/fabric/link.hpp"
#include "dataplane/fabric/wire_time.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

using test::make_frame;
using test::Recorder;

constexpr uint64_t G = 1'000'000'000ULL;

TEST(WireBytes, EthernetAddsPreambleFcsIfgAndPadsToMinimum) {
  EXPECT_EQ(wire_bytes(LinkLayer::kInfiniBand, 1000), 1000u);
  EXPECT_EQ(wire_bytes(LinkLayer::kEthernet, 60), 84u);    // 64-byte frame incl. FCS
  EXPECT_EQ(wire_bytes(LinkLayer::kEthernet, 20), 84u);    // padded to 64
  EXPECT_EQ(wire_bytes(LinkLayer::kEthernet, 1514), 1538u);
}

TEST(LinkTiming, IbFrameArrivesAfterSerializationPlusDelay) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 100, 4096});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  const WireTime at = link.a_to_b().send(make_frame(1000, 1));
  EXPECT_EQ(at.ns, 180u);
  EXPECT_EQ(at.rem, 0u);
  EXPECT_EQ(link.a_to_b().free_at(), 80u);
  s.run_until_idle();
  ASSERT_EQ(r.got.size(), 1u);
  EXPECT_EQ(r.got[0].at, 180u);
}

TEST(LinkTiming, BackToBackFramesAreSerialized) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 100, 4096});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  link.a_to_b().send(make_frame(1000, 1));
  EXPECT_FALSE(link.a_to_b().idle(0));
  link.a_to_b().send(make_frame(1000, 2));  // queued behind the first on the wire
  s.run_until_idle();
  ASSERT_EQ(r.got.size(), 2u);
  EXPECT_EQ(r.got[0].at, 180u);
  EXPECT_EQ(r.got[1].at, 260u);
  EXPECT_EQ(r.tags(), (std::vector<uint32_t>{1, 2}));
}

TEST(LinkTiming, IdleWireStartsAtNowNotAtPastBusyTime) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 100, 4096});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  link.a_to_b().send(make_frame(1000, 1));
  s.advance_to(500);
  EXPECT_TRUE(link.a_to_b().idle(500));
  link.a_to_b().send(make_frame(1000, 2));
  s.run_until_idle();
  ASSERT_EQ(r.got.size(), 2u);
  EXPECT_EQ(r.got[1].at, 680u);
}

TEST(LinkTiming, EthernetMinimumFrameOccupies67_2nsAt10G) {
  Scheduler s;
  Link link(s, LinkLayer::kEthernet, LinkParams{10 * G, 50, 1500});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  link.a_to_b().send(make_frame(60, 1));
  // 84 bytes * 8 / 10 Gb/s = 67.2 ns: 67 ns and 0.2 ns held as 2e9/1e10.
  EXPECT_EQ(link.a_to_b().busy_until().ns, 67u);
  EXPECT_EQ(link.a_to_b().busy_until().rem, 2 * G);
  for (uint32_t i = 2; i <= 5; ++i) link.a_to_b().send(make_frame(60, i));
  // Five frames end exactly at 336 ns; each is delivered at the first whole ns
  // after its last bit: 67.2, 134.4, 201.6, 268.8, 336 (+50).
  EXPECT_EQ(link.a_to_b().busy_until().ns, 336u);
  EXPECT_EQ(link.a_to_b().busy_until().rem, 0u);
  s.run_until_idle();
  ASSERT_EQ(r.got.size(), 5u);
  const Nanos want[] = {118, 185, 252, 319, 386};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(r.got[i].at, want[i]) << i;
}

TEST(LinkTiming, EthernetShortFrameIsPaddedOnTheWire) {
  Scheduler s;
  Link link(s, LinkLayer::kEthernet, LinkParams{10 * G, 0, 1500});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  link.a_to_b().send(make_frame(20));
  EXPECT_EQ(link.a_to_b().busy_until().ns, 67u);
  EXPECT_EQ(link.a_to_b().busy_until().rem, 2 * G);
  s.run_until_idle();
  EXPECT_EQ(r.got.at(0).at, 68u);
}

TEST(LinkTiming, DirectionsAreIndependent) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 100, 4096});
  Recorder ra(s), rb(s);
  link.a_to_b().set_sink(rb.sink());
  link.b_to_a().set_sink(ra.sink());
  link.a_to_b().send(make_frame(1000, 1));
  link.a_to_b().send(make_frame(1000, 2));
  link.b_to_a().send(make_frame(1000, 3));
  s.run_until_idle();
  ASSERT_EQ(rb.got.size(), 2u);
  ASSERT_EQ(ra.got.size(), 1u);
  EXPECT_EQ(ra.got[0].at, 180u);  // not behind a_to_b's frames
  EXPECT_EQ(rb.got[1].at, 260u);
}

// 1000-byte frames at 3 Gb/s take 2666.66… ns each; a per-frame rounding would
// be off by ~0.33 ms after a million frames.
TEST(LinkTiming, NoDriftOverAMillionFramesAtAnUnevenRate) {
  Scheduler s;
  const Nanos delay = 1000;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{3 * G, delay, 4096});
  Recorder r(s);
  uint64_t delivered = 0;
  Nanos last = 0;
  struct Count {
    uint64_t* n;
    Nanos* last;
    Scheduler* s;
  } c{&delivered, &last, &s};
  link.a_to_b().set_sink(FrameSink{[](void* ctx, rte_mbuf* m) {
                                     auto* k = static_cast<Count*>(ctx);
                                     ++*k->n;
                                     *k->last = k->s->now();
                                     rte_pktmbuf_free(m);
                                   },
                                   &c});
  constexpr uint64_t kFrames = 1'000'000;
  WireTime end;
  for (uint64_t i = 0; i < kFrames; ++i) {
    s.advance_to(link.a_to_b().free_at());  // as a port would: send when the wire frees
    ASSERT_TRUE(link.a_to_b().idle(s.now()));
    end = link.a_to_b().send(make_frame(1000));
  }
  s.run_until_idle();
  EXPECT_EQ(delivered, kFrames);
  // Exactly N * 8000 bits / 3 Gb/s = 2666666666.67 ns, plus the delay.
  EXPECT_EQ(end.ns, 2'666'666'666u + delay);
  EXPECT_EQ(end.rem, 2 * G);  // 2/3 ns
  EXPECT_EQ(last, 2'666'666'667u + delay);
  EXPECT_EQ(link.a_to_b().frames_sent.get(), kFrames);
  EXPECT_EQ(link.a_to_b().overflow.get(), 0u);
}

TEST(LinkTiming, InFlightCapacityCoversTheDelay) {
  // 10 us of 100 Gb/s wire holds ~20833 6-byte IB packets.
  EXPECT_GE(max_frames_in_flight(LinkLayer::kInfiniBand, LinkParams{100 * G, 10'000, 4096}), 20834u);
  EXPECT_GE(max_frames_in_flight(LinkLayer::kEthernet, LinkParams{100 * G, 10'000, 1500}), 1489u);
}

}  // namespace
}  // namespace vf::dp

namespace vf::dp {
namespace {

// The snapshot the lcore copies (and kLinkDirectionCounters formats) is what
// the direction counted: frames and wire bytes of all it sent, lost ones too.
// fabricctl link set rate/delay on a running link, in virtual time.
TEST(LinkTiming, NewRateAndDelayApplyFromTheNextFrame) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 100, 4096});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  link.a_to_b().send(make_frame(1000, 1));  // 80 ns on the wire, arrives at 180
  link.set_timing(10 * G, 1000);
  EXPECT_EQ(link.params().rate_bps, 10 * G);
  EXPECT_EQ(link.b_to_a().params().delay_ns, 1000u) << "both directions";
  link.a_to_b().send(make_frame(1000, 2));  // after the first: 80 + 800 ns, + 1000
  s.run_until_idle();
  ASSERT_EQ(r.got.size(), 2u);
  EXPECT_EQ(r.got[0].at, 180u) << "a frame on the wire keeps its arrival";
  EXPECT_EQ(r.got[1].at, 1880u);
}

TEST(LinkTiming, AShorterDelayNeverLetsAFrameOvertake) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 10'000, 4096});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  link.a_to_b().send(make_frame(1000, 1));  // arrives at 80 + 10000
  link.set_timing(100 * G, 100);
  link.a_to_b().send(make_frame(1000, 2));  // would arrive at 260: waits behind the first
  s.advance_to(5000);
  link.a_to_b().send(make_frame(1000, 3));  // 5180: still behind the first
  s.run_until_idle();
  EXPECT_EQ(r.tags(), (std::vector<uint32_t>{1, 2, 3}));
  ASSERT_EQ(r.got.size(), 3u);
  EXPECT_EQ(r.got[0].at, 10'080u);
  EXPECT_EQ(r.got[1].at, 10'080u);
  EXPECT_EQ(r.got[2].at, 10'080u);
  link.a_to_b().send(make_frame(1000, 4));  // the wire is clear again: the new delay
  const Nanos sent = s.now();
  s.run_until_idle();
  EXPECT_EQ(r.got.back().at, sent + 180);
}

TEST(LinkTiming, ALongerFasterWireHoldsMoreFramesWithoutLoss) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{1 * G, 100, 4096});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  const uint32_t before = max_frames_in_flight(LinkLayer::kInfiniBand, link.params());
  link.set_timing(100 * G, 2000);  // 4167 IB flow-control packets fit on the wire now
  const uint32_t after = max_frames_in_flight(LinkLayer::kInfiniBand, link.params());
  ASSERT_GT(after, before + 1000);
  for (uint32_t i = 0; i < after - kSendAheadSlack; ++i) link.a_to_b().send(make_frame(6, i));
  s.run_until_idle();
  EXPECT_EQ(r.got.size(), after - kSendAheadSlack);
  EXPECT_EQ(link.a_to_b().overflow.get(), 0u);
}

// A stage that answers with the verdicts it is given, frame by frame.
struct Script {
  std::vector<WireVerdict> verdicts;
  size_t next = 0;
  static WireVerdict on(void* ctx, rte_mbuf*, const WireTime&, const WireTime&) {
    auto& s = *static_cast<Script*>(ctx);
    return s.next < s.verdicts.size() ? s.verdicts[s.next++] : WireVerdict::kPass;
  }
};

TEST(LinkImpairments, ADuplicateArrivesRightBehindItsOriginal) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 100, 4096});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  Script script{{WireVerdict::kPass, WireVerdict::kDuplicate, WireVerdict::kPass}};
  link.a_to_b().set_impairment({&script, &Script::on});
  for (uint32_t i = 1; i <= 3; ++i) link.a_to_b().send(make_frame(1000, i));
  s.run_until_idle();
  EXPECT_EQ(r.tags(), (std::vector<uint32_t>{1, 2, 2, 3}));
  ASSERT_EQ(r.got.size(), 4u);
  EXPECT_EQ(r.got[1].at, r.got[2].at) << "the copy took no wire time of its own";
  EXPECT_EQ(link.a_to_b().snapshot().duplicated, 1u);
  EXPECT_EQ(link.a_to_b().snapshot().frames_sent, 3u);
}

TEST(LinkImpairments, AHeldFrameArrivesAfterTheNextOneOrAfterTheHoldAlone) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 100, 4096});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  Script script{{WireVerdict::kHold, WireVerdict::kPass, WireVerdict::kPass, WireVerdict::kHold}};
  link.a_to_b().set_impairment({&script, &Script::on});
  for (uint32_t i = 1; i <= 3; ++i) link.a_to_b().send(make_frame(1000, i));
  s.run_until_idle();
  EXPECT_EQ(r.tags(), (std::vector<uint32_t>{2, 1, 3}));
  EXPECT_EQ(r.got[0].at, r.got[1].at) << "it follows the frame that passed it";
  EXPECT_EQ(link.a_to_b().snapshot().reordered, 1u);
  // Held with nothing behind it: it goes after kHoldMax, not reordered.
  const Nanos sent = s.now();
  link.a_to_b().send(make_frame(1000, 4));
  s.run_until_idle();
  ASSERT_EQ(r.got.size(), 4u);
  EXPECT_EQ(r.got.back().at, sent + 180 + kHoldMax);
  EXPECT_EQ(link.a_to_b().snapshot().reordered, 1u);
}

TEST(LinkImpairments, AHeldFrameIsLostWhenTheLinkGoesDown) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 100, 4096});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  Script script{{WireVerdict::kHold}};
  link.a_to_b().set_impairment({&script, &Script::on});
  link.a_to_b().send(make_frame(1000, 1));
  link.a_to_b().flush();
  s.run_until_idle();
  EXPECT_TRUE(r.got.empty());
  EXPECT_EQ(link.a_to_b().snapshot().lost, 1u);
}

TEST(LinkCounters, SnapshotCountsSentWireBytesAndLost) {
  Scheduler s;
  Link link(s, LinkLayer::kEthernet, LinkParams{10 * G, 50, 1500});
  Recorder r(s);
  link.a_to_b().set_sink(r.sink());
  unsigned calls = 0;
  link.a_to_b().set_impairment({&calls, [](void* ctx, rte_mbuf*, const WireTime&, const WireTime&) {
                                  // loses the second
                                  return ++*static_cast<unsigned*>(ctx) != 2 ? WireVerdict::kPass : WireVerdict::kLose;
                                }});
  for (uint32_t i = 0; i < 3; ++i) {
    link.a_to_b().send(make_frame(100, i));
    s.run_until_idle();
  }
  const LinkDirectionSnapshot a = link.a_to_b().snapshot();
  EXPECT_EQ(a.frames_sent, 3u);
  EXPECT_EQ(a.bytes_on_wire, 3 * wire_bytes(LinkLayer::kEthernet, 100));
  EXPECT_EQ(a.lost, 1u);
  EXPECT_EQ(a.overflow, 0u);
  EXPECT_EQ(r.tags(), (std::vector<uint32_t>{0, 2}));
  const LinkDirectionSnapshot b = link.b_to_a().snapshot();
  EXPECT_EQ(b.frames_sent, 0u);
  uint64_t lost = 0;
  for (const CounterDef& d : kLinkDirectionCounters)
    if (d.name == "lost") lost = read_counter(d, &a);
  EXPECT_EQ(lost, 1u);
}

}  // namespace
}  // namespace vf::dp
