#include "daemon/umad/umad_server.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <vector>

#include "daemon/os/seqpacket_listener.hpp"
#include "device/abi/vhca_umad.h"

namespace vf {
namespace asio = boost::asio;

namespace {
constexpr size_t kHdr = sizeof(vhca_umad_hdr);
constexpr size_t kMinMad = 36;  // ib_umad's shortest write: MAD + RMPP headers
constexpr uint32_t kGsiQkey = 0x80010000;

struct Agent {
  bool registered = false;
  vhca_umad_agent reg{};
  uint32_t hi_tid = 0;
};
}  // namespace

struct UmadServer::Pending {
  uint32_t agent = 0;
  std::array<uint8_t, kHdr> hdr{};  // as the app sent it
  mad::Mad sent{};                  // with our TID
  std::unique_ptr<asio::steady_timer> timer;
};

struct UmadServer::Session {
  Session(asio::io_context& io, int fd, uint64_t id_) : sock(io, fd), id(id_) {}
  asio::posix::stream_descriptor sock;
  uint64_t id;
  std::array<Agent, VHCA_UMAD_MAX_AGENTS> agents{};
  std::map<uint64_t, Pending> pending;  // by TID as sent
  std::deque<std::vector<uint8_t>> out;  // not yet taken by the app
  size_t out_bytes = 0;
  size_t in_flight = 0;  // of the server's in_flight_
  bool writing = false;
  bool gone = false;
};

UmadServer::UmadServer(asio::io_context& io, std::string socket_path, UmadBackend& backend,
                       std::optional<gid_t> group)
    : io_(io), path_(std::move(socket_path)), backend_(backend), listener_(io) {
  // A umad port can clear any port's counters and create multicast groups:
  // root's alone, as the kernel's umad nodes are, or the admin group's too.
  const int fd = listen_seqpacket(path_, false, group ? 0660 : 0600, group);
  listener_.assign(fd);
  accept_next();
}

UmadServer::~UmadServer() {
  boost::system::error_code ec;
  listener_.close(ec);
  unlink(path_.c_str());
  for (auto& [id, s] : sessions_) {
    s->gone = true;
    s->pending.clear();
    s->sock.close(ec);
  }
}

void UmadServer::accept_next() {
  listener_.async_wait(asio::posix::stream_descriptor::wait_read, [this](boost::system::error_code ec) {
    if (ec) return;
    for (;;) {
      int fd = accept4(listener_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) break;
      if (sessions_.size() >= kMaxSessions) {
        ++stats_.overflow;  // the app reads EOF: its port is gone, as far as it can tell
        ::close(fd);
        continue;
      }
      auto s = std::make_shared<Session>(io_, fd, next_session_++);
      sessions_[s->id] = s;
      read_next(s);
    }
    accept_next();
  });
}

void UmadServer::read_next(const std::shared_ptr<Session>& s) {
  s->sock.async_wait(asio::posix::stream_descriptor::wait_read, [this, s](boost::system::error_code ec) {
    if (s->gone) return;  // dropped, or the server is being destroyed: `this` may be gone
    if (ec) return drop(s);
    // A bounded batch per wake-up, so one chatty app cannot starve the rest.
    for (int i = 0; i < 64; ++i) {
      std::array<uint8_t, sizeof(vhca_umad_msg) + kHdr + mad::kMadSize + 1> buf;
      const ssize_t n = recv(s->sock.native_handle(), buf.data(), buf.size(), MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      if (n <= 0) return drop(s);  // closed, or the app died
      if (!on_message(s, buf.data(), size_t(n))) {
        ++stats_.rejected;
        return drop(s);
      }
      if (s->gone) return;
    }
    read_next(s);
  });
}

// Registration and sends, checked as ib_umad checks them; false: the
// message could not come from the shim, and the connection goes.
bool UmadServer::on_message(const std::shared_ptr<Session>& s, const uint8_t* p, size_t n) {
  if (n < sizeof(vhca_umad_msg)) return false;
  vhca_umad_msg m;
  std::memcpy(&m, p, sizeof(m));
  if (m.agent >= VHCA_UMAD_MAX_AGENTS) return false;
  Agent& a = s->agents[m.agent];
  const uint8_t* body = p + sizeof(m);
  const size_t len = n - sizeof(m);
  switch (m.op) {
    case VHCA_UMAD_OP_REGISTER:
      if (len != sizeof(vhca_umad_agent) || a.registered) return false;
      std::memcpy(&a.reg, body, sizeof(a.reg));
      if (a.reg.qpn > 1) return false;
      a.registered = true;
      a.hi_tid = next_hi_tid_++;
      return true;
    case VHCA_UMAD_OP_UNREGISTER:
      if (len != 0 || !a.registered) return false;
      a = Agent{};
      std::erase_if(s->pending, [&](const auto& kv) { return kv.second.agent == m.agent; });
      return true;
    case VHCA_UMAD_OP_SEND:
      if (!a.registered || len < kHdr + kMinMad || len > kHdr + mad::kMadSize) return false;
      return on_send(s, m.agent, body, len);
    default:
      return false;
  }
}

bool UmadServer::on_send(const std::shared_ptr<Session>& s, uint32_t agent, const uint8_t* p, size_t n) {
  vhca_umad_hdr h;
  std::memcpy(&h, p, kHdr);
  mad::Mad m{};  // shorter MADs are zero-padded, as ib_create_send_mad does
  std::memcpy(m.data(), p + kHdr, n - kHdr);
  ++stats_.sent;
  const Agent& a = s->agents[agent];
  const uint32_t qpn = a.reg.qpn;
  const uint16_t dlid = ntohs(h.lid);
  if (!mad::expects_response(m) || mad::is_response(m)) {
    ++stats_.no_agent;  // responses, traps, sends: no agent here takes unsolicited MADs
    return true;
  }
  // The agent owns the upper half of its requests' TIDs (ib_mad's hi_tid).
  const uint64_t tid = uint64_t(a.hi_tid) << 32 | (mad::tid(m) & 0xFFFFFFFFu);
  mad::set_tid(m, tid);
  if (s->pending.size() >= kMaxOutstanding || s->pending.count(tid) || in_flight_ >= kMaxInFlight ||
      s->in_flight >= kMaxInFlightPerPort) {
    // The kernel would be out of send buffers: the request is lost, and
    // the app learns it at once rather than never.
    ++stats_.overflow;
    return_unanswered(s, p, m);
    return true;
  }
  if (!h.timeout_ms) {
    // No timeout: ib_mad keeps no record of the send, so a response finds
    // no request to match and is dropped. The request still does its work.
    to_fabric(s, qpn, dlid, m, [](UmadResult) {});
    return true;
  }
  Pending& pend = s->pending[tid];
  pend.agent = agent;
  std::memcpy(pend.hdr.data(), p, kHdr);
  pend.sent = m;
  const uint64_t ms = std::min<uint64_t>(uint64_t(h.timeout_ms) * (uint64_t(h.retries) + 1), kMaxTimeoutMs);
  pend.timer = std::make_unique<asio::steady_timer>(io_, std::chrono::milliseconds(ms));
  pend.timer->async_wait([this, s, tid](boost::system::error_code ec) {
    if (!ec && !s->gone) time_out(s, tid);
  });
  to_fabric(s, qpn, dlid, m, [this, s, tid](UmadResult r) { on_result(s, tid, std::move(r)); });
  return true;
}

void UmadServer::to_fabric(const std::shared_ptr<Session>& s, uint32_t qpn, uint16_t dlid, const mad::Mad& m,
                           std::function<void(UmadResult)> then) {
  ++in_flight_;
  ++s->in_flight;
  backend_.send(qpn, dlid, m,
                [&io = io_, alive = std::weak_ptr<UmadServer*>(alive_), s, then = std::move(then)](UmadResult r) {
                  asio::post(io, [alive, s, then, r = std::move(r)]() mutable {
                    --s->in_flight;
                    const auto self = alive.lock();
                    if (!self) return;
                    --(*self)->in_flight_;
                    then(std::move(r));
                  });
                });
}

void UmadServer::return_unanswered(const std::shared_ptr<Session>& s, const uint8_t* hdr, const mad::Mad& sent) {
  vhca_umad_hdr h;
  std::memcpy(&h, hdr, kHdr);
  h.status = ETIMEDOUT;
  h.length = uint32_t(kHdr + mad::kMadSize);
  ++stats_.timeouts;
  deliver(s, reinterpret_cast<const uint8_t*>(&h), sent.data(), sent.size());
}

void UmadServer::on_result(const std::shared_ptr<Session>& s, uint64_t tid, UmadResult r) {
  if (s->gone || !r.response) return;  // no answer: the timer returns the request
  auto it = s->pending.find(tid);
  if (it == s->pending.end()) return;  // timed out already, or the agent left
  vhca_umad_hdr h{};
  h.id = it->second.agent;
  const uint8_t* body = r.table.empty() ? r.response->data() : r.table.data();
  const size_t len = r.table.empty() ? mad::kMadSize : r.table.size();
  h.length = uint32_t(kHdr + len);
  const bool smi = s->agents[h.id].reg.qpn == 0;
  h.qpn = htonl(smi ? 0 : 1);
  h.qkey = htonl(smi ? 0 : kGsiQkey);
  h.lid = htons(r.slid);
  if (it->second.timer) it->second.timer->cancel();
  s->pending.erase(it);
  ++stats_.answered;
  deliver(s, reinterpret_cast<const uint8_t*>(&h), body, len);
}

void UmadServer::on_wire_response(UmadResult r) {
  if (!r.response) return;
  const uint64_t tid = mad::tid(*r.response);
  for (auto& [id, s] : sessions_)
    if (s->pending.count(tid)) return on_result(s, tid, std::move(r));
}

void UmadServer::time_out(const std::shared_ptr<Session>& s, uint64_t tid) {
  auto it = s->pending.find(tid);
  if (s->gone || it == s->pending.end()) return;
  const std::array<uint8_t, kHdr> hdr = it->second.hdr;
  const mad::Mad sent = it->second.sent;
  s->pending.erase(it);
  return_unanswered(s, hdr.data(), sent);
}

void UmadServer::deliver(const std::shared_ptr<Session>& s, const uint8_t* hdr, const uint8_t* mad, size_t len) {
  if (s->out.size() >= kMaxQueued || s->out_bytes + kHdr + len > kMaxQueuedBytes) {
    ++stats_.overflow;  // an app that does not read loses what it would not read
    return;
  }
  std::vector<uint8_t> msg(kHdr + len);
  std::memcpy(msg.data(), hdr, kHdr);
  std::memcpy(msg.data() + kHdr, mad, len);
  s->out_bytes += msg.size();
  s->out.push_back(std::move(msg));
  flush(s);
}

void UmadServer::flush(const std::shared_ptr<Session>& s) {
  while (!s->out.empty() && !s->gone) {
    const auto& msg = s->out.front();
    const ssize_t n = send(s->sock.native_handle(), msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n == ssize_t(msg.size())) {
      s->out_bytes -= msg.size();
      s->out.pop_front();
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!s->writing) {
        s->writing = true;
        s->sock.async_wait(asio::posix::stream_descriptor::wait_write, [this, s](boost::system::error_code ec) {
          s->writing = false;
          if (!ec && !s->gone) flush(s);
        });
      }
      return;
    }
    return drop(s);
  }
}

void UmadServer::drop(const std::shared_ptr<Session>& s) {
  if (sessions_.erase(s->id) == 0) return;
  s->gone = true;
  s->pending.clear();  // their timers' handlers find nothing
  s->out.clear();
  boost::system::error_code ec;
  s->sock.close(ec);
}

}  // namespace vf
