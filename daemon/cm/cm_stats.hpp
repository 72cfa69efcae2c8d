// The CM messages each vHCA port sent and received (what a capture of QP1
// would show of the connections made through rdma_cm), for fabricctl hca
// list and /metrics (kCmCounters).
#pragma once

#include <cstdint>

#include "core/counter_def.hpp"

namespace vf::cm {

enum class MsgType : uint8_t;

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
};

void count(CmStats& s, MsgType t, bool sent);

extern const CounterTable kCmCounters;

}  // namespace vf::cm
