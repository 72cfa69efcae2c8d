#include "daemon/sm_qos.hpp"

namespace vf::sm {

namespace {
VlArbTable table(const std::vector<config::Qos::Entry>& e) {
  VlArbTable t;
  for (const auto& x : e) t.entries[t.size++] = {x.vl, x.weight};
  return t;
}
}  // namespace

PortQos programmed_qos(const config::Qos& q) {
  PortQos p = default_port_qos(q.data_vls);
  if (q.sl2vl) p.sl2vl = *q.sl2vl;
  if (q.vlarb_high) p.vlarb_high = table(*q.vlarb_high);
  if (q.vlarb_low) p.vlarb_low = table(*q.vlarb_low);
  p.vlarb_high_limit = q.high_limit;
  return p;
}

}  // namespace vf::sm
