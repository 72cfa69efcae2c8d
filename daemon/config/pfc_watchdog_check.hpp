// A PFC watchdog shorter than the XOFF refresh interval cannot work: a port
// holding XOFF refreshes it every half pause time, and a watchdog that must
// see one unbroken pause longer than itself then declares storms and
// recovers between refreshes, over and over. Valid config, worth a warning
// (fabricctl config check, and fabricd's journal at start).
#pragma once

#include <string>

#include "daemon/config/config.hpp"

namespace vf {

// Empty when `f` has no watchdog, no PFC, or a long enough watchdog.
std::string pfc_watchdog_warning(const config::Fabric& f);

}  // namespace vf
