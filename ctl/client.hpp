// fabricctl's side of the control API: one request line out, one reply line
// back, over <runtime_dir>/control.sock (see ctl/control-api.md).
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace vf::ctl {

using json = nlohmann::json;

// Cannot reach the daemon (no socket, refused, permission). what() is the
// complete message for the user; exit status 1.
class Unreachable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The daemon answered {"ok":false,...}.
class DaemonError : public std::runtime_error {
 public:
  DaemonError(const std::string& error, std::string hint) : std::runtime_error(error), hint_(std::move(hint)) {}
  const std::string& hint() const noexcept { return hint_; }

 private:
  std::string hint_;
};

class Client {
 public:
  Client(std::string socket_path, std::chrono::milliseconds timeout);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends {"cmd":cmd,"args":args}; returns "result" or throws DaemonError,
  // Unreachable, or std::runtime_error for a broken reply.
  json call(const std::string& cmd, const json& args = json::object());

 private:
  void send_all(const std::string& data);
  std::string read_line();

  std::string path_;
  std::chrono::milliseconds timeout_;
  int fd_ = -1;
  std::string buf_;
};

}  // namespace vf::ctl
