// The daemon's control commands (status, hca.list, env: read-only;
// hca.port.set: mutating), as documented in ctl/control-api.md. Data owned by the lcore is read there and answered
// asynchronously, so the control thread never touches engine state.
#pragma once

namespace boost::asio {
class io_context;
}

namespace vf {
namespace control { class ControlServer; }
class DaemonState;

// Every command of the control API (main hands this to DaemonState).
void register_all_commands(control::ControlServer& server, DaemonState& daemon, boost::asio::io_context& io);

void register_control_commands(control::ControlServer& server, DaemonState& daemon);
// link.set, routes (fabric_commands.cpp).
void register_fabric_commands(control::ControlServer& server, DaemonState& daemon);
// counters, counters.reset (counter_commands.cpp).
void register_counter_commands(control::ControlServer& server, DaemonState& daemon);
// qp.list (qp_list.cpp).
void register_qp_commands(control::ControlServer& server, DaemonState& daemon);
// cm.list (cm_commands.cpp)
void register_cm_commands(control::ControlServer& server, DaemonState& daemon);
// capture.start, capture.read, capture.stop (capture_commands.cpp).
void register_capture_commands(control::ControlServer& server, DaemonState& daemon, boost::asio::io_context& io);
// qos.show, qos.set (qos_commands.cpp).
void register_qos_commands(control::ControlServer& server, DaemonState& daemon);
// topology.show (topology_show.cpp).
void register_topology_commands(control::ControlServer& server, DaemonState& daemon);

}  // namespace vf
