#include "daemon/config/pfc_watchdog_check.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "daemon/config/units.hpp"

namespace vf {

std::string pfc_watchdog_warning(const config::Fabric& f) {
  const config::EthQos& q = f.eth_qos;
  if (f.link_layer != config::LinkLayer::Ethernet || !q.pfc || !q.pfc_watchdog_ns || f.links.empty()) return {};
  uint64_t slowest = UINT64_MAX;
  for (const auto& l : f.links) slowest = std::min(slowest, l.rate_bps);
  // A pause lasts pause_quanta x 512 bit times; XOFF is refreshed at half of it.
  const uint64_t refresh_ns = uint64_t(double(q.pause_quanta) * 512 * 1e9 / double(slowest) / 2);
  if (q.pfc_watchdog_ns > refresh_ns) return {};
  return fmt::format(
      "fabric {}: pfc_watchdog {} is not longer than the XOFF refresh interval on its slowest link ({} at "
      "{}: half of {} pause quanta), so a port held in XOFF never sees one unbroken pause and the watchdog "
      "declares storms and recovers over and over; use more than {}, e.g. 100ms",
      f.name, units::format_delay(q.pfc_watchdog_ns), units::format_delay(refresh_ns), units::format_rate(slowest),
      q.pause_quanta, units::format_delay(refresh_ns));
}

}  // namespace vf
