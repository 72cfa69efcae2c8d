// What the command files share to define their part of fabricctl's command
// line.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "ctl/commands.hpp"

namespace vf::ctl {

// A command group (fabricctl hca ...): it needs a command, and its help
// points at the commands' own rather than repeating the top-level footer.
CLI::App* add_group(CLI::App& app, const std::string& name, const std::string& description);

// Makes `handler` what main runs when the command line chose `cmd`. The
// option values a handler reads are shared_ptrs it holds: CLI11 fills them
// while parsing, after the add_*_commands that made them have returned.
void set_handler(CLI::App* cmd, Dispatch& d, Handler handler);

}  // namespace vf::ctl
