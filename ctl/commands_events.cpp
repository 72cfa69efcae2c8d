// `fabricctl events [--history]`: what happens to the fabric, as it happens
// (ip monitor's idea): ports, links, subnet manager sweeps, credit-loop
// deadlocks, captures, counter resets. --json prints one object per line.
#include <chrono>
#include <ctime>
#include <iomanip>
#include <memory>
#include <thread>

#include "ctl/commands_common.hpp"
#include "ctl/interrupt.hpp"
#include "ctl/subcommands.hpp"

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

namespace {
struct EventsArgs {
  bool history = false;
  uint64_t count = 0;
};
}  // namespace

void add_events_commands(CLI::App& app, Dispatch& d) {
  auto events_args = std::make_shared<EventsArgs>();
  auto* events = app.add_subcommand("events", "Follow what happens to the fabric: ports, links, sweeps, deadlocks.");
  events->add_flag("--history", events_args->history, "first print what fabricd kept (its last 1024 events)");
  events->add_option("-c,--count", events_args->count, "stop after N events")->type_name("N");
  events->footer(
      "Like `ip monitor`: one line per event as it happens, until Ctrl-C -- local time, kind, and\n"
      "what happened in plain words. Kinds:\n"
      "  port      a vHCA's port changed state (ACTIVE, DOWN, INIT...), with its PhysState\n"
      "  link      a link went down or up, was impaired or cleared, or got a new rate or delay\n"
      "  sm        an InfiniBand subnet manager sweep: links up, LFT entries changed, ports\n"
      "            activated, switch/vHCA pairs left without a route\n"
      "  deadlock  a credit-loop deadlock the dataplane found (see docs/operator-guide.md)\n"
      "  pfc-storm a switch or vHCA port's PFC watchdog declared a storm, or saw it end\n"
      "  capture   a capture started or ended, with its counts\n"
      "  counters  counters were cleared\n"
      "  qos       a port's QoS was set (fabricctl qos set: VL record, ETS or DCQCN)\n"
      "  daemon    fabricd started, or reloaded its config (what it applied, what needs a restart)\n"
      "--json prints one JSON object per line: {seq, time_ns, kind, text}.\n\n"
      "EXAMPLES\n"
      "  fabricctl events\n"
      "  fabricctl events --history --json | jq -r .text");
  set_handler(events, d, [events_args](const Globals& g) {
    return cmd_events(g, events_args->history, events_args->count);
  });
}

}  // namespace vf::ctl
