// `fabricctl config check FILE`: validates a config with fabricd's own parser
// and checks, without a daemon: what would stop fabricd, or a summary and
// what is valid but worth knowing.
#include "ctl/commands_common.hpp"
#include "daemon/config_check.hpp"

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

}  // namespace vf::ctl
