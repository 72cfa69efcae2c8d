// `fabricctl config check FILE`: validates a config with fabricd's own parser
// and checks, without a daemon: what would stop fabricd, or a summary and
// what is valid but worth knowing.
#include <memory>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"
#include "daemon/fabric/config_check.hpp"

namespace vf::ctl {

int cmd_config_check(const Globals& g, const std::string& path) {
  const ConfigCheck c = check_config_file(path);
  if (g.json) {
    json out = {{"file", path}, {"ok", c.ok}};
    if (c.ok)
      out.update({{"fabrics", c.fabrics},
                  {"switches", c.switches},
                  {"hcas", c.hcas},
                  {"links", c.links},
                  {"warnings", c.warnings}});
    else
      out["error"] = c.error;
    print_json(out);
    return c.ok ? 0 : 1;
  }
  if (!c.ok) {
    std::cerr << "fabricctl: " << cell(c.error, 1024) << '\n';
    return 1;
  }
  std::cout << path << ": OK (" << c.fabrics << (c.fabrics == 1 ? " fabric: " : " fabrics: ") << c.switches
            << " switches, " << c.hcas << " vHCAs, " << c.links << " links)\n";
  for (const std::string& w : c.warnings) std::cout << "warning: " << w << '\n';
  return 0;
}

void add_config_commands(CLI::App& app, Dispatch& d) {
  auto* config = add_group(app, "config", "fabricd configs.");
  auto config_file = std::make_shared<std::string>();
  auto* config_check = config->add_subcommand("check", "Validate a config file as fabricd would, without a daemon.");
  config_check->add_option("file", *config_file, "the YAML config")->required();
  config_check->footer(
      "Runs fabricd's own parser and checks (the same as fabricd --config FILE --check): a\n"
      "config fabricd would refuse prints the first problem with its line and column and what\n"
      "to do, and exits 1; a valid one prints a summary and exits 0, with a warning line for\n"
      "what is valid but worth knowing (a routing whose routes form a credit loop, which can\n"
      "deadlock a lossless fabric). Check a config before installing it, reloading fabricd\n"
      "(which applies links' rate and delay live) or restarting it.\n\n"
      "EXAMPLES\n"
      "  fabricctl config check /etc/vfabric/fabricd.yaml\n"
      "  fabricctl --json config check lab.yaml");
  set_handler(config_check, d, [config_file](const Globals& g) { return cmd_config_check(g, *config_file); });
}

}  // namespace vf::ctl
