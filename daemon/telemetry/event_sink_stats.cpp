#include "daemon/telemetry/event_sink_stats.hpp"

namespace vf {
namespace {
constexpr CounterDef kEventSinkDefs[] = {
    VF_COUNTER(EventSinkStats, comp_events, "comp_events", "comp_events", kEvents,
               "completion events written to apps' completion channels"),
    VF_COUNTER(EventSinkStats, async_events, "async_events", "async_events", kEvents,
               "asynchronous events (QP, CQ, SRQ, port, device) written to apps' async fds"),
    VF_COUNTER(EventSinkStats, dropped, "events_dropped", "events_dropped", kEvents,
               "events not delivered: the app's pipe was full or closed, or the object was gone"),
    VF_COUNTER(EventSinkStats, withdrawn, "events_withdrawn", "events_withdrawn", kEvents,
               "events still unread when the app destroyed their QP, CQ or SRQ, taken back "
               "from its pipe as uverbs discards them"),
};
static_assert(valid_counter_table<EventSinkStats>(kEventSinkDefs));
}  // namespace

const CounterTable kEventSinkCounters{kEventSinkDefs};

}  // namespace vf
