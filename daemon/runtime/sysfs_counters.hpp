// A vHCA's counters as the kernel's sysfs shows an HCA's: ports/1/counters/
// holds the IBA PMA PortCounters (port_xmit_data, port_rcv_data in 4-octet
// words, port_xmit_packets, port_rcv_packets, port_xmit_discards,
// port_rcv_errors, ...), ports/1/hw_counters/ the driver's own (the engine's
// rxe-named counters, the HCA port's drops and receive errors) plus
// `lifespan`, the ms between refreshes. Rendered on the control thread from
// snapshots the lcore copied; RuntimeTree::update_counters writes them.
#pragma once

#include <chrono>

#include "daemon/runtime/port_sysfs.hpp"
#include "dataplane/fabric/hca_port.hpp"
#include "device/engine/hca.hpp"

namespace vf {

// How often fabricd refreshes the files (hw_counters/lifespan says so).
inline constexpr std::chrono::milliseconds kSysfsCounterPeriod{1000};

runtime::PortFiles sysfs_counter_files(const dp::HcaPortSnapshot& port, const engine::Counters& engine);

}  // namespace vf
