// `fabricctl qos show|set` on an Ethernet port, in mlnx_qos's words: trust,
// the DSCP map, the PFC enable vector and pause state, each lossless group's
// thresholds and the 802.1Qbb headroom model behind them, ETS (prio_tc, tsa,
// tc_bw) and on a RoCE vHCA its DCQCN parameters. `qos set` changes ETS on
// any Ethernet port and DCQCN on a vHCA at run time, as mlnx_qos and the
// mlx5 ecn sysfs knobs do; trust, the DSCP map and PFC stay the config's.
#pragma once

#include <nlohmann/json.hpp>

namespace vf {
namespace control { class Reply; }
class DaemonState;
struct PortRef;

void eth_qos_show(DaemonState& d, const PortRef& port, control::Reply reply);
void eth_qos_set(DaemonState& d, const PortRef& port, const nlohmann::json& args, control::Reply reply);

}  // namespace vf
