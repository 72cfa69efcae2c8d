// The dataplane loop after a stall (docs/architecture.md, "The clock
// model"). fabricd's lcore is modelled over a whole-fabric lab: the same
// EmulatedClock and run_due() as daemon/lcore/lcore.cpp, a real clock the test
// moves (2 us per busy pass, to the next deadline when idle) and stalls of
// 0.1 to 200 ms injected in the middle of ACK bursts (right after the target
// took data it owes ACKs for). A 4->1 incast of 64 KiB WRITEs over 2 Gb/s
// links, on IB (credits) and RoCEv2 (PFC):
//  - the loop as it was (every due timer first, the rings after) turns a
//    stall longer than the ACK timeout into retransmission timeouts on a
//    lossless fabric that dropped nothing: the ACKs were owed, not lost;
//  - the loop as it is catches up in order after a stall: with fabricd's
//    `catch_up: exact` (ring work after each deadline of every late pass)
//    every WRITE completes at the same emulated nanosecond as without
//    stalls; with the default `batched` (in order only once a pass is over
//    1 ms late) no retransmission either, the same data, and the last
//    completion no later than the sub-millisecond stalls allow.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/emulated_clock.hpp"
#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

using engine::test::AppCq;
using engine::test::AppQp;

constexpr unsigned kSenders = 4, kTarget = kSenders, kWrs = 32;
constexpr uint32_t kMsg = 64 * 1024;
constexpr uint64_t kPassNs = 2'000;  // a busy lcore pass
constexpr uint64_t kMs = 1'000'000;

enum class Loop { kTimersFirst, kBatched, kExact };

struct IncastRun {
  std::vector<std::vector<uint64_t>> done_at;  // per sender, each WR's completion_ts
  unsigned failed = 0;
  uint64_t retransmitted = 0, timeouts = 0, dropped = 0, stalls = 0, drift_ns = 0;
  bool data_ok = false;
};

