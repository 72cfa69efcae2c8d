// One-sided RC operations between two sides whose QPs were created with
// sq_sig_all = 0 and whose MRs allow remote write/read. Each side's buffer is
// two regions of `region` bytes: [0, region) is what the peer writes into
// and reads from, [region, 2*region) is the local source/sink.
#pragma once

#include "tests/bench/bench_common.hpp"

namespace vf::bench {

// ib_write_lat style: a writes `bytes` into b, b sees the last byte change
// and writes back; half the round trip, in microseconds.
double write_latency_us(VerbsSide& a, VerbsSide& b, size_t region, size_t bytes, int iters);
// ib_read_lat style: one READ at a time; the whole round trip.
double read_latency_us(VerbsSide& a, VerbsSide& b, size_t region, size_t bytes, int iters);
// `depth` operations in flight, every one signalled.
double rdma_bandwidth_gbps(VerbsSide& a, VerbsSide& b, ibv_wr_opcode op, size_t region,
                           size_t bytes, int depth, int iters);
// 8-byte WRITEs posted as lists of `batch` chained WRs, the last one
// signalled; millions of messages per second.
double write_msg_rate_mps(VerbsSide& a, VerbsSide& b, size_t region, int batch, int depth,
                          long msgs);

}  // namespace vf::bench
