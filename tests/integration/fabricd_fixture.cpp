#include "fabricd_fixture.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace vf::test {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string default_config() { return read_file(Paths::source_dir() + "/configs/default.yaml"); }

uint64_t metric_sample(const Fabricd& d, const std::string& sample) {
  const RunResult m = d.ctl({"metrics"});
  const std::string line = "\n" + sample + " ";
  const size_t at = m.out.find(line);
  if (m.exit_code != 0 || at == std::string::npos)
    throw std::runtime_error("fabricctl metrics has no sample " + sample + ": " + m.describe());
  return std::stoull(m.out.substr(at + line.size()));
}

Fabricd::Fabricd(const std::string& config_yaml) {
  char tmpl[] = "/tmp/vf-it-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
  dir_ = tmpl;
  runtime_dir_ = dir_ + "/run";
  notify_path_ = dir_ + "/notify.sock";
  std::string cfg = config_yaml;
  const std::string key = "runtime_dir:";
  if (auto at = cfg.find(key); at != std::string::npos) {
    const size_t value = at + key.size();
    const size_t end = cfg.find_first_of("#\n", value);
    cfg.replace(value, end == std::string::npos ? std::string::npos : end - value, " " + runtime_dir_ + " ");
    // Any free port for /metrics (status says which), so a lab's fabricd on
    // the default one never meets a test's.
    const std::string metrics = "metrics_listen:";
    if (const size_t m = cfg.find(metrics); m == std::string::npos) {
      const size_t line = cfg.rfind('\n', at) + 1;
      cfg.insert(line, std::string(at - line, ' ') + metrics + " 127.0.0.1:0\n");
    } else if (cfg.compare(m, metrics.size() + 4, metrics + " 127") == 0) {
      const size_t v = m + metrics.size(), e = cfg.find_first_of("#\n", v);
      cfg.replace(v, e == std::string::npos ? std::string::npos : e - v, " 127.0.0.1:0 ");
    }
  }
  std::ofstream(dir_ + "/fabricd.yaml") << cfg;

  notify_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", notify_path_.c_str());
  if (bind(notify_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)))
    throw std::runtime_error("bind notify socket");

  start();
}

void Fabricd::start() {
  proc_ = std::make_unique<Process>(
      std::vector<std::string>{Paths::fabricd(), "--config", dir_ + "/fabricd.yaml"},
      Env{{"NOTIFY_SOCKET", notify_path_}});
  stopped_ = false;

  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string got;
  while (got.find("READY=1") == std::string::npos) {
    if (!proc_->running()) {
      auto r = proc_->wait(std::chrono::seconds(1));
      throw std::runtime_error("fabricd exited before READY: " + r.describe());
    }
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("fabricd not READY in 60 s");
    pollfd p{notify_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) == 1) {
      char buf[512];
      ssize_t n = recv(notify_fd_, buf, sizeof(buf), 0);
      if (n > 0) got.append(buf, size_t(n)).append("\n");
    }
  }
}

void Fabricd::restart() {
  if (!stopped_) stop();
  start();
}

RunResult Fabricd::stop(int sig) {
  stopped_ = true;
  proc_->signal(sig);
  return proc_->wait(std::chrono::seconds(30));
}

Fabricd::~Fabricd() {
  if (!stopped_) stop();
  if (notify_fd_ >= 0) close(notify_fd_);
  std::string cmd = "rm -rf '" + dir_ + "'";
  if (std::system(cmd.c_str())) {
  }
}

Env Fabricd::app_env(bool preload) const {
  Env env{{"SYSFS_PATH", runtime_dir_ + "/sys"},
          {"RDMAV_DRIVERS", Paths::provider_dir() + "/libvhca"},
          {"VFABRIC_RUNTIME_DIR", runtime_dir_}};
  if (preload) env["LD_PRELOAD"] = Paths::preload();
  return env;
}

RunResult Fabricd::ctl(std::vector<std::string> args) const {
  std::vector<std::string> argv{Paths::fabricctl(), "--runtime-dir", runtime_dir_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {}, std::chrono::seconds(30));
}

}  // namespace vf::test
