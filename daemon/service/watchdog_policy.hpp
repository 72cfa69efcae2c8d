// When fabricd may tell systemd it is alive (WATCHDOG=1): only when the
// dataplane lcore has run every heartbeat task the control thread posted to
// it, and the last one could be posted at all. Counting posted against run
// (rather than "did the count move") means an lcore that wedges before
// running even its first task starves the watchdog on the next tick; a full
// task queue (an lcore not draining it) starves it too. An lcore that is
// merely asleep runs the task the post wakes it for.
#pragma once

#include <cstdint>

namespace vf {

class WatchdogGate {
 public:
  // `ran`: how many heartbeat tasks the lcore has executed. Feed now?
  bool may_feed(uint64_t ran) const { return ran == posted_ && !queue_was_full_; }
  // After each tick's attempt to queue the next heartbeat task.
  void posted(bool queued) {
    queue_was_full_ = !queued;
    if (queued) ++posted_;
  }

 private:
  uint64_t posted_ = 0;
  bool queue_was_full_ = false;
};

}  // namespace vf
