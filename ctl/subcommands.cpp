#include "ctl/subcommands.hpp"

#include <utility>

namespace vf::ctl {

CLI::App* add_group(CLI::App& app, const std::string& name, const std::string& description) {
  CLI::App* group = app.add_subcommand(name, description);
  group->require_subcommand(1);
  group->footer("Each command has its own --help: fabricctl " + name + " COMMAND --help.");
  return group;
}

void set_handler(CLI::App* cmd, Dispatch& d, Handler handler) {
  cmd->callback([&d, h = std::move(handler)] { d.run = h; });
}

}  // namespace vf::ctl
