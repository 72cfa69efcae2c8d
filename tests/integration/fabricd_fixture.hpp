// Starts a real fabricd on a config, in its own runtime directory, and waits
// for it to tell "systemd" READY=1 (through NOTIFY_SOCKET, as under a unit).
#pragma once

#include <memory>
#include <string>

#include "process.hpp"

namespace vf::test {

struct Paths {
  static std::string fabricd() { return VF_FABRICD_PATH; }
  static std::string fabricctl() { return VF_FABRICCTL_PATH; }
  static std::string provider_dir() { return VF_PROVIDER_DIR; }
  static std::string preload() { return VF_PRELOAD_PATH; }
  static std::string source_dir() { return VF_SOURCE_DIR; }
};

class Fabricd {
 public:
  // `config_yaml` is the config text; its runtime_dir is replaced by a fresh
  // temporary directory so tests never touch /run/vfabric.
  explicit Fabricd(const std::string& config_yaml);
  ~Fabricd();  // SIGTERM, expect a clean exit

  const std::string& runtime_dir() const { return runtime_dir_; }
  std::string config_path() const { return dir_ + "/fabricd.yaml"; }  // the file fabricd reads
  // Environment that makes the vHCAs visible to unmodified programs: what
  // `fabricctl exec` sets, the preload shim included unless `preload` is false.
  Env app_env(bool preload = true) const;
  RunResult ctl(std::vector<std::string> args) const;  // runs fabricctl
  Process& process() { return *proc_; }
  // Stops the daemon, returning its result (for exit-path tests).
  RunResult stop(int sig = 15);
  // A new fabricd on the same config and runtime dir (stops this one first).
  void restart();

 private:
  void start();
  std::string dir_, runtime_dir_, notify_path_;
  int notify_fd_ = -1;
  std::unique_ptr<Process> proc_;
  bool stopped_ = false;
};

std::string read_file(const std::string& path);
std::string default_config();  // configs/default.yaml
// One sample of `fabricctl metrics`, e.g. `vfabric_rx_dropped_total{fabric="ib",hca="vib0"}`
// (a sample line, never its # HELP); throws, naming it, if there is none.
uint64_t metric_sample(const Fabricd& d, const std::string& sample);

}  // namespace vf::test
