// systemd readiness/watchdog notifications (sd_notify(3)). Every call is a
// no-op returning false when NOTIFY_SOCKET is unset — fabricd started by hand,
// or by a test, behaves the same without systemd.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace vf {

class SdNotify {
 public:
  static bool enabled();                 // NOTIFY_SOCKET is set
  static bool ready();                   // READY=1: the vHCAs are usable
  static bool stopping();                // STOPPING=1
  static bool reloading();               // RELOADING=1
  static bool status(std::string_view text);  // STATUS=<one line shown by systemctl status>
  static bool watchdog();                // WATCHDOG=1: ping
  // The watchdog timeout systemd set for this process (WATCHDOG_USEC, and
  // WATCHDOG_PID when present must be us); ping at least every half of it.
  // nullopt when no watchdog is configured.
  static std::optional<std::chrono::microseconds> watchdog_interval();
};

}  // namespace vf
