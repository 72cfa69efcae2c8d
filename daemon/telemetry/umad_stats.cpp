#include "daemon/telemetry/umad_stats.hpp"

namespace vf {
namespace {
constexpr CounterDef kUmadDefs[] = {
    VF_COUNTER(UmadStats, sent, "mad_sent", "mad_sent", kPackets, "MADs apps sent through the vHCA's umad port"),
    VF_COUNTER(UmadStats, answered, "mad_answered", "mad_answered", kPackets, "responses delivered to apps' agents"),
    VF_COUNTER(UmadStats, timeouts, "mad_timeouts", "mad_timeouts", kPackets,
               "requests returned to the app with ETIMEDOUT: no response within its timeout"),
    VF_COUNTER(UmadStats, rejected, "mad_rejected", "mad_rejected", kEvents,
               "malformed umad messages; each closed its connection"),
    VF_COUNTER(UmadStats, overflow, "mad_overflow", "mad_overflow", kPackets,
               "MADs lost to limits: too many requests outstanding, or an app that does not read"),
    VF_COUNTER(UmadStats, unroutable, "mad_unroutable", "mad_unroutable", kPackets,
               "MADs with no path to their destination (a link down, no LFT entry) or none back"),
    VF_COUNTER(UmadStats, no_agent, "mad_no_agent", "mad_no_agent", kPackets,
               "MADs of a class nobody serves where they arrived (an SA query, SMPs on Ethernet)"),
    VF_COUNTER(UmadStats, refused, "mad_refused", "mad_refused", kPackets,
               "MADs an agent refused without a response (SubnSet without the SM's M_Key)"),
};
static_assert(valid_counter_table<UmadStats>(kUmadDefs));
}  // namespace

const CounterTable kUmadCounters{kUmadDefs};

}  // namespace vf
