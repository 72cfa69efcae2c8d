// `fabricctl metrics`: every counter in the Prometheus text format, as the
// daemon renders it, for a node exporter's textfile collector or a quick grep.
#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

namespace vf::ctl {

int cmd_metrics(const Globals& g) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json r = c.call("metrics");
    if (g.json) {
      print_json(r);
      return 0;
    }
    // Printed as it came (not through cell(), which would flatten its lines):
    // the daemon escapes label values as the exposition format requires.
    const auto it = r.is_object() ? r.find("text") : r.end();
    if (!r.is_object() || it == r.end() || !it->is_string())
      throw std::runtime_error("fabricd's metrics reply has no text");
    std::cout << it->get_ref<const std::string&>();
    return 0;
  });
}

void add_metrics_commands(CLI::App& app, Dispatch& d) {
  auto* metrics = app.add_subcommand("metrics", "Print every counter in the Prometheus text format.");
  metrics->footer(
      "Ports (HCA and switch) by IBA PMA name, per class, per link direction, per vHCA (HCA port,\n"
      "engine, events) and the dataplane thread; counters are vfabric_<name>_total, levels\n"
      "(queue depths, credits) vfabric_<name>. fabricd also serves this at GET /metrics\n"
      "(daemon.metrics_listen, default 127.0.0.1:9469) for Prometheus to scrape. E.g. for\n"
      "node_exporter's textfile collector:  fabricctl metrics > /var/lib/node_exporter/vfabric.prom");
  set_handler(metrics, d, cmd_metrics);
}

}  // namespace vf::ctl
