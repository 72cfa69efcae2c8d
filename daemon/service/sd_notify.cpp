#include "daemon/service/sd_notify.hpp"

#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <string>

namespace vf {
namespace {
bool send(const std::string& msg) {
  if (!SdNotify::enabled()) return false;
  return sd_notify(0, msg.c_str()) > 0;
}
}  // namespace

bool SdNotify::enabled() {
  const char* s = std::getenv("NOTIFY_SOCKET");
  return s && *s;
}

bool SdNotify::ready() { return send("READY=1"); }
bool SdNotify::stopping() { return send("STOPPING=1"); }
bool SdNotify::reloading() { return send("RELOADING=1"); }
bool SdNotify::watchdog() { return send("WATCHDOG=1"); }

bool SdNotify::status(std::string_view text) {
  // A newline would start another assignment (e.g. "READY=1") in the same
  // datagram, so the text is flattened to one line; systemd shows a line anyway.
  std::string line = "STATUS=";
  for (char c : text.substr(0, 1024)) line.push_back(c == '\n' || c == '\r' || c == '\0' ? ' ' : c);
  return send(line);
}

std::optional<std::chrono::microseconds> SdNotify::watchdog_interval() {
  uint64_t usec = 0;
  // unset_environment=0: children (and later calls) still see the variables.
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec);
}

}  // namespace vf
