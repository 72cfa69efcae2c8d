#include "daemon/telemetry/lcore_stats.hpp"

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
    VF_COUNTER(LcoreSnapshot, stalls, "stalls", "lcore_stalls", kEvents,
               "passes that found due work more than 1 ms (emulated) late: the lcore did not run "
               "(preempted, RT-throttled, stopped)"),
    VF_COUNTER(LcoreSnapshot, stalled_ns, "stalled_ns", "lcore_stalled_ns", kNanoseconds,
               "lateness of those passes, summed (emulated ns)"),
    VF_GAUGE(LcoreSnapshot, max_stall_ns, "max_stall_ns", "lcore_max_stall_ns", kNanoseconds,
             "the longest stall since fabricd started (emulated ns)"),
    VF_COUNTER(LcoreSnapshot, drift_ns, "drift_ns", "lcore_drift_ns", kNanoseconds,
               "emulated time given up to stalls beyond 1 ms: emulated time is this far behind real "
               "time / dilation, and the fabric paused for it instead of inventing its events"),
};
static_assert(valid_counter_table<LcoreSnapshot>(kLcoreDefs));
}  // namespace

const CounterTable kLcoreCounters{kLcoreDefs};

}  // namespace vf
