#include "daemon/telemetry/pfc_json.hpp"

#include <cmath>

#include "daemon/telemetry/counter_format.hpp"

namespace vf {
namespace {

using nlohmann::json;

json priority_list(uint8_t mask) {
  json a = json::array();
  for (unsigned p = 0; p < dp::kNumPriorities; ++p)
    if (mask >> p & 1) a.push_back(p);
  return a;
}

bool any_counted(const dp::PfcPrioritySnapshot& s) {
  for (const CounterDef& d : dp::kPfcPriorityCounters)
    if (read_counter(d, &s)) return true;
  return false;
}

}  // namespace

std::string priority_counter_name(std::string_view name, unsigned prio) {
  const std::string tag = "prio" + std::to_string(prio) + "_";
  if (name.starts_with("rx_") || name.starts_with("tx_"))
    return std::string(name.substr(0, 3)) + tag + std::string(name.substr(3));
  return tag + std::string(name);
}

json pfc_counters_json(const dp::PfcSnapshot& s) {
  json out = json::object();
  for (unsigned p = 0; p < dp::kNumPriorities; ++p) {
    if (!(s.enable >> p & 1) && !any_counted(s.prio[p])) continue;
    for (const CounterDef& d : dp::kPfcPriorityCounters)
      out[priority_counter_name(d.name, p)] = read_counter(d, &s.prio[p]);
  }
  out["rx_mac_control_malformed"] = s.rx_malformed;
  out["rx_mac_control_unsupported"] = s.rx_unsupported;
  out["tx_pfc_unsent"] = s.tx_unsent;
  return out;
}

json pfc_state_json(const dp::PfcSnapshot& s) {
  json prios = json::array();
  for (unsigned p = 0; p < dp::kNumPriorities; ++p) {
    const bool lossless = s.enable >> p & 1;
    json one = {{"priority", p}, {"lossless", lossless}};
    if (lossless) {
      one["xoff_bytes"] = s.pg[p].xoff;
      one["xon_bytes"] = s.pg[p].xon;
      one["headroom_bytes"] = s.pg[p].headroom;
    }
    put_counters(one, dp::kPfcPriorityCounters, &s.prio[p]);
    prios.push_back(std::move(one));
  }
  json thresholds = {{"type", s.dynamic ? "dynamic" : "static"}, {"reserved_bytes", s.reserved_bytes}};
  if (s.dynamic) {
    thresholds["alpha"] = std::ldexp(1.0, s.alpha_log2);
    thresholds["limit_bytes"] = s.dynamic_limit;
  }
  return {{"enable", priority_list(s.enable)},
          {"thresholds", std::move(thresholds)},
          {"paused", priority_list(s.paused)},
          {"xoff", priority_list(s.xoff)},
          {"stormed", priority_list(s.stormed)},
          {"rx_mac_control_malformed", s.rx_malformed},
          {"rx_mac_control_unsupported", s.rx_unsupported},
          {"tx_pfc_unsent", s.tx_unsent},
          {"priorities", std::move(prios)}};
}

}  // namespace vf
