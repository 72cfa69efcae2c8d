#include "ctl/client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace vf::ctl {
namespace {
constexpr std::size_t kMaxReply = 64u << 20;  // a reply larger than this is not from fabricd

std::string not_running(const std::string& path, int err) {
  return fmt::format(
      "fabricd is not running (cannot connect to {}: {}). Start it with 'systemctl start fabricd' "
      "or 'fabricd --config configs/default.yaml'.",
      path, std::strerror(err));
}
}  // namespace

Client::Client(std::string socket_path, std::chrono::milliseconds timeout)
    : path_(std::move(socket_path)), timeout_(timeout) {
  sockaddr_un sa{};
  if (path_.size() >= sizeof sa.sun_path)
    throw Unreachable(fmt::format("socket path {} is too long for a UNIX socket; use a shorter --runtime-dir", path_));
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw Unreachable(fmt::format("cannot create a socket: {}", std::strerror(errno)));
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path, path_.c_str(), path_.size() + 1);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    int e = errno;
    ::close(fd_);
    fd_ = -1;
    if (e == EACCES || e == EPERM)
      throw Unreachable(fmt::format(
          "permission denied connecting to {}. Run as root, or join the group that owns the socket "
          "(see 'ls -l {}').",
          path_, path_));
    throw Unreachable(not_running(path_, e));
  }
}

Client::~Client() {
  if (fd_ >= 0) ::close(fd_);
}

void Client::send_all(const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Unreachable(fmt::format("lost the connection to fabricd ({}): {}", path_, std::strerror(errno)));
    off += static_cast<std::size_t>(n);
  }
}

std::string Client::read_line() {
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    if (auto nl = buf_.find('\n'); nl != std::string::npos) {
      std::string line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      throw Unreachable(fmt::format("fabricd did not answer within {} ms", timeout_.count()));
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw Unreachable(fmt::format("poll: {}", std::strerror(errno)));
    if (r == 0) continue;
    char chunk[65536];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Unreachable(fmt::format("lost the connection to fabricd: {}", std::strerror(errno)));
    if (n == 0) throw Unreachable("fabricd closed the connection without answering");
    buf_.append(chunk, static_cast<std::size_t>(n));
    if (buf_.size() > kMaxReply) throw std::runtime_error("reply from fabricd is implausibly large");
  }
}

json Client::call(const std::string& cmd, const json& args) {
  json req = {{"cmd", cmd}, {"args", args}};
  send_all(req.dump() + "\n");
  std::string line = read_line();
  json rep = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (rep.is_discarded() || !rep.is_object() || !rep.contains("ok") || !rep["ok"].is_boolean())
    throw std::runtime_error("fabricd sent a reply that is not a control-API object");
  if (!rep["ok"].get<bool>()) {
    std::string err = rep.value("error", std::string("unspecified error"));
    std::string hint = rep.contains("hint") && rep["hint"].is_string() ? rep["hint"].get<std::string>() : "";
    throw DaemonError(err, hint);
  }
  return rep.contains("result") ? rep["result"] : json();
}

}  // namespace vf::ctl
