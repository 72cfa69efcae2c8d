// Runs a program (fabricd, ibv_devinfo, perftest, ...) as a child: argv +
// environment, captured output, and a timeout so a hung program is killed
// and reported instead of hanging its caller (vfabric-compare, the tests).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace vf::proc {

using Env = std::map<std::string, std::string>;

struct RunResult {
  int exit_code = -1;   // -1 if killed by a signal
  int term_signal = 0;
  bool timed_out = false;
  std::string out, err;
  std::string describe() const;  // for assertion messages
};

class Process {
 public:
  Process(std::vector<std::string> argv, const Env& extra_env);
  ~Process();  // kills the process if still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  void signal(int sig);
  // Waits for exit, collecting output; kills with SIGKILL after `timeout`.
  RunResult wait(std::chrono::milliseconds timeout);
  // Reads output produced so far without waiting for exit.
  const std::string& out_so_far();
  const std::string& err_so_far();

 private:
  void pump(int timeout_ms);
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  RunResult result_;
  bool reaped_ = false;
};

RunResult run(std::vector<std::string> argv, const Env& env = {},
              std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace vf::proc
