#include "daemon/runtime/sysfs_counters.hpp"

#include "daemon/telemetry/counter_format.hpp"

namespace vf {

runtime::PortFiles sysfs_counter_files(const dp::HcaPortSnapshot& port, const engine::Counters& engine) {
  runtime::PortFiles f;
  add_counter_files(f, "counters", dp::kPortCounters, &port.port);
  add_counter_files(f, "hw_counters", engine::kEngineCounters, &engine);
  add_counter_files(f, "hw_counters", dp::kHcaPortCounters, &port);
  add_counter_files(f, "hw_counters", dp::kRxErrorCounters, &port);
  f["hw_counters/lifespan"] = std::to_string(kSysfsCounterPeriod.count()) + "\n";
  return f;
}

}  // namespace vf