// stalls: real nanoseconds the lcore loses, one after another, each at the
// end of a pass in which the target received data (its ACKs are owed then).
IncastRun incast(LinkLayer ll, Loop loop, std::vector<uint64_t> stalls) {
  LabConfig c;
  c.link_layer = ll;
  c.hosts = kSenders + 1;
  c.link = {2'000'000'000ULL, 500, ll == LinkLayer::kInfiniBand ? 4096u : 1500u};
  if (ll == LinkLayer::kEthernet) {  // PFC on priority 3, as fabricd's default QoS
    c.port.eth.trust_dscp = true;
    c.port.eth.pfc.enable = 1u << 3;
    c.default_tclass = 106;
  }
  FabricLab lab(c);
  engine::test::ConnParams p;  // ACK timeout 14: 67 ms
  p.mtu = ll == LinkLayer::kInfiniBand ? IBV_MTU_4096 : IBV_MTU_1024;

  auto& target = *lab.host(kTarget).app;
  std::vector<uint8_t> sink(size_t(kSenders) * kWrs * kMsg, 0);
  const uint32_t tpd = target.alloc_pd();
  const auto tmr = target.mr(tpd, sink.data(), sink.size());
  auto tcq = target.cq(255);
  std::vector<std::vector<uint8_t>> bufs(kSenders);
  std::vector<std::unique_ptr<AppCq>> cqs;
  std::vector<std::unique_ptr<AppQp>> qps, peers;
  for (unsigned i = 0; i < kSenders; ++i) {
    auto& app = *lab.host(i).app;
    const uint32_t pd = app.alloc_pd();
    bufs[i].resize(size_t(kWrs) * kMsg);
    engine::test::fill_pattern(bufs[i].data(), bufs[i].size(), i + 1);
    const auto mr = app.mr(pd, bufs[i].data(), bufs[i].size());
    cqs.push_back(app.cq(255));
    qps.push_back(app.qp(pd, *cqs[i], *cqs[i]));
    peers.push_back(target.qp(tpd, *tcq, *tcq));
    lab.connect(i, *qps[i], kTarget, *peers[i], p);
    for (unsigned k = 0; k < kWrs; ++k) {
      vhca_send_wqe w = engine::test::send_wqe(
          k, {engine::test::sge(bufs[i].data() + size_t(k) * kMsg, kMsg, mr.lkey)}, IBV_SEND_SIGNALED,
          IBV_WR_RDMA_WRITE);
      w.remote_addr = reinterpret_cast<uint64_t>(sink.data()) + (size_t(i) * kWrs + k) * kMsg;
      w.rkey = tmr.rkey;
      app.post_send(*qps[i], w);
    }
  }

  auto poll_pass = [&] {
    bool any = false;
    for (unsigned i = 0; i <= kSenders; ++i) any |= lab.host(i).hca->poll(64);
    return any;
  };
  EmulatedClock clock;  // fabricd's limits: 1 ms caught up, the rest given up
  IncastRun r;
  r.done_at.resize(kSenders);
  const uint64_t t0 = lab.sched.now();
  uint64_t real = t0;
  unsigned reaped = 0;
  size_t next_stall = 0;
  uint64_t target_rx = lab.host(kTarget).hca->counters().rx_packets;
  for (int guard = 0; reaped < kSenders * kWrs && guard < 10'000'000; ++guard) {
    bool did;
    if (loop == Loop::kTimersFirst) {
      did = lab.sched.advance_to(real) > 0;
    } else {
      const Nanos now = clock.tick(real, lab.sched.next_deadline());
      did = run_pass_timers(
          lab.sched, now,
          [&] {
            for (int k = 0; k < 8 && poll_pass(); ++k) {
            }
          },
          loop == Loop::kExact ? 0 : kCatchUpAfter);
    }
    did |= poll_pass();
    for (unsigned i = 0; i < kSenders; ++i) {
      vhca_cqe e;
      while (lab.host(i).app->poll_cq(*cqs[i], e)) {
        ++reaped;
        if (e.status != IBV_WC_SUCCESS) ++r.failed;
        r.done_at[i].push_back(e.completion_ts - t0);
      }
    }
    const uint64_t rx = lab.host(kTarget).hca->counters().rx_packets;
    if (next_stall < stalls.size() && rx != target_rx) real += stalls[next_stall++];
    target_rx = rx;
    // Busy: the next pass; idle: sleep until the next timer (clock's drift included).
    const Nanos next = lab.sched.next_deadline();
    const uint64_t drift = loop == Loop::kTimersFirst ? 0 : clock.stats().drift_ns;
    real = did || next == kNever ? real + kPassNs : std::max(real + kPassNs, next + drift);
  }
  EXPECT_EQ(next_stall, stalls.size()) << "every stall was injected";
  for (unsigned i = 0; i <= kSenders; ++i) {
    const auto& ec = lab.host(i).hca->counters();
    r.retransmitted += ec.retransmitted_packets;
    r.timeouts += ec.retransmit_timeouts;
    r.dropped += ec.rx_dropped;
    r.dropped += lab.switch_port_to(i).snapshot(lab.sched.now()).port_xmit_discards;
  }
  r.stalls = clock.stats().stalls;
  r.drift_ns = clock.stats().drift_ns;
  r.data_ok = true;
  for (unsigned i = 0; i < kSenders; ++i)
    r.data_ok &= std::memcmp(sink.data() + size_t(i) * kWrs * kMsg, bufs[i].data(), bufs[i].size()) == 0;
  EXPECT_EQ(reaped, kSenders * kWrs) << "every WRITE completed";
  return r;
}

// 0.1 to 200 ms, each in the middle of an ACK burst.
const std::vector<uint64_t> kStalls = {100'000, 500'000, 900'000, 5 * kMs, 20 * kMs, 70 * kMs, 200 * kMs, 120 * kMs};

class LcoreStall : public ::testing::TestWithParam<LinkLayer> {};

TEST_P(LcoreStall, TimersBeforeRingWorkTurnAStallIntoRetransmissionTimeouts) {
  const IncastRun calm = incast(GetParam(), Loop::kTimersFirst, {});
  EXPECT_EQ(calm.timeouts, 0u);
  const IncastRun stalled = incast(GetParam(), Loop::kTimersFirst, kStalls);
  std::printf("timers first, stalled: %llu timeouts, %llu packets retransmitted, %llu dropped\n",
              (unsigned long long)stalled.timeouts, (unsigned long long)stalled.retransmitted,
              (unsigned long long)stalled.dropped);
  EXPECT_GT(stalled.timeouts, 0u) << "the ACK timers fired while their ACKs were owed";
  EXPECT_GT(stalled.retransmitted, 0u);
  EXPECT_EQ(stalled.dropped, 0u) << "and nothing was lost: the fabric is lossless";
  EXPECT_TRUE(stalled.data_ok);
}

void expect_clean(const IncastRun& r) {
  EXPECT_EQ(r.failed, 0u);
  EXPECT_EQ(r.retransmitted, 0u);
  EXPECT_EQ(r.timeouts, 0u);
  EXPECT_EQ(r.dropped, 0u);
  EXPECT_TRUE(r.data_ok);
}

void expect_stall_accounting(const IncastRun& calm, const IncastRun& stalled) {
  EXPECT_EQ(calm.stalls, 0u);
  EXPECT_EQ(stalled.stalls, 5u) << "lateness above 1 ms: the 5, 20, 70, 200 and 120 ms stalls";
  // What lay beyond 1 ms of each was given up, not run: 4 + 19 + 69 + 199 + 119 = 410 ms.
  EXPECT_NEAR(double(stalled.drift_ns), 410.0 * kMs, 0.1 * kMs);
}

uint64_t last_completion(const IncastRun& r) {
  uint64_t t = 0;
  for (const auto& s : r.done_at) t = std::max(t, s.back());
  return t;
}

TEST_P(LcoreStall, ExactCatchUpCompletesEveryWriteAtTheSameEmulatedTimeAsWithoutStalls) {
  const IncastRun calm = incast(GetParam(), Loop::kExact, {});
  const IncastRun stalled = incast(GetParam(), Loop::kExact, kStalls);
  expect_clean(calm);
  expect_clean(stalled);
  ASSERT_EQ(stalled.done_at.size(), calm.done_at.size());
  for (size_t i = 0; i < calm.done_at.size(); ++i)
    EXPECT_EQ(stalled.done_at[i], calm.done_at[i]) << "sender " << i << "'s completion times";
  expect_stall_accounting(calm, stalled);
}

TEST_P(LcoreStall, BatchedCatchUpRetransmitsNothingAndLosesAtMostTheShortStalls) {
  const IncastRun calm = incast(GetParam(), Loop::kBatched, {});
  const IncastRun stalled = incast(GetParam(), Loop::kBatched, kStalls);
  expect_clean(calm);
  expect_clean(stalled);
  // Stalls over 1 ms are caught up in order, ring work after each deadline;
  // the shorter ones (0.1 + 0.5 + 0.9 ms) run as an ordinary late pass, whose
  // ring work waits for its end: at most that long is lost to the senders.
  ASSERT_EQ(stalled.done_at.size(), calm.done_at.size());
  for (size_t i = 0; i < calm.done_at.size(); ++i) EXPECT_EQ(stalled.done_at[i].size(), calm.done_at[i].size());
  EXPECT_LE(last_completion(stalled), last_completion(calm) + 1'500'000 + 100'000);
  EXPECT_GE(last_completion(stalled), last_completion(calm) - last_completion(calm) / 100);
  expect_stall_accounting(calm, stalled);
}

INSTANTIATE_TEST_SUITE_P(Fabrics, LcoreStall, ::testing::Values(LinkLayer::kInfiniBand, LinkLayer::kEthernet),
                         [](const auto& p) { return p.param == LinkLayer::kInfiniBand ? "Ib" : "RoceV2"; });

}  // namespace
}  // namespace vf::test
