// 802.1Qbb PFC on one Ethernet link, in virtual time: port `a` sends, port `b`
// receives into priority groups the test empties when it wants to (as a
// congested switch would). The invariants: a lossless priority never drops
// while its headroom holds, XOFF reaches the sender and stops exactly that
// priority for its quanta after the response delay, XOFF is refreshed while
// the receiver stays full, XON resumes, a too-small headroom overflows and
// says so, malformed control frames are counted and never forwarded, the
// watchdog trips on a storm and recovers, and the headroom model adds up.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "dataplane/fabric/pfc.hpp"
#include "dataplane/fabric/pfc_headroom.hpp"
#include "dataplane/wire/pfc.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

using test::make_eth;

constexpr uint64_t G = 1'000'000'000ULL;
constexpr uint32_t kFrame = 1000;
constexpr unsigned kRoce = 3;
const Mac kDst{0x02, 0, 0, 0, 0, 2};

HeadroomTerms model(const LinkParams& lp, Nanos response) {
  const uint32_t mf = max_frame_bytes(LinkLayer::kEthernet, lp.mtu);
  return pfc_headroom({lp.rate_bps, lp.delay_ns, mf, mf, response, 0});
}

PfcConfig lossless(uint32_t headroom, uint32_t xoff = 8000, uint32_t xon = 4000) {
  PfcConfig c;
  c.enable = 1u << kRoce;
  c.pg[kRoce] = PfcThresholds{xoff, xon, headroom};
  return c;
}

struct PfcLink {
  explicit PfcLink(PfcConfig ca, PfcConfig cb, LinkParams lp = {10 * G, 200, 1500}, SharedBuffer* buf = nullptr)
      : link(s, LinkLayer::kEthernet, lp) {
    holder.port = &b;
    b.set_owner(&holder, &test::Holder::on_rx);
    b.set_buffer(buf);
    connect_ports(a, b, link);
    ca.mac = {0x02, 0, 0, 0, 0, 1};
    cb.mac = {0x02, 0, 0, 0, 0, 2};
    pa = std::make_unique<Pfc>(a, vf::test::test_mbuf_pool(), nullptr, ca);
    pb = std::make_unique<Pfc>(b, vf::test::test_mbuf_pool(), buf, cb);
  }
  ~PfcLink() {
    pa.reset();
    pb.reset();
  }
  void send(unsigned n, unsigned prio = kRoce, uint32_t first = 1) {
    for (unsigned i = 0; i < n; ++i)
      ASSERT_TRUE(a.enqueue(prio, make_eth(kFrame, kDst, int(prio), first + i)));
  }
  // A MAC Control frame from b to a, as b's link control would send it.
  void inject_to_a(const std::vector<uint8_t>& bytes) {
    rte_mbuf* m = test::make_frame(uint32_t(bytes.size()));
    std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), bytes.data(), bytes.size());
    ASSERT_TRUE(b.send_control(m));
  }
  void pause_a(uint8_t enable, uint16_t quanta) {
    wire::PfcFrame p;
    p.enable = enable;
    for (unsigned i = 0; i < 8; ++i)
      if (enable >> i & 1) p.quanta[i] = quanta;
    std::vector<uint8_t> f(wire::kPfcFrameLen);
    wire::pfc_put(f.data(), Mac{0x02, 0, 0, 0, 0, 2}.data(), p);
    inject_to_a(f);
  }
  void run_for(Nanos d) { s.advance_to(s.now() + d); }
  unsigned arrived() const { return unsigned(holder.tags.size()); }
  PfcPrioritySnapshot at_a(unsigned prio = kRoce) const { return pa->snapshot().prio[prio]; }
  PfcPrioritySnapshot at_b(unsigned prio = kRoce) const { return pb->snapshot().prio[prio]; }

  Scheduler s;
  Port a{s, "a", LinkLayer::kEthernet};
  Port b{s, "b", LinkLayer::kEthernet};
  test::Holder holder;
  Link link;
  std::unique_ptr<Pfc> pa, pb;
};

