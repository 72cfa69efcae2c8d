#include "core/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

extern char** environ;

namespace vf::proc {

std::string RunResult::describe() const {
  std::string s = "exit=" + std::to_string(exit_code);
  if (term_signal) s += " signal=" + std::to_string(term_signal);
  if (timed_out) s += " (timed out)";
  return s + "\n--- stdout ---\n" + out + "\n--- stderr ---\n" + err;
}

Process::Process(std::vector<std::string> argv, const Env& extra_env) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) throw std::runtime_error("pipe");
  Env env;
  for (char** e = environ; *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq) env[std::string(*e, size_t(eq - *e))] = eq + 1;
  }
  for (auto& [k, v] : extra_env) env[k] = v;
  std::vector<std::string> env_strs;
  for (auto& [k, v] : env) env_strs.push_back(k + "=" + v);

  // Built before fork: the child of a threaded parent must not allocate.
  std::vector<char*> av, ev;
  for (auto& a : argv) av.push_back(a.data());
  av.push_back(nullptr);
  for (auto& e : env_strs) ev.push_back(e.data());
  ev.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork");
  if (pid_ == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    setpgid(0, 0);
    // Its own process group keeps a terminal's Ctrl-C from it; this keeps it
    // from outliving a runner that is killed (fabricd then shuts down).
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    execvpe(av[0], av.data(), ev.data());
    dprintf(2, "exec %s: %s\n", av[0], strerror(errno));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
  fcntl(out_fd_, F_SETFL, O_NONBLOCK);
  fcntl(err_fd_, F_SETFL, O_NONBLOCK);
}

Process::~Process() {
  if (!reaped_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

void Process::pump(int timeout_ms) {
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  if (poll(fds, 2, timeout_ms) <= 0) return;
  char buf[4096];
  for (int i = 0; i < 2; ++i) {
    for (;;) {
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) break;
      (i == 0 ? result_.out : result_.err).append(buf, size_t(n));
    }
  }
}

const std::string& Process::out_so_far() {
  pump(0);
  return result_.out;
}

const std::string& Process::err_so_far() {
  pump(0);
  return result_.err;
}

bool Process::running() {
  if (reaped_) return false;
  int st;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    if (WIFEXITED(st)) result_.exit_code = WEXITSTATUS(st);
    if (WIFSIGNALED(st)) result_.term_signal = WTERMSIG(st);
    return false;
  }
  return true;
}

void Process::signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

RunResult Process::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      result_.timed_out = true;
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
    }
    pump(20);
  }
  pump(0);
  return result_;
}

RunResult run(std::vector<std::string> argv, const Env& env, std::chrono::milliseconds timeout) {
  Process p(std::move(argv), env);
  return p.wait(timeout);
}

}  // namespace vf::proc
