// The performance management agent of every node (IBA 16.1): ClassPortInfo,
// PortCounters and PortCountersExtended read from the dataplane's port
// counters -- the numbers fabricctl counters and sysfs show -- and Set
// (perfquery -R) clearing them. PortXmitWait counts nanoseconds of emulated
// time, as sysfs and fabricctl do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "daemon/mad/mad.hpp"
#include "daemon/mad/model.hpp"
#include "daemon/mad/sma.hpp"

namespace vf::mad {

// What a PMA Set asks the owner of the counters to do after the response.
struct PmaReset {
  size_t node = 0;
  uint8_t port = 0;
};

// Turns the PMA request `m` that node `node` received into its response, in
// place. A Set that clears counters fills `reset`; the caller clears them.
Verdict pma_process(const MadModel& model, size_t node, Mad& m, std::optional<PmaReset>& reset);

}  // namespace vf::mad
