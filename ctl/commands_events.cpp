// `fabricctl events [--history]`: what happens to the fabric, as it happens
// (ip monitor's idea): ports, links, subnet manager sweeps, credit-loop
// deadlocks, captures, counter resets. --json prints one object per line.
#include <chrono>
#include <ctime>
#include <iomanip>
#include <thread>

#include "ctl/commands_common.hpp"
#include "ctl/interrupt.hpp"

namespace vf::ctl {
namespace {

// "2026-12-05T03:20:01.123456" in local time.
std::string when(int64_t ns) {
  const std::time_t secs = std::time_t(ns / 1'000'000'000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char b[64];
  const size_t n = std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(b + n, sizeof b - n, ".%06lld", (long long)(ns % 1'000'000'000 / 1000));
  return b;
}

}  // namespace

int cmd_events(const Globals& g, bool history, uint64_t count) {
  return guarded([&] {
    catch_interrupts();
    json args = json::object();
    if (history) args["history"] = true;
    uint64_t shown = 0;
    while (!interrupted()) {
      Client c(g.socket(), g.timeout);
      const json r = c.call("events", args);
      if (r.value("missed", uint64_t(0)) && !g.json)
        std::cout << "(" << r["missed"].get<uint64_t>() << " events missed: fabricd keeps the last 1024)\n";
      for (const json& e : r.value("events", json::array())) {
        if (g.json) std::cout << e.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
        else
          std::cout << when(e.value("time_ns", int64_t(0))) << ' ' << std::left << std::setw(8)
                    << cell(e.value("kind", ""), 12) << ' ' << cell(e.value("text", ""), 400) << '\n';
        if (count && ++shown >= count) return 0;
      }
      std::cout << std::flush;
      if (!std::cout) return 0;  // the reader went away
      args = {{"since", r.value("next", uint64_t(0))}};
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return 0;
  });
}

}  // namespace vf::ctl
