// fabricctl: the user's handle on a running fabricd. Only the top level is
// here; each command group's commands, help and handler are in its
// commands_<group>.cpp, the socket in client.cpp.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/version.hpp"
#include "ctl/commands.hpp"

namespace {

const char* kDescription =
    "fabricctl - inspect a running vfabric daemon and run programs on its virtual HCAs.\n\n"
    "fabricd emulates an RDMA fabric - native InfiniBand, or RoCEv2 over Ethernet - whose\n"
    "virtual HCAs (vHCAs) unmodified programs such as ibv_devinfo, ibv_rc_pingpong, perftest\n"
    "or MPI use through the ordinary libibverbs. fabricctl talks to the daemon over\n"
    "<runtime-dir>/control.sock: it shows the fabric, and starts programs in the environment\n"
    "that makes the vHCAs visible to them.\n";

const char* kFooter =
    "EXAMPLES\n"
    "  fabricctl status                          daemon, fabrics and vHCAs at a glance\n"
    "  fabricctl hca list                        one line per vHCA\n"
    "  fabricctl hca list --json                 the same as JSON, for scripts\n"
    "  fabricctl metrics                         every counter, Prometheus text format\n"
    "  fabricctl exec -- ibv_devinfo -v          run a program that sees the vHCAs\n"
    "  fabricctl exec -- ibv_rc_pingpong -d vib0 -g 0\n"
    "  eval \"$(fabricctl env)\"                   make this shell see the vHCAs\n"
    "  fabricctl --runtime-dir /tmp/lab/run status   a daemon with its own runtime_dir\n\n"
    "ENVIRONMENT\n"
    "  VFABRIC_RUNTIME_DIR   the daemon's runtime directory, as --runtime-dir\n\n"
    "FILES\n"
    "  /run/vfabric/control.sock   control socket (one JSON object per line; see ctl/control-api.md)\n"
    "  /run/vfabric/sys            the sysfs tree libibverbs reads through SYSFS_PATH\n\n"
    "EXIT STATUS\n"
    "  0 success; 1 fabricd is not running or answered with an error; 2 usage error.\n"
    "  exec exits with the program's own status (127: not found, 126: cannot execute).";

bool takes_value(std::string_view opt) { return opt == "--runtime-dir" || opt == "--timeout"; }

// Finds `exec` (the first word that is not a global option or its value);
// fabricctl options may follow it, then CMD starts at the first other word
// or after a `--`. Returns how many argv entries CLI11 should parse, and CMD.
std::pair<int, std::vector<std::string>> split_exec(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (takes_value(a)) {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    if (a != "exec") break;  // another subcommand: nothing to split
    for (int j = i + 1; j < argc; ++j) {
      std::string_view w = argv[j];
      if (w == "--") return {j, std::vector<std::string>(argv + j + 1, argv + argc)};
      if (takes_value(w)) ++j;
      else if (w.empty() || w[0] != '-') return {j, std::vector<std::string>(argv + j, argv + argc)};
    }
    return {argc, {}};
  }
  return {argc, {}};
}

}  // namespace

int main(int argc, char** argv) {
  vf::ctl::Globals g;
  if (const char* d = std::getenv("VFABRIC_RUNTIME_DIR"); d && *d) g.runtime_dir = d;
  double timeout_s = 10;

  CLI::App app{kDescription, "fabricctl"};
  app.footer(kFooter);
  app.get_formatter()->column_width(28);
  app.set_version_flag("--version", std::string("fabricctl ") + vf::kVersion);
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand: `hca list --json`
  app.add_option("--runtime-dir", g.runtime_dir, "fabricd's runtime directory (daemon.runtime_dir)")
      ->envname("VFABRIC_RUNTIME_DIR")
      ->type_name("DIR")
      ->capture_default_str();
  app.add_flag("--json", g.json, "print the daemon's JSON instead of tables");
  app.add_option("--timeout", timeout_s, "seconds to wait for an answer")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();

  // --help lists the commands in the order they are added.
  vf::ctl::Dispatch dispatch;
  vf::ctl::add_status_commands(app, dispatch);
  vf::ctl::add_hca_commands(app, dispatch);
  vf::ctl::add_qp_commands(app, dispatch);
  vf::ctl::add_cm_commands(app, dispatch);
  vf::ctl::add_port_commands(app, dispatch);
  vf::ctl::add_link_commands(app, dispatch);
  vf::ctl::add_routes_commands(app, dispatch);
  vf::ctl::add_sm_commands(app, dispatch);
  vf::ctl::add_topology_commands(app, dispatch);
  vf::ctl::add_counters_commands(app, dispatch);
  vf::ctl::add_capture_commands(app, dispatch);
  vf::ctl::add_events_commands(app, dispatch);
  vf::ctl::add_qos_commands(app, dispatch);
  vf::ctl::add_config_commands(app, dispatch);
  vf::ctl::add_metrics_commands(app, dispatch);
  vf::ctl::add_env_commands(app, dispatch);
  vf::ctl::add_exec_commands(app, dispatch);

  // exec's command line is split off before CLI11 sees it, so options of CMD
  // (`-d vib0`, `--json`...) can never be taken for fabricctl's.
  auto [cli_argc, command] = split_exec(argc, argv);
  dispatch.exec_command = std::move(command);
  try {
    app.parse(cli_argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  g.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  return dispatch.run ? dispatch.run(g) : 2;
}
