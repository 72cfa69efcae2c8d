// `fabricctl counters [NAME] [-w SECONDS] [--delta] [--count N]` and
// `counters reset [NAME]`. Several ports print as one table row each (the
// counters an operator scans first); one port prints every counter, one per
// line in perfquery's style. --delta turns two samples into rates per second
// of emulated time (the daemon's clock, which link rates are in); -w repeats
// like watch(1).
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <thread>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

namespace vf::ctl {
namespace {

struct Sample {
  double clock_s = 0;  // the dataplane's clock
  json reply;
};

Sample fetch(Client& c, const std::string& name) {
  json args = json::object();
  if (!name.empty()) args["name"] = name;
  Sample s;
  s.reply = c.call("counters", args);
  s.clock_s = s.reply.value("clock_ns", 0.0) / 1e9;
  return s;
}

// A counter's value, or its rate per second since `before` (absent: the
// value). A count that went down was reset in between: it counts from 0.
struct Rate {
  const json* before = nullptr;  // the same object in the earlier sample
  double seconds = 0;

  double operator()(const json& obj, const char* key) const {
    const double now = obj.value(key, 0.0);
    if (!before) return now;
    const double then = before->value(key, 0.0);
    const double d = now >= then ? now - then : now;
    return seconds > 0 ? d / seconds : 0;
  }
};

std::string num(double v, bool rate) {
  char b[40];
  if (!rate) std::snprintf(b, sizeof b, "%.0f", v);
  else if (v >= 100 || v == 0) std::snprintf(b, sizeof b, "%.0f", v);
  else std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

std::string gbps(double words_per_s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", words_per_s * 32 / 1e9);
  return b;
}

const json* find_port(const json& sample, const std::string& port) {
  if (!sample.contains("ports") || !sample["ports"].is_array()) return nullptr;
  for (const json& p : sample["ports"])
    if (p.value("port", "") == port) return &p;
  return nullptr;
}

const json* section(const json* port, const char* key) {
  return port && port->contains(key) ? &(*port)[key] : nullptr;
}

void print_table(const Sample& s, const Sample* prev) {
  const bool delta = prev != nullptr;
  Table t(delta ? std::vector<std::string>{"PORT", "XMIT_PPS", "RCV_PPS", "XMIT_GBPS", "RCV_GBPS", "DISCARDS/S",
                                           "ERRORS/S", "WAIT_%"}
                : std::vector<std::string>{"PORT", "XMIT_PKTS", "RCV_PKTS", "XMIT_DATA", "RCV_DATA", "XMIT_DISCARDS",
                                           "RCV_ERRORS", "WAIT_US"});
  for (const json& p : s.reply.value("ports", json::array())) {
    const json k = p.value("counters", json::object());
    Rate r{delta ? section(find_port(prev->reply, p.value("port", "")), "counters") : nullptr,
           delta ? s.clock_s - prev->clock_s : 0};
    const double errors = r(k, "PortRcvErrors") + r(k, "PortRcvSwitchRelayErrors") + r(k, "PortRcvDiscards");
    if (delta)
      t.add({cell(text(p, "port")), num(r(k, "PortXmitPkts"), true), num(r(k, "PortRcvPkts"), true),
             gbps(r(k, "PortXmitData")), gbps(r(k, "PortRcvData")), num(r(k, "PortXmitDiscards"), true),
             num(errors, true), num(r(k, "PortXmitWait") / 1e7, true)});  // ns per s -> %
    else
      t.add({cell(text(p, "port")), text(k, "PortXmitPkts"), text(k, "PortRcvPkts"), text(k, "PortXmitData"),
             text(k, "PortRcvData"), text(k, "PortXmitDiscards"), num(errors, false),
             num(k.value("PortXmitWait", 0.0) / 1e3, false)});
  }
  t.print(std::cout);
}

// perfquery's layout: "Name:.........value", dots to a fixed column.
void print_list(const json& obj, const json* before, double seconds, const char* title) {
  if (!obj.is_object() || obj.empty()) return;
  std::cout << "# " << title << (before ? " (per second)" : "") << '\n';
  const Rate r{before, seconds};
  for (const auto& [key, value] : obj.items()) {
    if (!value.is_number()) continue;
    std::string line = key + ":";
    if (line.size() < 40) line.append(40 - line.size(), '.');
    std::cout << line << num(r(obj, key.c_str()), before != nullptr) << '\n';
  }
}

void print_port(const json& p, const json* before, double seconds) {
  std::cout << "port " << cell(text(p, "port")) << " (fabric " << cell(text(p, "fabric")) << ")\n";
  print_list(p.value("counters", json::object()), section(before, "counters"), seconds, "PMA PortCounters");
  print_list(p.value("pfc", json::object()), section(before, "pfc"), seconds, "PFC (802.1Qbb) per priority");
  print_list(p.value("ecn", json::object()), section(before, "ecn"), seconds, "ECN marking per priority");
  print_list(p.value("hca_port", json::object()), section(before, "hca_port"), seconds, "vHCA port");
  print_list(p.value("hw_counters", json::object()), section(before, "hw_counters"), seconds,
             "hw_counters (not cleared by counters reset)");
  Table t({"CLASS", "XMIT_PKTS", "XMIT_BYTES", "RCV_PKTS", "DISCARDS", "WAIT_US", "QUEUED", "MAX_QUEUED"});
  const json classes = p.value("classes", json::array());
  const json* old_classes = section(before, "classes");
  for (size_t i = 0; i < classes.size(); ++i) {
    const json& c = classes[i];
    const json* oc = old_classes && i < old_classes->size() ? &(*old_classes)[i] : nullptr;
    const Rate r{oc, seconds};
    if (r(c, "xmit_pkts") == 0 && r(c, "rcv_pkts") == 0 && c.value("depth_pkts", 0) == 0 &&
        r(c, "xmit_discards") == 0)
      continue;  // classes that carried nothing
    const bool rate = oc != nullptr;
    t.add({text(c, "class"), num(r(c, "xmit_pkts"), rate), num(r(c, "xmit_bytes"), rate), num(r(c, "rcv_pkts"), rate),
           num(r(c, "xmit_discards"), rate), num(r(c, "xmit_wait") / 1e3, rate), text(c, "depth_pkts"),
           text(c, "max_depth_pkts")});
  }
  if (!t.empty()) {
    std::cout << "# per class" << (before ? " (per second; WAIT_US: microseconds waited per second)" : "") << '\n';
    t.print(std::cout);
  }
}

void print_sample(const Sample& s, const Sample* prev) {
  const json ports = s.reply.value("ports", json::array());
  if (ports.size() != 1) return print_table(s, prev);
  const json* before = prev ? find_port(prev->reply, ports[0].value("port", "")) : nullptr;
  print_port(ports[0], before, prev ? s.clock_s - prev->clock_s : 0);
}

void print_json_sample(const Sample& s, const Sample* prev) {
  if (!prev) return print_json(s.reply);
  json out = s.reply;
  out["interval_ns"] = (s.clock_s - prev->clock_s) * 1e9;
  out["previous"] = prev->reply;
  print_json(out);
}

// watch(1)'s header: on a terminal the screen is cleared first.
void print_header(const CountersOptions& o) {
  if (isatty(STDOUT_FILENO)) std::cout << "\033[H\033[2J";
  const std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof when, "%a %b %e %H:%M:%S %Y", std::localtime(&now));
  std::cout << "Every " << o.watch_s << "s: fabricctl counters" << (o.name.empty() ? "" : " " + o.name)
            << (o.delta ? " --delta" : "") << "    " << when << "\n\n";
}

}  // namespace

int cmd_counters(const Globals& g, const CountersOptions& o) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    const auto pause = std::chrono::duration<double>(o.watch_s > 0 ? o.watch_s : 1.0);
    Sample prev = fetch(c, o.name);
    for (unsigned shown = 0;;) {
      std::optional<Sample> cur;
      if (o.delta) {
        std::this_thread::sleep_for(pause);
        cur = fetch(c, o.name);
      }
      const Sample& now = cur ? *cur : prev;
      if (o.watch_s > 0 && !g.json) print_header(o);
      if (g.json) print_json_sample(now, o.delta ? &prev : nullptr);
      else print_sample(now, o.delta ? &prev : nullptr);
      std::cout << std::flush;
      if (o.watch_s <= 0 || (o.count && ++shown >= o.count)) return 0;
      if (cur) prev = std::move(*cur);
      else {
        std::this_thread::sleep_for(pause);
        prev = fetch(c, o.name);
      }
    }
  });
}

