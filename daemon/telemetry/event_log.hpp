// What happened to the fabric, in order, for `fabricctl events` (ip monitor's
// idea): ports going up and down, links taken down or impaired, subnet
// manager sweeps, credit-loop deadlocks, captures, counter resets. A bounded
// log on the control thread: readers ask for what came after the sequence
// number they last saw, and learn how many they missed when it rolled over.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace vf {

struct FabricEvent {
  uint64_t seq;     // 1, 2, ... in order of arrival
  int64_t time_ns;  // wall clock (ns since 1970)
  std::string kind;  // "port", "link", "sm", "deadlock", "pfc-storm", "capture", "counters", "qos", "daemon"
  std::string text;  // one line, plain words
};

class EventLog {
 public:
  explicit EventLog(size_t capacity = 1024) : capacity_(capacity) {}

  void add(std::string kind, std::string text, int64_t time_ns);

  struct Since {
    std::vector<FabricEvent> events;  // after `seq`, oldest first, at most `max`
    uint64_t missed = 0;              // events after `seq` that rolled out before this read
    uint64_t next = 0;                // pass as `seq` next time
  };
  Since since(uint64_t seq, size_t max = 256) const;
  uint64_t last_seq() const { return next_seq_ - 1; }

 private:
  size_t capacity_;
  std::deque<FabricEvent> log_;
  uint64_t next_seq_ = 1;
};

}  // namespace vf
