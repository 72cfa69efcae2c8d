// `fabricctl metrics`: every counter in the Prometheus text format, as the
// daemon renders it, for a node exporter's textfile collector or a quick grep.
#include "ctl/commands_common.hpp"

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

}  // namespace vf::ctl
