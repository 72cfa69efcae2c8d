#include "daemon/service/watchdog_policy.hpp"

#include <gtest/gtest.h>

namespace {

using vf::WatchdogGate;

TEST(WatchdogGate, FirstTickFeedsBeforeAnythingWasAsked) {
  WatchdogGate g;
  EXPECT_TRUE(g.may_feed(0));
}

// The bug this replaces: "feed while the count is 0" kept feeding an lcore
// that never ran its first task.
TEST(WatchdogGate, LcoreWedgedBeforeItsFirstTaskStarvesIt) {
  WatchdogGate g;
  g.posted(true);
  EXPECT_FALSE(g.may_feed(0));
  g.posted(true);
  EXPECT_FALSE(g.may_feed(0));
}

TEST(WatchdogGate, LcoreThatRunsEveryHeartbeatFeedsIt) {
  WatchdogGate g;
  for (uint64_t tick = 1; tick <= 5; ++tick) {
    g.posted(true);
    EXPECT_TRUE(g.may_feed(tick));
  }
}

TEST(WatchdogGate, LaggingLcoreMissesATickThenCatchesUp) {
  WatchdogGate g;
  g.posted(true);
  g.posted(true);
  EXPECT_FALSE(g.may_feed(1));
  EXPECT_TRUE(g.may_feed(2));
}

TEST(WatchdogGate, FullTaskQueueStarvesItUntilAPostGoesThrough) {
  WatchdogGate g;
  g.posted(true);
  g.posted(false);  // the lcore ran the first, but is not draining its queue
  EXPECT_FALSE(g.may_feed(1));
  g.posted(true);
  EXPECT_TRUE(g.may_feed(2));
}

}  // namespace
