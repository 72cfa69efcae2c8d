// The VL record the subnet manager programs into every port of an IB fabric
// from its config's qos: section (operational VLs, SL→VL, VL arbitration).
#pragma once

#include "core/port_qos.hpp"
#include "daemon/config/config.hpp"

namespace vf::sm {

// Defaults for what the section leaves out are default_port_qos()'s.
PortQos programmed_qos(const config::Qos& q);

}  // namespace vf::sm
