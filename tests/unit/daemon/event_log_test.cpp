// The fabric event log behind `fabricctl events`: order, reading on from a
// sequence number, a bounded history that says how much a slow reader missed.
#include "daemon/telemetry/event_log.hpp"

#include <gtest/gtest.h>

namespace vf {
namespace {

std::vector<uint64_t> seqs(const EventLog::Since& s) {
  std::vector<uint64_t> out;
  for (const auto& e : s.events) out.push_back(e.seq);
  return out;
}

TEST(EventLog, ReadersGoOnFromWhatTheyLastSaw) {
  EventLog log;
  EXPECT_EQ(log.since(0).next, 0u);
  log.add("link", "link vib0 - ibsw0/1 DOWN", 100);
  log.add("port", "vib0 port 1 DOWN", 101);
  auto a = log.since(0);
  EXPECT_EQ(seqs(a), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(a.events[0].kind, "link");
  EXPECT_EQ(a.events[1].text, "vib0 port 1 DOWN");
  EXPECT_EQ(a.next, 2u);
  log.add("sm", "sweep 2", 102);
  EXPECT_EQ(seqs(log.since(a.next)), std::vector<uint64_t>{3});
  EXPECT_TRUE(log.since(3).events.empty());
  EXPECT_EQ(log.since(3).next, 3u);
  EXPECT_EQ(log.since(1000).next, 3u) << "a number from the future reads from now";
}

TEST(EventLog, ASlowReaderLearnsHowManyItMissed) {
  EventLog log(4);
  for (int i = 0; i < 10; ++i) log.add("port", "e" + std::to_string(i), i);
  const auto s = log.since(2);
  EXPECT_EQ(s.missed, 4u) << "3..6 rolled out; 7..10 are kept";
  EXPECT_EQ(seqs(s), (std::vector<uint64_t>{7, 8, 9, 10}));
  EXPECT_EQ(log.since(0, 2).events.size(), 2u) << "at most max per read";
  EXPECT_EQ(log.since(0, 2).next, 8u);
}

}  // namespace
}  // namespace vf
