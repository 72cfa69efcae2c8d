// RC SEND: half round-trip latency and streaming bandwidth.
#pragma once

#include "tests/bench/bench_common.hpp"

namespace vf::bench {

// Each side's buffer is `depth` receive slots of kSendSlot bytes; receives
// always offer a whole slot, so one left over from a phase fits the next.
inline constexpr size_t kSendSlot = 65536;

double send_latency_us(VerbsSide& a, VerbsSide& b, size_t bytes, int iters);
double send_bandwidth_gbps(VerbsSide& a, VerbsSide& b, size_t bytes, int depth, int iters);

}  // namespace vf::bench
