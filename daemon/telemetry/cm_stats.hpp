// The CM messages each vHCA port sent and received (what a capture of QP1
// would show of the connections made through rdma_cm), for fabricctl hca
// list and /metrics (kCmCounters), and what the CM lost.
#pragma once

#include <cstdint>

#include "core/counter_def.hpp"

namespace vf::cm {

struct CmStats {
  uint64_t req_sent = 0, req_received = 0;
  uint64_t mra_sent = 0, mra_received = 0;
  uint64_t rej_sent = 0, rej_received = 0;
  uint64_t rep_sent = 0, rep_received = 0;
  uint64_t rtu_sent = 0, rtu_received = 0;
  uint64_t dreq_sent = 0, dreq_received = 0;
  uint64_t drep_sent = 0, drep_received = 0;
  uint64_t sidr_req_sent = 0, sidr_req_received = 0;
  uint64_t sidr_rep_sent = 0, sidr_rep_received = 0;
  // What was lost on the way, so a stalled handshake can be explained:
  uint64_t mad_unsent = 0;      // CM MADs that could not leave the port (no room, no mbuf)
  uint64_t mad_dropped = 0;     // MADs on QP1 that were no CM message of a known sender
  uint64_t events_dropped = 0;  // events for an id on the port whose channel held too many unfetched
};

extern const CounterTable kCmCounters;

}  // namespace vf::cm
