// What a vHCA's event sink (event_sink.hpp) delivered to its apps' pipes and
// what it had to drop, as plain numbers: the sink counts into this struct on
// the lcore, the lcore copies it, the control thread formats the copy through
// kEventSinkCounters.
#pragma once

#include <cstdint>

#include "core/counter_def.hpp"

namespace vf {

struct EventSinkStats {
  uint64_t comp_events = 0, async_events = 0;
  uint64_t dropped = 0;  // pipe full, closed by the app, or no such object
  uint64_t withdrawn = 0;  // unread when their object was destroyed (uverbs discards them)
};

extern const CounterTable kEventSinkCounters;

}  // namespace vf
