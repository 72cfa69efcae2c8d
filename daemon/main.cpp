// fabricd: builds the emulated fabric from its config, serves the vHCAs to
// providers and the control API to fabricctl, and runs the dataplane lcore.
#include <utility>  // before Asio (Boost 1.74 + g++ 12 in C++20)

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sysexits.h>
#include <linux/capability.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <memory>
#include <thread>

#include "core/version.hpp"
#include "daemon/config/config.hpp"
#include "daemon/fabric/config_check.hpp"
#include "daemon/commands/control_commands.hpp"
#include "daemon/service/daemon_state.hpp"
#include "daemon/lcore/eal.hpp"
#include "daemon/ip/host_net.hpp"
#include "daemon/lcore/mbuf_pool.hpp"
#include "daemon/os/privileges.hpp"

namespace {

const char* kDescription =
    "fabricd - the vfabric daemon.\n\n"
    "Builds the emulated RDMA fabric described by a YAML config (native InfiniBand with\n"
    "switches and per-link rate/delay/MTU, or RoCEv2 over Ethernet switches), serves its\n"
    "virtual HCAs to unmodified RDMA programs through the libvhca provider, and answers\n"
    "fabricctl on <runtime_dir>/control.sock. Under systemd it runs as Type=notify with a\n"
    "watchdog; logs go to stderr (the journal).\n\n"
    "Examples:\n"
    "  fabricd --config /etc/vfabric/fabricd.yaml\n"
    "  fabricd --config configs/default.yaml --check     # validate a config and exit\n\n"
    "Exit status: 0 after SIGTERM/SIGINT, 78 (EX_CONFIG) for a bad config, 1 for other start-up\n"
    "errors. The systemd unit does not restart fabricd after 78: a restart cannot fix a config.";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "fabricd"};
  std::string config_path = "/etc/vfabric/fabricd.yaml";
  std::string log_level = "info";
  bool check_only = false;
  app.add_option("-c,--config", config_path, "YAML topology and daemon settings")->capture_default_str();
  app.add_option("-l,--log-level", log_level, "trace, debug, info, warn, error")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  app.add_flag("--check", check_only, "validate the config and exit");
  app.set_version_flag("--version", std::string("fabricd ") + vf::kVersion);
  CLI11_PARSE(app, argc, argv);

  auto logger = spdlog::stderr_color_mt("fabricd");
  spdlog::set_default_logger(logger);
  // The journal stamps time and unit itself.
  spdlog::set_pattern(getenv("JOURNAL_STREAM") ? "%l: %v" : "[%H:%M:%S.%e] %l: %v");
  spdlog::set_level(spdlog::level::from_str(log_level));

  if (check_only) {
    const vf::ConfigCheck c = vf::check_config_file(config_path);
    if (!c.ok) {
      std::fprintf(stderr, "fabricd: %s\n", c.error.c_str());
      return EX_CONFIG;
    }
    std::printf("%s: OK (%zu fabrics, %zu vHCAs)\n", config_path.c_str(), c.fabrics, c.hcas);
    // Valid, but worth knowing (configs/ring.yaml is built to show it).
    for (const std::string& w : c.warnings) std::printf("warning: %s\n", w.c_str());
    return 0;
  }
  vf::config::Config cfg;
  try {
    cfg = vf::config::load_config(config_path);
  } catch (const vf::config::ConfigError& e) {
    std::fprintf(stderr, "fabricd: %s\n", e.what());
    return EX_CONFIG;  // systemd/fabricd.service: RestartPreventExitStatus=78
  }

  // An emulated address that is also the host's would capture or leak real
  // traffic: refuse it like a config error, naming both sides.
  if (const auto specs = vf::netdev_specs(cfg); !specs.empty()) {
    const vf::HostNet host = vf::read_host_net();
    for (const vf::NetdevSpec& s : specs)
      if (std::string clash = vf::host_clash(s, host); !clash.empty()) {
        std::fprintf(stderr, "fabricd: %s: %s\n", config_path.c_str(), clash.c_str());
        return EX_CONFIG;
      }
  }

  // Before any thread exists (threads inherit it): see privileges.hpp.
  if (int err = vf::drop_effective_capability(CAP_SYS_PTRACE))
    spdlog::warn("cannot drop CAP_SYS_PTRACE from the effective set: {}", std::strerror(err));
  // Events go into apps' pipes; an app that closed its read end must cost
  // us an EPIPE on that write, not the process.
  std::signal(SIGPIPE, SIG_IGN);
  // Every context and every CQ with a completion channel keeps one pipe fd
  // here: use all the fds we are allowed, not the 1024 soft default.
  if (rlimit rl{}; getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  try {
    vf::Eal eal(cfg.daemon.eal_args, vf::mbuf_pool_size(cfg));
    vf::DaemonState state(cfg, eal, vf::register_all_commands);
    return state.run();
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
