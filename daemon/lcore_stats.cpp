#include "daemon/lcore_stats.hpp"

namespace vf {
namespace {
constexpr CounterDef kLcoreDefs[] = {
    VF_COUNTER(LcoreSnapshot, loops, "loops", "lcore_loops", kEvents,
               "passes of the dataplane lcore over its tasks and pollers"),
    VF_COUNTER(LcoreSnapshot, sleeps, "sleeps", "lcore_sleeps", kEvents,
               "times the lcore slept because nothing was ready (idle: sleeps ~ wakeups)"),
    VF_COUNTER(LcoreSnapshot, wakeups, "wakeups", "lcore_wakeups", kEvents,
               "times a doorbell, a control task or a timer woke the lcore"),
    VF_COUNTER(LcoreSnapshot, tasks, "tasks", "lcore_tasks", kEvents,
               "control-thread tasks the lcore ran"),
    VF_GAUGE(LcoreSnapshot, emulated_ns, "emulated_time_ns", "emulated_time_ns", kNanoseconds,
             "emulated time since fabricd started, when these counters were read: divide counter "
             "deltas by its delta for rates in emulated time"),
};
static_assert(valid_counter_table<LcoreSnapshot>(kLcoreDefs));
}  // namespace

const CounterTable kLcoreCounters{kLcoreDefs};

}  // namespace vf
