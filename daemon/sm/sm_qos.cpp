#include "daemon/sm/sm_qos.hpp"

namespace vf::sm {

PortQos programmed_qos(const config::Qos& q) {
  PortQos p = default_port_qos(q.data_vls);
  if (q.sl2vl) p.sl2vl = *q.sl2vl;
  if (q.vlarb_high) p.vlarb_high = *q.vlarb_high;
  if (q.vlarb_low) p.vlarb_low = *q.vlarb_low;
  p.vlarb_high_limit = q.high_limit;
  return p;
}

}  // namespace vf::sm
