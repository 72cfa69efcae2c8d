// `routes SWITCH` on an Ethernet switch: its filtering database and bridge
// counters (fdb_commands.cpp); IB switches answer with their LFT
// (fabric_commands.cpp).
#pragma once

#include <cstddef>
#include <string>

namespace vf {
namespace control { class Reply; }
class DaemonState;

// Answers `reply` from the lcore with fabric `fabric`'s switch `name`.
void ethernet_routes(DaemonState& d, std::size_t fabric, const std::string& name, control::Reply reply);

}  // namespace vf
