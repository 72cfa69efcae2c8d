// One egress queue entry: the frame plus what the port must remember about it
// until it leaves — which receive buffer it still occupies upstream inside the
// same switch (released when it goes on the wire, so credits/XON can follow)
// and when store-and-forward lets it go.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/fabric/ring.hpp"
#include "core/scheduler.hpp"

namespace vf::dp {

class Port;

struct QueuedFrame {
  rte_mbuf* m = nullptr;
  Port* origin = nullptr;  // ingress port holding receive buffer, or null (HCA-originated)
  Nanos eligible_at = 0;   // not before this time (switching latency)
  uint32_t bytes = 0;
  uint8_t origin_cls = 0;
};

using EgressQueue = Ring<QueuedFrame>;

}  // namespace vf::dp
