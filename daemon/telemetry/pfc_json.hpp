// A port's PFC (dp::PfcSnapshot) as fabricctl shows it: the per-priority
// counters under the names mlx5's ethtool statistics use (rx_prio3_pause,
// tx_prio3_pause_duration, ...), and the port's PFC state and thresholds.
// Off the lcore: formats a copy.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dataplane/fabric/pfc.hpp"

namespace vf {

// "rx_pause" of priority 3 -> "rx_prio3_pause"; "headroom_overflow" ->
// "prio3_headroom_overflow".
std::string priority_counter_name(std::string_view name, unsigned prio);

// Flat {"rx_prio3_pause": n, ...} for the lossless priorities and any other
// priority with a non-zero counter, plus the port's MAC Control errors.
nlohmann::json pfc_counters_json(const dp::PfcSnapshot& s);

// {"enable": [3], "paused": [...], "xoff": [...], "stormed": [...],
//  "priorities": [{"priority", "lossless", "xoff_bytes", "xon_bytes",
//  "headroom_bytes", <counters>}...]}
nlohmann::json pfc_state_json(const dp::PfcSnapshot& s);

}  // namespace vf
