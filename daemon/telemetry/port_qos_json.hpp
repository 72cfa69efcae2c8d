// A port's VL record (core/port_qos.hpp) as fabricctl shows it, for HCA and
// switch ports alike. Off the lcore: formats a copy.
#pragma once

#include <nlohmann/json.hpp>

#include "core/port_qos.hpp"

namespace vf {

// {"operational_vls": n, "sl2vl": [16 VLs by SL],
//  "vl_arbitration": {"high": [{"vl", "weight"}...], "low": [...], "high_limit": n}}
nlohmann::json port_qos_json(const PortQos& q);

}  // namespace vf
