#include "daemon/cm/ucma_server.hpp"

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <span>
#include <vector>

#include "daemon/cm/service.hpp"
#include "daemon/os/seqpacket_listener.hpp"
#include "device/abi/vhca_ucma.h"

namespace vf::cm {
namespace asio = boost::asio;

struct UcmaServer::Session {
  Session(asio::io_context& io, int fd, uint64_t n, pid_t p) : sock(io, fd), number(n), pid(p) {}
  ~Session() {
    if (event_fd >= 0) ::close(event_fd);
  }
  asio::posix::stream_descriptor sock;
  uint64_t number;
  pid_t pid;             // SO_PEERCRED when it connected
  uint64_t channel = 0;  // 0: not opened yet
  int event_fd = -1;     // our end of the app's event socket
  bool gone = false;
};

UcmaServer::UcmaServer(asio::io_context& io, std::string socket_path, Service& service)
    : io_(io), path_(std::move(socket_path)), service_(service), listener_(io) {
  listener_.assign(listen_seqpacket(path_, false, 0666));
  accept_next();
}

UcmaServer::~UcmaServer() {
  boost::system::error_code ec;
  listener_.close(ec);
  ::unlink(path_.c_str());
  for (auto& [n, s] : sessions_) {
    s->gone = true;
    s->sock.close(ec);
  }
}

void UcmaServer::accept_next() {
  listener_.async_wait(asio::posix::stream_descriptor::wait_read, [this](boost::system::error_code ec) {
    if (ec) return;
    for (;;) {
      const int fd = ::accept4(listener_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) break;
      ucred who{};
      socklen_t len = sizeof(who);
      if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &who, &len) != 0) who.pid = 0;
      if (sessions_.size() >= kMaxSessions || per_process_[who.pid] >= kMaxSessionsPerProcess) {
        ::close(fd);  // the shim's open() fails with ENODEV
        if (!refusing_)
          spdlog::warn("rdma_cm: pid {} has {} channels open, {} in all; refusing more until one closes", who.pid,
                       per_process_[who.pid], sessions_.size());
        refusing_ = true;
        continue;
      }
      refusing_ = false;
      ++per_process_[who.pid];
      auto s = std::make_shared<Session>(io_, fd, next_session_++, who.pid);
      sessions_[s->number] = s;
      read_next(s);
    }
    accept_next();
  });
}

void UcmaServer::read_next(const std::shared_ptr<Session>& s) {
  s->sock.async_wait(asio::posix::stream_descriptor::wait_read, [this, s](boost::system::error_code ec) {
    if (s->gone) return;
    if (ec) return drop(s);
    for (int i = 0; i < 64; ++i) {  // a bounded batch: one app cannot starve the rest
      std::array<uint8_t, VHCA_UCMA_MAX_CMD + 1> buf;
      const ssize_t n = ::recv(s->sock.native_handle(), buf.data(), buf.size(), MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      if (n <= 0 || size_t(n) > VHCA_UCMA_MAX_CMD || !on_message(s, buf.data(), size_t(n))) return drop(s);
      if (s->gone) return;
    }
    read_next(s);
  });
}

bool UcmaServer::open(const std::shared_ptr<Session>& s) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return false;
  const auto [channel, secret] = service_.open_channel(s->pid);
  vhca_ucma_open_reply rep{0, 0, channel, secret};
  iovec iov{&rep, sizeof(rep)};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    cmsghdr align;
  } ctl{};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = ctl.buf;
  m.msg_controllen = sizeof(ctl.buf);
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &pair[1], sizeof(int));
  const bool sent = ::sendmsg(s->sock.native_handle(), &m, MSG_NOSIGNAL | MSG_DONTWAIT) == ssize_t(sizeof(rep));
  ::close(pair[1]);  // the app has its copy
  s->event_fd = pair[0];
  ::shutdown(pair[0], SHUT_RD);
  s->channel = channel;
  by_channel_[channel] = s;
  return sent;
}

bool UcmaServer::on_message(const std::shared_ptr<Session>& s, const uint8_t* p, size_t n) {
  if (!s->channel) {
    uint32_t op = 0;
    if (n != sizeof(op)) return false;
    std::memcpy(&op, p, sizeof(op));
    return op == VHCA_UCMA_OPEN && open(s);
  }
  std::vector<uint8_t> out;
  const int err = service_.command(s->channel, {p, n}, out);
  vhca_ucma_reply rep{err, uint32_t(out.size())};
  iovec iov[2] = {{&rep, sizeof(rep)}, {out.data(), out.size()}};
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = out.empty() ? 1 : 2;
  // The shim waits for this reply before it sends anything else, so the
  // socket has room; one that has none is not the shim.
  return ::sendmsg(s->sock.native_handle(), &m, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0;
}

void UcmaServer::notify(uint64_t channel) {
  auto it = by_channel_.find(channel);
  if (it == by_channel_.end() || it->second->event_fd < 0) return;
  const char token = VHCA_UCMA_EVENT;
  // The events stay queued in the service; a full socket (an app that never
  // fetches) only costs it wake-ups it would not take anyway.
  (void)::send(it->second->event_fd, &token, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

void UcmaServer::announce_removal() {
  service_.device_removal([this](uint64_t channel, std::span<const uint8_t> ev) {
    auto it = by_channel_.find(channel);
    if (it == by_channel_.end() || it->second->event_fd < 0) return;
    std::vector<uint8_t> msg(1 + ev.size());
    msg[0] = VHCA_UCMA_REMOVAL;
    std::memcpy(msg.data() + 1, ev.data(), ev.size());
    // All or nothing: a partial record would be read as garbage. An app that
    // left its socket full gets ENODEV instead.
    int pending = 0;
    if (::ioctl(it->second->event_fd, TIOCOUTQ, &pending) == 0 && pending > (1 << 16)) {
      spdlog::debug("rdma_cm: channel {}: event socket full, DEVICE_REMOVAL not sent", channel);
      return;
    }
    (void)::send(it->second->event_fd, msg.data(), msg.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  });
}

void UcmaServer::drop(const std::shared_ptr<Session>& s) {
  if (s->gone) return;
  s->gone = true;
  boost::system::error_code ec;
  s->sock.close(ec);
  if (s->channel) {
    by_channel_.erase(s->channel);
    service_.close_channel(s->channel);  // its ids go, telling their peers
  }
  sessions_.erase(s->number);
  if (auto it = per_process_.find(s->pid); it != per_process_.end() && --it->second == 0) per_process_.erase(it);
}

}  // namespace vf::cm