TEST(Pfc, AFullReceiverPausesTheSenderWithoutLoss) {
  const uint32_t headroom = uint32_t(model({10 * G, 200, 1500}, 1000).total);
  PfcLink l(lossless(headroom), lossless(headroom));
  l.holder.hold[kRoce] = true;
  l.send(40);
  l.run_for(2'000'000);
  // b took up to XOFF, then what was already coming; a holds the rest.
  const PfcPrioritySnapshot rb = l.at_b();
  EXPECT_GE(rb.buffer_bytes, 8000u);
  EXPECT_LE(rb.buffer_bytes, 8000u + headroom);
  EXPECT_GT(rb.headroom_peak, 0u);
  EXPECT_EQ(rb.headroom_overflow, 0u);
  EXPECT_EQ(l.arrived() * kFrame, rb.buffer_bytes);
  EXPECT_EQ(l.a.class_queued(kRoce), 40u - l.arrived());
  EXPECT_GE(rb.tx_pause, 1u);
  EXPECT_EQ(l.at_a().rx_pause, rb.tx_pause);
  EXPECT_GT(l.at_a().rx_pause_duration, 1900u) << "paused for (nearly) all of the 2 ms";
  EXPECT_EQ(l.pa->snapshot().paused, 1u << kRoce);
  EXPECT_EQ(l.pb->snapshot().xoff, 1u << kRoce);
  EXPECT_GT(l.a.snapshot(l.s.now()).port_xmit_wait_ns, 1'900'000u) << "a paused priority is PortXmitWait";
  // Emptying b sends XON: everything arrives, in order, nothing dropped.
  for (int round = 0; round < 20 && l.arrived() < 40; ++round) {
    l.holder.let_go(kRoce);
    l.run_for(100'000);
  }
  l.holder.let_go(kRoce);
  l.run_for(10'000);  // the last XON on its way
  ASSERT_EQ(l.arrived(), 40u);
  for (unsigned i = 0; i < 40; ++i) EXPECT_EQ(l.holder.tags[i], i + 1);
  EXPECT_EQ(l.a.snapshot(l.s.now()).port_xmit_discards + l.b.snapshot(l.s.now()).port_rcv_discards, 0u);
  EXPECT_GE(l.at_a().rx_pause_transition, 1u) << "XON ended a pause";
  EXPECT_EQ(l.pa->snapshot().paused, 0u);
  EXPECT_EQ(l.pb->snapshot().xoff, 0u);
}

TEST(Pfc, XoffIsRefreshedSoTheSenderNeverResumesOnItsOwn) {
  PfcConfig cb = lossless(20000);
  cb.pause_quanta = 100;  // 5.12 us at 10 Gb/s: refreshed every 2.56 us
  PfcLink l(lossless(20000), cb);
  l.holder.hold[kRoce] = true;
  l.send(40);
  l.run_for(100'000);
  const unsigned held = l.arrived();
  const uint64_t sent = l.at_b().tx_pause;
  l.run_for(1'000'000);
  EXPECT_EQ(l.arrived(), held) << "no frame slipped through between refreshes";
  EXPECT_GE(l.at_b().tx_pause - sent, 1'000'000u / 2560 - 1);
  EXPECT_EQ(l.at_b().headroom_overflow, 0u);
}

TEST(Pfc, PauseTakesEffectAfterTheResponseDelayAndLastsItsQuanta) {
  PfcConfig ca = lossless(20000);
  ca.response_ns = 500;
  PfcLink l(ca, lossless(20000));
  l.pause_a(1u << kRoce, 1000);  // 1000 quanta at 10 Gb/s: 51.2 us
  // The PFC frame (60 bytes + 24 on the wire, 67.2 ns) arrives at a after 200 ns.
  const Nanos arrive = 268;
  l.s.advance_to(arrive + 400);  // paused from arrive + 500
  l.send(1, kRoce, 1);           // before the pause is in force: goes at once
  l.run_for(100);
  l.send(1, kRoce, 2);  // now paused
  l.send(1, 0, 3);      // another priority is not
  l.run_for(10'000);
  ASSERT_EQ(l.arrived(), 2u);
  EXPECT_EQ(l.holder.tags[0], 1u);
  EXPECT_EQ(l.holder.tags[1], 3u);
  const Nanos resume = arrive + 500 + 51'200;
  l.s.advance_to(resume - 1);
  EXPECT_EQ(l.arrived(), 2u) << "still paused 1 ns before the quanta run out";
  l.s.advance_to(resume + 200 + 1000);  // propagation + serialization of 1000 bytes
  EXPECT_EQ(l.arrived(), 3u);
  EXPECT_EQ(l.at_a().rx_pause_duration, 51u) << "microseconds, as mlx5 counts";
}

TEST(Pfc, XonResumesBeforeTheQuantaRunOut) {
  PfcConfig ca = lossless(20000);
  ca.response_ns = 0;
  PfcLink l(ca, lossless(20000));
  l.pause_a(1u << kRoce, 0xFFFF);
  l.run_for(1000);
  l.send(3);
  l.run_for(50'000);
  EXPECT_EQ(l.arrived(), 0u);
  l.pause_a(1u << kRoce, 0);
  l.run_for(10'000);
  EXPECT_EQ(l.arrived(), 3u);
  EXPECT_EQ(l.at_a().rx_pause, 2u);
  EXPECT_EQ(l.at_a().rx_pause_transition, 1u);
}

TEST(Pfc, OnlyThePortsLosslessPrioritiesAreHonoured) {
  PfcLink l(lossless(20000), lossless(20000));
  l.pause_a(0xFF, 0xFFFF);  // every priority
  l.run_for(1000);
  l.send(2, 0, 1);       // priority 0 is lossy here: PFC does not stop it
  l.send(2, kRoce, 10);  // priority 3 is paused
  l.run_for(50'000);
  ASSERT_EQ(l.arrived(), 2u);
  EXPECT_EQ(l.holder.tags[0], 1u);
  EXPECT_EQ(l.at_a(0).rx_pause, 1u) << "counted, not acted on";
  EXPECT_EQ(l.pa->snapshot().paused, 1u << kRoce);
}

TEST(Pfc, MalformedAndUnsupportedControlFramesAreCountedAndDropped) {
  PfcLink l(lossless(20000), lossless(20000));
  std::vector<uint8_t> good(wire::kPfcFrameLen);
  wire::PfcFrame p;
  p.enable = 1u << kRoce;
  p.quanta[kRoce] = 0xFFFF;
  wire::pfc_put(good.data(), Mac{0x02, 0, 0, 0, 0, 2}.data(), p);
  auto truncated = std::vector<uint8_t>(good.begin(), good.begin() + 20);
  auto pause = good;
  pause[15] = 0x01;
  pause[14] = 0x00;  // 802.3x PAUSE
  auto unicast = good;
  unicast[0] = 0x02;
  std::vector<uint8_t> tagged(good.begin(), good.begin() + 12);
  for (uint8_t x : {0x81, 0x00, 0x60, 0x00}) tagged.push_back(x);
  tagged.insert(tagged.end(), good.begin() + 12, good.end());
  for (const auto* f : {&truncated, &pause, &unicast, &tagged}) l.inject_to_a(*f);
  l.run_for(10'000);
  const PfcSnapshot s = l.pa->snapshot();
  EXPECT_EQ(s.rx_malformed, 3u);
  EXPECT_EQ(s.rx_unsupported, 1u);
  EXPECT_EQ(s.paused, 0u) << "none of them paused anything";
  EXPECT_EQ(l.a.snapshot(l.s.now()).classes[kCtrlClass].rcv_pkts, 4u) << "consumed as MAC Control";
  // The port keeps working: a good one still pauses.
  l.inject_to_a(good);
  l.run_for(10'000);
  EXPECT_EQ(l.pa->snapshot().paused, 1u << kRoce);
}

TEST(Pfc, TooLittleHeadroomOverflowsAndSaysSo) {
  const LinkParams lp{10 * G, 2000, 1500};  // 2 us of cable: 5 KB in flight each way
  const uint32_t computed = uint32_t(model(lp, 1000).total);
  for (const uint32_t headroom : {computed, 1500u}) {
    PfcLink l(lossless(computed), lossless(headroom), lp);
    l.holder.hold[kRoce] = true;
    l.send(60);
    l.run_for(1'000'000);
    const PfcPrioritySnapshot rb = l.at_b();
    if (headroom == computed) {
      EXPECT_EQ(rb.headroom_overflow, 0u) << "the computed headroom (" << computed << " bytes) holds";
      EXPECT_LE(rb.headroom_peak, computed);
    } else {
      EXPECT_GT(rb.headroom_overflow, 0u) << "1500 bytes cannot hold 2 x 2 us of 10 Gb/s";
      EXPECT_EQ(l.b.snapshot(l.s.now()).port_rcv_discards, rb.headroom_overflow);
    }
  }
}

TEST(Pfc, HeadroomReservedOutOfTheSharedBuffer) {
  SharedBuffer buf(64 * 1024);
  {
    PfcLink l(lossless(20000), lossless(20000), {10 * G, 200, 1500}, &buf);
    EXPECT_EQ(buf.reserved(), 20000u);
    l.holder.hold[kRoce] = true;
    l.send(30);
    l.run_for(100'000);
    EXPECT_EQ(buf.used(), l.at_b().buffer_bytes);
    EXPECT_EQ(buf.headroom_used(), l.at_b().headroom_bytes);
    l.holder.let_go(kRoce);
    l.run_for(1'000'000);
    l.holder.let_go(kRoce);
    EXPECT_EQ(buf.used(), 0u);
  }
  EXPECT_EQ(buf.reserved(), 0u) << "given back with the port's PFC";
  try {
    PfcLink l(lossless(20000), lossless(70000), {10 * G, 200, 1500}, &buf);
    FAIL() << "a headroom larger than the buffer was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("do not fit the switch buffer"), std::string::npos) << e.what();
  }
  EXPECT_EQ(buf.reserved(), 0u);
}

TEST(Pfc, AFullSharedBufferDropsLossyButPutsLosslessIntoHeadroom) {
  SharedBuffer buf(12000 + 20000);  // 12 KB shared after the headroom
  PfcLink l(lossless(20000), lossless(20000, 30000, 20000), {10 * G, 200, 1500}, &buf);
  l.holder.hold[0] = l.holder.hold[kRoce] = true;
  l.send(20, 0, 100);  // lossy: 12 fit, 8 dropped
  l.run_for(100'000);
  EXPECT_EQ(l.arrived(), 12u);
  EXPECT_EQ(l.at_b(0).buffer_drops, 8u);
  l.send(10, kRoce, 1);  // lossless: the shared part is full, so straight into headroom + XOFF
  l.run_for(100'000);
  EXPECT_GT(l.at_b().headroom_bytes, 0u);
  EXPECT_EQ(l.at_b().headroom_overflow, 0u);
  EXPECT_EQ(l.pb->snapshot().xoff, 1u << kRoce);
}

// Dynamic thresholds (Choudhury and Hahne): one congested lossy group
// settles at alpha / (1 + alpha) of the shared pool -- half of it at alpha 1,
// two thirds at 2, a third at 1/2 -- where a static pool lets it take all.
TEST(PfcDynamicThresholds, OneGroupSettlesAtAlphaOverOnePlusAlphaOfThePool) {
  for (const auto& [alpha_log2, admitted] : std::vector<std::pair<int8_t, unsigned>>{
           {PfcSettings::kStaticThresholds, 100}, {0, 50}, {1, 67}, {-1, 33}}) {
    SharedBuffer buf(100'000);
    PfcConfig cb;
    cb.alpha_log2 = alpha_log2;
    PfcLink l(PfcConfig{}, cb, {10 * G, 200, 1500}, &buf);
    l.holder.hold[0] = true;
    l.send(100, 0, 1);
    l.run_for(1'000'000);
    EXPECT_EQ(l.arrived(), admitted) << "alpha 2^" << int(alpha_log2);
    EXPECT_EQ(l.at_b(0).buffer_drops, 100u - admitted);
    EXPECT_EQ(l.pb->snapshot().dynamic, alpha_log2 != PfcSettings::kStaticThresholds);
    l.holder.let_go(0);
    EXPECT_EQ(buf.used(), 0u);
  }
}

// Two congested groups share the pool alpha / (1 + 2 alpha) each, and a third
// of it stays free for whoever comes next.
TEST(PfcDynamicThresholds, TwoCongestedGroupsShareThePoolAndLeaveRoom) {
  SharedBuffer buf(100'000);
  PfcConfig cb;
  cb.alpha_log2 = 0;
  PfcLink l(PfcConfig{}, cb, {10 * G, 200, 1500}, &buf);
  l.holder.hold[0] = l.holder.hold[1] = true;
  l.send(60, 0, 1);
  l.send(60, 1, 1001);
  l.run_for(1'000'000);
  for (unsigned prio : {0u, 1u}) {
    EXPECT_GE(l.at_b(prio).buffer_bytes, 32'000u) << prio;
    EXPECT_LE(l.at_b(prio).buffer_bytes, 34'000u) << prio;
  }
  EXPECT_GE(buf.shared_free(), 32'000u);
  EXPECT_EQ(l.pb->snapshot().dynamic_limit, buf.shared_free());
  l.holder.let_go(0);
  l.holder.let_go(1);
}

// A lossless group goes into its headroom (and sends XOFF) at the dynamic
// bound instead of the static xoff, loses nothing, and resumes once drained.
TEST(PfcDynamicThresholds, ALosslessGroupPausesAtTheDynamicBoundWithoutLoss) {
  SharedBuffer buf(120'000);  // 100 KB shared once the 20 KB headroom is set aside
  PfcConfig cb = lossless(20'000, 90'000, 86'000);
  cb.alpha_log2 = 0;
  PfcLink l(lossless(20'000), cb, {10 * G, 200, 1500}, &buf);
  l.holder.hold[kRoce] = true;
  l.send(120);
  l.run_for(2'000'000);
  const PfcPrioritySnapshot rb = l.at_b();
  EXPECT_EQ(rb.buffer_bytes - rb.headroom_bytes, 50'000u) << "alpha 1: half the shared pool, not xoff's 90 KB";
  EXPECT_GT(rb.headroom_bytes, 0u);
  EXPECT_EQ(rb.headroom_overflow, 0u);
  EXPECT_EQ(l.pb->snapshot().xoff, 1u << kRoce);
  EXPECT_GE(l.at_a().rx_pause, 1u);
  for (int round = 0; round < 40 && l.arrived() < 120; ++round) {
    l.holder.let_go(kRoce);
    l.run_for(100'000);
  }
  l.holder.let_go(kRoce);
  l.run_for(10'000);
  EXPECT_EQ(l.arrived(), 120u);
  EXPECT_EQ(l.at_b().headroom_overflow + l.at_b().buffer_drops, 0u);
  EXPECT_EQ(l.pb->snapshot().xoff, 0u);
}

// A group's static reserved part is its own: a latecomer gets it even when
// another group has taken the whole shared pool.
TEST(Pfc, AReservedPartIsGuaranteedWhateverTheSharedPoolHolds) {
  for (const uint32_t reserved : {0u, 5000u}) {
    SharedBuffer buf(100'000);
    PfcConfig cb;
    cb.reserved_bytes = reserved;
    PfcLink l(PfcConfig{}, cb, {10 * G, 200, 1500}, &buf);
    EXPECT_EQ(buf.reserved(), 8u * reserved);
    l.holder.hold[0] = l.holder.hold[1] = true;
    l.send(120, 0, 1);  // fills its reserved part, then the whole shared pool
    l.run_for(1'000'000);
    l.send(10, 1, 1001);
    l.run_for(1'000'000);
    const unsigned pool = (100'000 - 8 * reserved) / kFrame;
    EXPECT_EQ(l.at_b(0).buffer_bytes, (reserved / kFrame + pool) * kFrame) << "reserved " << reserved;
    EXPECT_EQ(l.at_b(1).buffer_bytes, reserved) << "the latecomer holds exactly its reserved part";
    EXPECT_EQ(l.at_b(1).buffer_drops, 10u - reserved / kFrame);
    EXPECT_EQ(buf.used(), l.at_b(0).buffer_bytes + l.at_b(1).buffer_bytes);
    l.holder.let_go(0);
    l.holder.let_go(1);
    EXPECT_EQ(buf.used(), 0u);
  }
}

TEST(Pfc, WatchdogDeclaresAStormAndRecovers) {
  PfcConfig ca = lossless(20000);
  ca.watchdog_ns = 1'000'000;
  PfcLink l(ca, lossless(20000));
  l.holder.hold[kRoce] = true;  // b never drains: it keeps a paused
  l.send(40);
  l.run_for(500'000);
  EXPECT_EQ(l.pa->snapshot().stormed, 0u);
  const unsigned before = l.arrived();
  l.run_for(1'000'000);
  EXPECT_EQ(l.pa->snapshot().stormed, 1u << kRoce);
  EXPECT_EQ(l.at_a().storm_events, 1u);
  EXPECT_GT(l.arrived(), before) << "a stormed queue no longer waits: its frames go (b drops them)";
  EXPECT_GT(l.at_b().headroom_overflow, 0u);
  // b recovers and stops pausing; a recovers once no pause came for a watchdog interval.
  l.holder.hold[kRoce] = false;
  l.holder.let_go(kRoce);
  l.run_for(3'000'000);
  EXPECT_EQ(l.pa->snapshot().stormed, 0u);
  EXPECT_EQ(l.at_a().storm_events, 1u);
  l.send(2, kRoce, 100);
  l.run_for(100'000);
  EXPECT_EQ(l.holder.tags.back(), 101u);
}

TEST(Pfc, AnInjectedStormHoldsXoffWithAnEmptyBufferUntilCleared) {
  PfcConfig ca = lossless(20000);
  ca.watchdog_ns = 1'000'000;
  PfcLink l(ca, lossless(20000));
  l.pb->set_storm(1u << kRoce);  // b's receive pipeline is "stuck"
  EXPECT_EQ(l.pb->snapshot().storming, 1u << kRoce);
  l.run_for(10'000);  // the XOFF reaches a and takes effect
  l.send(5);
  l.run_for(500'000);
  EXPECT_EQ(l.arrived(), 0u) << "paused although b holds nothing";
  EXPECT_EQ(l.at_b().buffer_bytes, 0u);
  EXPECT_EQ(l.pb->snapshot().xoff, 1u << kRoce);
  l.run_for(1'000'000);  // refreshed XOFFs keep a paused past its watchdog
  EXPECT_EQ(l.pa->snapshot().stormed, 1u << kRoce);
  EXPECT_EQ(l.arrived(), 5u) << "the watchdog ignores the storm: a sends";
  l.pb->set_storm(0);
  EXPECT_EQ(l.pb->snapshot().xoff, 0u) << "XON at once: the buffer is empty";
  l.run_for(3'000'000);
  EXPECT_EQ(l.pa->snapshot().stormed, 0u) << "a watchdog interval without pauses: recovered";
  EXPECT_EQ(l.at_a().storm_events, 1u);
}

TEST(Pfc, ResetClearsCountsButNotLevels) {
  PfcLink l(lossless(20000), lossless(20000));
  l.holder.hold[kRoce] = true;
  l.send(30);
  l.run_for(100'000);
  const PfcPrioritySnapshot before = l.at_b();
  ASSERT_GT(before.tx_pause, 0u);
  ASSERT_GT(l.at_a().rx_pause_duration, 0u);
  l.pa->reset_counters();
  l.pb->reset_counters();
  const PfcPrioritySnapshot after = l.at_b();
  EXPECT_EQ(after.tx_pause, 0u);
  EXPECT_EQ(after.tx_pause_duration, 0u);
  EXPECT_EQ(l.at_a().rx_pause, 0u);
  EXPECT_EQ(l.at_a().rx_pause_duration, 0u);
  EXPECT_EQ(after.buffer_bytes, before.buffer_bytes) << "what the group holds is a level, not a count";
  EXPECT_EQ(after.buffer_peak, after.buffer_bytes) << "the watermark restarts from the level";
  EXPECT_EQ(l.pa->snapshot().paused, 1u << kRoce) << "the pause in force goes on";
  l.run_for(100'000);
  EXPECT_GE(l.at_a().rx_pause_duration, 99u) << "and counts again from the reset";
}

TEST(Pfc, LinkDownEndsPausesAndXoff) {
  PfcLink l(lossless(20000), lossless(20000));
  l.holder.hold[kRoce] = true;
  l.send(30);
  l.run_for(100'000);
  ASSERT_EQ(l.pa->snapshot().paused, 1u << kRoce);
  l.a.set_link_up(false);
  l.b.set_link_up(false);
  EXPECT_EQ(l.pa->snapshot().paused, 0u);
  EXPECT_EQ(l.pb->snapshot().xoff, 0u);
  l.a.set_link_up(true);
  l.b.set_link_up(true);
  l.run_for(10'000);
  EXPECT_EQ(l.pb->snapshot().xoff, 1u << kRoce) << "b still holds its frames: XOFF again after training";
}

// Trust DSCP: IP frames are classified by their DSCP through the map, others by PCP.
TEST(EthClassify, TrustDscpUsesTheMapAndFallsBackToPcp) {
  Scheduler s;
  PortConfig pc;
  pc.eth.trust_dscp = true;
  Port a{s, "a", LinkLayer::kEthernet}, b{s, "b", LinkLayer::kEthernet, pc};
  test::Recorder rec(s);
  b.set_owner(&rec, &test::Recorder::on_port);
  Link link(s, LinkLayer::kEthernet, {10 * G, 0, 1500});
  connect_ports(a, b, link);
  auto ip = [](int pcp, uint8_t v4_tos, bool v6) {
    rte_mbuf* m = make_eth(200, kDst, pcp);
    uint8_t* f = rte_pktmbuf_mtod(m, uint8_t*);
    uint8_t* l3 = f + (pcp >= 0 ? 18 : 14);
    wire::put16(l3 - 2, v6 ? 0x86DD : 0x0800);
    l3[0] = uint8_t(v6 ? 0x60 | v4_tos >> 4 : 0x45);
    l3[1] = uint8_t(v6 ? (v4_tos & 0xF) << 4 : v4_tos);
    return m;
  };
  ASSERT_TRUE(a.enqueue(0, ip(-1, 106, false)));  // DSCP 26 -> 3
  ASSERT_TRUE(a.enqueue(0, ip(5, 184, false)));   // DSCP 46 -> 5, whatever the PCP
  ASSERT_TRUE(a.enqueue(0, ip(-1, 48 << 2, true)));  // IPv6 DSCP 48 -> 6
  ASSERT_TRUE(a.enqueue(0, make_eth(200, kDst, 2)));  // not IP (no version nibble): PCP 2
  s.run_until_idle();
  ASSERT_EQ(rec.got.size(), 4u);
  EXPECT_EQ(rec.got[0].cls, 3u);
  EXPECT_EQ(rec.got[1].cls, 5u);
  EXPECT_EQ(rec.got[2].cls, 6u);
  EXPECT_EQ(rec.got[3].cls, 2u);
}

// The 802.1Qbb delay model against a hand calculation.
TEST(PfcHeadroom, MatchesAHandCalculationAtTwoSpeeds) {
  // 2 Gb/s, 500 ns cable, MTU 1024 (frames up to 1042 bytes), 1 us response:
  // trigger 1042 + wait 1066 (1042 + FCS 4 + preamble 8 + IFG 12) + PFC 84
  // + cable 2 x 500 ns x 0.25 B/ns = 250 + response 250 + last 1042 = 3734.
  const HeadroomTerms slow = model({2 * G, 500, 1024}, 1000);
  EXPECT_EQ(slow.trigger, 1042u);
  EXPECT_EQ(slow.wait, 1066u);
  EXPECT_EQ(slow.pause, 84u);
  EXPECT_EQ(slow.cable, 250u);
  EXPECT_EQ(slow.response, 250u);
  EXPECT_EQ(slow.last, 1042u);
  EXPECT_EQ(slow.total, 3734u);
  // 100 Gb/s, 1 us of cable (about 200 m), MTU 4096 (4114): 4114 + 4138 + 84
  // + 2 x 1 us x 12.5 B/ns = 25000 + 12500 + 4114 = 49950.
  EXPECT_EQ(model({100 * G, 1000, 4096}, 1000).total, 49950u);
  // Interface delay counts both ways too.
  EXPECT_EQ(pfc_headroom({100 * G, 1000, 4114, 4114, 1000, 100}).interface, 2500u);
}

}  // namespace
}  // namespace vf::dp
