// The listening side of the control API: socket file lifecycle, the command
// table, accepting clients (within the caps of control_peers.cpp).
#include <utility>

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/control/control_detail.hpp"
#include "daemon/config/sys_groups.hpp"

namespace vf::control {
namespace asio = boost::asio;
using stream = asio::local::stream_protocol;

namespace {

// True when a process accepts connections on `path` right now.
bool someone_listens(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
  bool live = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  ::close(fd);
  return live;
}

// True when a connection is queued on the listening socket `fd`.
bool connection_waiting(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

void check_name(const std::string& name) {
  if (name.empty() || name.size() > 64)
    throw std::invalid_argument("control command names are 1..64 characters");
}

}  // namespace

ControlServer::ControlServer(asio::io_context& io, ServerOptions opts)
    : state_(std::make_shared<detail::ServerState>(io, std::move(opts))) {
  if (state_->opts.max_clients == 0 || state_->opts.max_clients_per_uid == 0)
    throw std::invalid_argument("the control server needs room for at least one client");
  add_command(
      "help",
      [st = std::weak_ptr<detail::ServerState>(state_)](const json&) {
        json out = json::array();
        if (auto s = st.lock())
          for (const auto& [name, c] : s->commands)
            out.push_back({{"name", name},
                           {"help", c.help},
                           {"async", static_cast<bool>(c.async)},
                           {"mutates", c.access == Access::Mutating}});
        return json{{"commands", out}};
      },
      "List the commands this daemon answers.", Access::ReadOnly);
}

ControlServer::~ControlServer() { stop(); }

void ControlServer::add_command(std::string name, Handler h, std::string help, Access access) {
  check_name(name);
  state_->commands[std::move(name)] = detail::Command{std::move(h), nullptr, std::move(help), access};
}

void ControlServer::add_async_command(std::string name, AsyncHandler h, std::string help, Access access) {
  check_name(name);
  state_->commands[std::move(name)] = detail::Command{nullptr, std::move(h), std::move(help), access};
}

std::vector<std::string> ControlServer::commands() const {
  std::vector<std::string> out;
  for (const auto& [n, _] : state_->commands) out.push_back(n);
  return out;
}

std::size_t ControlServer::client_count() const { return state_->sessions.size(); }

const std::filesystem::path& ControlServer::socket_path() const { return state_->opts.socket_path; }

void ControlServer::start() {
  auto& st = *state_;
  if (st.running) return;
  const std::string path = st.opts.socket_path.string();
  // The temporary name is longer than the final one; both must fit sun_path.
  const std::string tmp = (st.opts.socket_path.parent_path() / fmt::format(".{}.{}.tmp", st.opts.socket_path.filename().string(), ::getpid())).string();
  if (tmp.size() >= sizeof(sockaddr_un{}.sun_path))
    throw ControlServerError(fmt::format("control socket path {} is too long for a UNIX socket; "
                                         "use a shorter daemon.runtime_dir", path));

  struct stat sb {};
  if (::lstat(path.c_str(), &sb) == 0) {
    if (!S_ISSOCK(sb.st_mode))
      throw ControlServerError(fmt::format("{} exists and is not a socket; move it away", path));
    if (someone_listens(path))
      throw ControlServerError(fmt::format("another fabricd is already serving {}; stop it first "
                                           "(systemctl stop fabricd) or use another daemon.runtime_dir", path));
    ::unlink(path.c_str());  // stale: its daemon is gone
  }

  ::unlink(tmp.c_str());
  boost::system::error_code ec;
  st.acceptor.emplace(st.io);
  st.acceptor->open(stream(), ec);
  if (!ec) st.acceptor->bind(stream::endpoint(tmp), ec);
  if (ec) {
    st.acceptor.reset();
    throw ControlServerError(fmt::format("cannot create control socket {}: {}", path, ec.message()));
  }
  auto fail = [&](const std::string& what) {
    int e = errno;
    st.acceptor.reset();
    ::unlink(tmp.c_str());
    throw ControlServerError(fmt::format("cannot {} control socket {}: {}", what, path, std::strerror(e)));
  };
  if (::chmod(tmp.c_str(), st.opts.mode) != 0) fail("set the mode of");
  if (!st.opts.group.empty()) {
    if (auto gid = group_id(st.opts.group)) {
      if (::chown(tmp.c_str(), static_cast<uid_t>(-1), *gid) != 0) fail("set the group of");
    } else {
      spdlog::info("control: group '{}' does not exist; {} stays root-only", st.opts.group, path);
    }
  }
  st.acceptor->listen(asio::socket_base::max_listen_connections, ec);  // bursts queue, not fail
  if (ec) {
    st.acceptor.reset();
    ::unlink(tmp.c_str());
    throw ControlServerError(fmt::format("cannot listen on {}: {}", path, ec.message()));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("publish");
  if (::lstat(path.c_str(), &sb) == 0) st.socket_ino = sb.st_ino;
  st.running = true;
  accept_next();
}

void ControlServer::accept_next() {
  auto st = state_;
  if (!st->running) return;
  st->acceptor->async_accept([st, this](const boost::system::error_code& ec, stream::socket sock) {
    if (!st->running || ec == asio::error::operation_aborted) return;
    if (ec) {
      // EMFILE, ENFILE, ENOBUFS...: back off instead of spinning on a full fd
      // table, and log a failing streak once rather than ten times a second.
      if (st->accept_failures++ == 0)
        spdlog::warn("control: accept failed: {}; retrying every {} ms", ec.message(), st->opts.accept_backoff.count());
      // An idle client's fd is the one we can free for the next attempt —
      // but only for someone waiting: accept() fails with EMFILE before it
      // looks at the queue, so the failure alone does not mean a newcomer.
      if ((ec == boost::system::errc::too_many_files_open || ec == boost::system::errc::too_many_files_open_in_system) &&
          connection_waiting(st->acceptor->native_handle()))
        if (Session* v = detail::idlest(*st, nullptr)) v->evict();
      st->retry.expires_after(st->opts.accept_backoff);
      st->retry.async_wait([st, this](const boost::system::error_code& e) {
        if (!e && st->running) accept_next();
      });
      return;
    }
    if (st->accept_failures) {
      spdlog::info("control: accepting again after {} failed attempts", st->accept_failures);
      st->accept_failures = 0;
    }
    const int fd = sock.native_handle();
    const Peer peer = st->opts.peer_of ? st->opts.peer_of(fd) : peer_credentials(fd);
    if (auto no = detail::make_room(*st, peer.uid))
      detail::say(fd, detail::error_reply(no->error, no->hint, nullptr));  // and `sock` closes
    else
      std::make_shared<Session>(st, std::move(sock), peer)->start();
    accept_next();
  });
}

void ControlServer::stop() {
  auto& st = *state_;
  if (!st.running) return;
  st.running = false;
  boost::system::error_code ec;
  st.retry.cancel();
  if (st.acceptor) st.acceptor->close(ec);
  st.acceptor.reset();
  // close() cancels the session's I/O; its handlers then drop the last reference.
  std::vector<Session*> live(st.sessions.begin(), st.sessions.end());
  for (Session* s : live) s->close();
  struct stat sb {};
  const std::string path = st.opts.socket_path.string();
  if (::lstat(path.c_str(), &sb) == 0 && S_ISSOCK(sb.st_mode) && sb.st_ino == st.socket_ino) ::unlink(path.c_str());
}

}  // namespace vf::control