int cmd_counters_reset(const Globals& g, const std::string& name) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json args = json::object();
    if (!name.empty()) args["name"] = name;
    const json r = c.call("counters.reset", args);
    if (g.json) {
      print_json(r);
      return 0;
    }
    const json ports = r.value("reset", json::array());
    std::cout << "cleared the counters of " << ports.size() << (ports.size() == 1 ? " port" : " ports");
    if (ports.size() == 1) std::cout << " (" << cell(ports[0].get<std::string>()) << ")";
    std::cout << '\n';
    return 0;
  });
}

void add_counters_commands(CLI::App& app, Dispatch& d) {
  auto counters_opts = std::make_shared<CountersOptions>();
  auto* counters = app.add_subcommand("counters", "Show port counters (IBA PMA names), once, as rates, or refreshed.");
  counters->add_option("name", counters_opts->name, "a vHCA (vib0), switch (leaf0), switch port (leaf0/3) or fabric");
  counters->add_option("-w,--watch", counters_opts->watch_s, "refresh every SECONDS, like watch(1)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.1, 3600.0));
  counters->add_flag("--delta", counters_opts->delta, "rates per second (over -w's interval, else 1 s)");
  counters->add_option("--count", counters_opts->count, "with -w: stop after N refreshes")->type_name("N");
  auto counters_reset_name = std::make_shared<std::string>();
  auto* counters_reset = counters->add_subcommand("reset", "Clear the counters of the ports NAME selects (all without one).");
  counters_reset->add_option("name", *counters_reset_name, "a vHCA, switch, switch port or fabric");
  counters_reset->footer(
      "Like perfquery -R: every PMA count of the port (and of a vHCA's port, its own) restarts at\n"
      "0; queue and buffer levels stay, and their peaks restart from the level now. A vHCA's\n"
      "hw_counters (retransmissions, RNR NAKs, ...) are the engine's and are kept, as mlx5 keeps\n"
      "its. Prometheus tolerates the reset (rate() treats a drop as one).");
  counters->footer(
      "NAME selects the ports: a vHCA's, one switch port, every cabled port of a switch or of a\n"
      "fabric; without NAME every cabled port of every fabric.\n\n"
      "Several ports print one row each:\n"
      "  XMIT_PKTS / RCV_PKTS    PortXmitPkts / PortRcvPkts (link packets such as flow-control\n"
      "                          packets and PFC frames are not in them, as in the PMA)\n"
      "  XMIT_DATA / RCV_DATA    PortXmitData / PortRcvData: octets / 4, headers and CRCs included\n"
      "  XMIT_DISCARDS           PortXmitDiscards: dropped on the way out\n"
      "  RCV_ERRORS              PortRcvErrors + PortRcvSwitchRelayErrors + PortRcvDiscards\n"
      "  WAIT_US                 PortXmitWait: time a frame was ready but flow control held it\n"
      "One port prints every counter, perfquery-style, then per class what moved.\n\n"
      "--delta samples twice and prints per-second rates in the daemon's emulated time (the\n"
      "time link rates are in, see daemon.time_dilation): packets/s, Gb/s, and WAIT_% the share\n"
      "of time the port waited. -w SECONDS refreshes like watch(1) (the screen is cleared on a\n"
      "terminal) until interrupted or --count refreshes. --json prints the daemon's reply; with\n"
      "--delta it carries the previous sample and interval_ns.\n\n"
      "EXAMPLES\n"
      "  fabricctl counters                      every port, totals\n"
      "  fabricctl counters vib0                 one vHCA, every counter\n"
      "  fabricctl counters leaf0 -w 1 --delta   a switch's ports, rates refreshed every second\n"
      "  fabricctl counters reset                clear every port before a test run");
  set_handler(counters, d, [counters_opts, counters_reset, counters_reset_name](const Globals& g) {
    // `counters vib0 reset` names the ports before the word, `counters reset vib0` after it.
    if (*counters_reset)
      return cmd_counters_reset(g, counters_reset_name->empty() ? counters_opts->name : *counters_reset_name);
    return cmd_counters(g, *counters_opts);
  });
}

}  // namespace vf::ctl
