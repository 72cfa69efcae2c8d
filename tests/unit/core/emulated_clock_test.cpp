// The clock model (core/emulated_clock.hpp): emulated time follows the real
// clock while the loop keeps up, catches up in deadline order after a short
// stall, and gives up (drift) whatever lies beyond max_lag after a long one.
#include "core/emulated_clock.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace vf {
namespace {

constexpr Nanos kMs = 1'000'000;

TEST(EmulatedClock, FollowsTheRealClockScaledByTheDilation) {
  EmulatedClock c(4);
  EXPECT_EQ(c.tick(0, kNever), 0u);
  EXPECT_EQ(c.tick(4 * kMs, 2 * kMs), 1 * kMs);
  EXPECT_EQ(c.peek(8 * kMs), 2 * kMs);
  EXPECT_EQ(c.stats().drift_ns, 0u);
  EXPECT_EQ(c.stats().stalls, 0u);
}

TEST(EmulatedClock, IdleTimeWithNothingDueIsNoStall) {
  EmulatedClock c;
  EXPECT_EQ(c.tick(0, kNever), 0u);
  EXPECT_EQ(c.tick(5'000 * kMs, kNever), 5'000 * kMs);  // five idle seconds
  EXPECT_EQ(c.stats().stalls, 0u);
  EXPECT_EQ(c.stats().drift_ns, 0u);
}

TEST(EmulatedClock, LatenessUpToMaxLagIsCaughtUpNotGivenUp) {
  EmulatedClock c(1, {.max_lag = 1 * kMs, .stall = 100'000});
  c.tick(0, kNever);
  // A timer was due at 10 ms; the loop comes back 0.5 ms late.
  EXPECT_EQ(c.tick(10 * kMs + 500'000, 10 * kMs), 10 * kMs + 500'000);
  const ClockStats s = c.stats();
  EXPECT_EQ(s.stalls, 1u);
  EXPECT_EQ(s.stalled_ns, 500'000u);
  EXPECT_EQ(s.drift_ns, 0u);
}

TEST(EmulatedClock, ALongStallPausesTheClockAtMaxLagPastTheDueWork) {
  EmulatedClock c(1, {.max_lag = 1 * kMs, .stall = 1 * kMs});
  c.tick(0, kNever);
  // Due at 2 ms, the loop returns at 202 ms: 199 ms are given up.
  EXPECT_EQ(c.tick(202 * kMs, 2 * kMs), 3 * kMs);
  ClockStats s = c.stats();
  EXPECT_EQ(s.stalls, 1u);
  EXPECT_EQ(s.max_stall_ns, 200 * kMs);
  EXPECT_EQ(s.drift_ns, 199 * kMs);
  // Time runs on from there, and other threads read the same clock.
  EXPECT_EQ(c.tick(203 * kMs, 4 * kMs), 4 * kMs);
  EXPECT_EQ(c.peek(210 * kMs), 11 * kMs);
  // A second, shorter stall adds to the drift; the longest stays.
  EXPECT_EQ(c.tick(300 * kMs, 5 * kMs), 6 * kMs);
  s = c.stats();
  EXPECT_EQ(s.stalls, 2u);
  EXPECT_EQ(s.max_stall_ns, 200 * kMs);
  EXPECT_EQ(s.drift_ns, 199 * kMs + 95 * kMs);
  EXPECT_EQ(s.stalled_ns, 200 * kMs + 96 * kMs);
}

TEST(EmulatedClock, TimeBeforeTheLoopBeginsIsNeitherEmulatedNorDrift) {
  EmulatedClock c;
  // Building the fabric took 450 ms; the scheduler is at 10 us.
  c.begin(450 * kMs, 10'000);
  EXPECT_EQ(c.peek(450 * kMs), 10'000u);
  EXPECT_EQ(c.tick(450 * kMs + 5'000, 12'000), 15'000u);
  EXPECT_EQ(c.stats().stalls, 0u);
  EXPECT_EQ(c.stats().drift_ns, 0u);
}

TEST(EmulatedClock, NeverRunsBackwards) {
  EmulatedClock c;
  EXPECT_EQ(c.tick(10 * kMs, kNever), 10 * kMs);
  EXPECT_EQ(c.tick(9 * kMs, kNever), 10 * kMs);
}

// A timer that records when it fired and how far the ring work had got.
struct Probe {
  Timer t{[](Timer& self, Nanos now) {
    auto* p = reinterpret_cast<Probe*>(reinterpret_cast<char*>(&self) - offsetof(Probe, t));
    p->log->push_back({now, *p->work_done});
  }};
  std::vector<std::pair<Nanos, int>>* log;
  int* work_done;
};

TEST(RunDue, RingWorkRunsAfterEachDeadlineBeforeLaterTimersFire) {
  Scheduler s;
  std::vector<std::pair<Nanos, int>> log;
  int work = 0;
  Probe a{.log = &log, .work_done = &work}, b{.log = &log, .work_done = &work};
  s.arm(a.t, 10);
  s.arm(b.t, 30);
  // One late pass covers both deadlines: the work after the first comes
  // before the second fires, as if the loop had run at 10.
  EXPECT_EQ(run_due(s, 100, [&] { ++work; }), 2u);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0], (std::pair<Nanos, int>{10, 0}));
  EXPECT_EQ(log[1], (std::pair<Nanos, int>{30, 1}));
  EXPECT_EQ(work, 2);
  EXPECT_EQ(s.now(), 100u);
}

TEST(RunDue, WorkThatArmsAnEarlierTimerSeesItFireInOrder) {
  Scheduler s;
  std::vector<std::pair<Nanos, int>> log;
  int work = 0;
  Probe late{.log = &log, .work_done = &work}, ack{.log = &log, .work_done = &work};
  Probe first{.log = &log, .work_done = &work};
  s.arm(first.t, 10);
  s.arm(late.t, 50);
  // The work after 10 arms a timer at 20 (an ACK on the wire): it fires
  // before the one at 50 (a retransmission timer).
  run_due(s, 100, [&] {
    if (work++ == 0) s.arm(ack.t, 20);
  });
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[1].first, 20u);
  EXPECT_EQ(log[2].first, 50u);
}

}  // namespace
}  // namespace vf
