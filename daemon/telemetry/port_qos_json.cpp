#include "daemon/telemetry/port_qos_json.hpp"

namespace vf {
namespace {

nlohmann::json vlarb_json(const VlArbTable& t) {
  nlohmann::json out = nlohmann::json::array();
  for (unsigned i = 0; i < t.size && i < kVlArbCap; ++i)
    out.push_back({{"vl", t.entries[i].vl}, {"weight", t.entries[i].weight}});
  return out;
}

}  // namespace

nlohmann::json port_qos_json(const PortQos& q) {
  return {
      {"operational_vls", q.data_vls},
      {"sl2vl", q.sl2vl},
      {"vl_arbitration",
       {{"high", vlarb_json(q.vlarb_high)}, {"low", vlarb_json(q.vlarb_low)}, {"high_limit", q.vlarb_high_limit}}},
  };
}

}  // namespace vf
