// fabricctl's commands. Each returns the process exit status; errors are
// printed as "fabricctl: <problem>" plus a hint line, never as exceptions.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace vf::ctl {

struct Globals {
  std::string runtime_dir = "/run/vfabric";
  bool json = false;
  std::chrono::milliseconds timeout{10'000};
  std::string socket() const { return runtime_dir + "/control.sock"; }
};

using Handler = std::function<int(const Globals&)>;

// How the command line reaches a handler: the chosen command's callback only
// records it, and main runs it once parsing is over and the globals are final
// (--timeout is converted after parsing; a handler never runs inside CLI11).
struct Dispatch {
  Handler run;                            // empty: no command was chosen
  std::vector<std::string> exec_command;  // exec's CMD, split off argv before CLI11 sees it
};

// Each defines its group's commands -- options, help and the handler they
// run -- in its commands_<group>.cpp. main adds them in the order `fabricctl
// --help` lists them: CLI11 lists subcommands as they were added.
void add_status_commands(CLI::App& app, Dispatch& d);
void add_hca_commands(CLI::App& app, Dispatch& d);
void add_qp_commands(CLI::App& app, Dispatch& d);
void add_cm_commands(CLI::App& app, Dispatch& d);
void add_port_commands(CLI::App& app, Dispatch& d);
void add_link_commands(CLI::App& app, Dispatch& d);
void add_routes_commands(CLI::App& app, Dispatch& d);
void add_sm_commands(CLI::App& app, Dispatch& d);
void add_topology_commands(CLI::App& app, Dispatch& d);
void add_counters_commands(CLI::App& app, Dispatch& d);
void add_capture_commands(CLI::App& app, Dispatch& d);
void add_events_commands(CLI::App& app, Dispatch& d);
void add_qos_commands(CLI::App& app, Dispatch& d);
void add_config_commands(CLI::App& app, Dispatch& d);
void add_metrics_commands(CLI::App& app, Dispatch& d);
void add_env_commands(CLI::App& app, Dispatch& d);
void add_exec_commands(CLI::App& app, Dispatch& d);

struct CountersOptions {
  std::string name;      // a vHCA, switch, switch port or fabric; empty: every port
  double watch_s = 0;    // -w: refresh every this many seconds (0: once)
  bool delta = false;    // rates per second instead of totals
  unsigned count = 0;    // with -w: stop after this many (0: until interrupted)
};

struct CaptureOptions {
  std::string port;
  std::string write;      // -w: a pcapng file, "-" for stdout; empty: one line per frame
  uint64_t count = 0;     // -c: stop after this many frames (0: until interrupted)
  uint32_t snaplen = 0;   // bytes kept per frame (0: the daemon's default, 65535)
  bool link_packets = false;  // -w on IB: keep flow-control packets in the file
};

int cmd_status(const Globals& g);
int cmd_hca_list(const Globals& g);
int cmd_hca_show(const Globals& g, const std::string& name);
int cmd_qp_list(const Globals& g, const std::string& hca);
int cmd_cm_list(const Globals& g);
int cmd_env(const Globals& g);
int cmd_metrics(const Globals& g);
// attr: "state" (down|up) or "pfc_storm" (3, 3,4 or off).
int cmd_port_set(const Globals& g, const std::string& hca, const std::string& attr, const std::string& value);
int cmd_port_show(const Globals& g, const std::string& port);
// words: A [B] then attribute/value pairs (state, loss, corrupt, seed).
int cmd_link_set(const Globals& g, const std::vector<std::string>& words);
int cmd_routes(const Globals& g, const std::string& sw);
int cmd_sm_show(const Globals& g);
int cmd_counters(const Globals& g, const CountersOptions& o);
// Needs no daemon: fabricd's parser and checks, run here.
int cmd_config_check(const Globals& g, const std::string& path, bool sim);
int cmd_counters_reset(const Globals& g, const std::string& name);
int cmd_capture(const Globals& g, const CaptureOptions& o);
int cmd_qos_show(const Globals& g, const std::string& port);
// words: PORT then attribute/value pairs (sl2vl, vlarb_high, vlarb_low, high_limit).
int cmd_qos_set(const Globals& g, const std::vector<std::string>& words);
// Until interrupted, or `count` events (0: no limit); `history`: what fabricd kept first.
int cmd_events(const Globals& g, bool history, uint64_t count);
// Tables, or a Graphviz graph with `dot`.
int cmd_topology_show(const Globals& g, bool dot);
// Replaces fabricctl with `argv` (execvp) in the daemon's environment; only
// returns on failure (127: not found, 126: not executable, 1: no daemon).
int cmd_exec(const Globals& g, const std::vector<std::string>& argv);

}  // namespace vf::ctl
