#include "daemon/vhca/device_server.hpp"

#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "daemon/os/privileges.hpp"
#include "daemon/os/seqpacket_listener.hpp"
#include "device/abi/vhca_abi.h"

namespace vf {
namespace asio = boost::asio;

size_t request_size(uint32_t cmd) {
  switch (cmd) {
    case VHCA_CMD_OPEN_CONTEXT: return sizeof(vhca_open_context_req);
    case VHCA_CMD_QUERY_DEVICE:
    case VHCA_CMD_ALLOC_PD:
    case VHCA_CMD_QUERY_CLOCK: return sizeof(vhca_req_hdr);
    case VHCA_CMD_QUERY_PORT: return sizeof(vhca_query_port_req);
    case VHCA_CMD_DEALLOC_PD:
    case VHCA_CMD_DEREG_MR:
    case VHCA_CMD_DESTROY_CQ:
    case VHCA_CMD_DESTROY_QP:
    case VHCA_CMD_QUERY_SRQ:
    case VHCA_CMD_DESTROY_SRQ:
    case VHCA_CMD_DESTROY_AH:
    case VHCA_CMD_DEALLOC_MW: return sizeof(vhca_handle_req);
    case VHCA_CMD_ALLOC_MW: return sizeof(vhca_alloc_mw_req);
    case VHCA_CMD_ATTACH_MCAST:
    case VHCA_CMD_DETACH_MCAST: return sizeof(vhca_mcast_req);
    case VHCA_CMD_CREATE_SRQ: return sizeof(vhca_create_srq_req);
    case VHCA_CMD_MODIFY_SRQ: return sizeof(vhca_modify_srq_req);
    case VHCA_CMD_CREATE_AH: return sizeof(vhca_create_ah_req);
    case VHCA_CMD_REG_MR: return sizeof(vhca_reg_mr_req);
    case VHCA_CMD_CREATE_CQ: return sizeof(vhca_create_cq_req);
    case VHCA_CMD_RESIZE_CQ: return sizeof(vhca_resize_cq_req);
    case VHCA_CMD_REREG_MR: return sizeof(vhca_rereg_mr_req);
    case VHCA_CMD_CREATE_QP: return sizeof(vhca_create_qp_req);
    case VHCA_CMD_MODIFY_QP: return sizeof(vhca_modify_qp_req);
    case VHCA_CMD_QUERY_QP: return sizeof(vhca_query_qp_req);
    default: return 0;
  }
}

int check_request_framing(const uint8_t* msg, size_t len) {
  if (len < sizeof(vhca_req_hdr)) return EPROTO;
  vhca_req_hdr h;
  std::memcpy(&h, msg, sizeof(h));
  if (h.abi_version != VHCA_ABI_VERSION) return EPROTONOSUPPORT;
  const size_t want = request_size(h.cmd);
  if (want == 0) return EOPNOTSUPP;
  if (h.length != len || len != want) return EINVAL;
  return 0;
}

DeviceReply status_reply(const uint8_t* msg, size_t len, int status) {
  vhca_rsp_hdr r{};
  if (len >= sizeof(vhca_req_hdr)) {
    vhca_req_hdr h;
    std::memcpy(&h, msg, sizeof(h));
    r.cmd = h.cmd;
    r.seq = h.seq;
  }
  r.length = sizeof(r);
  r.status = status;
  DeviceReply out;
  out.bytes.resize(sizeof(r));
  std::memcpy(out.bytes.data(), &r, sizeof(r));
  return out;
}

struct DeviceServer::Client {
  Client(asio::io_context& io, int fd, uint32_t id_, pid_t pid) : sock(io, fd), id(id_), owner(pid) {}
  asio::posix::stream_descriptor sock;
  uint32_t id;
  pid_t owner;          // the process that connected (SO_PEERCRED)
  bool have_ids = false;  // uid/gid of its first request, which later ones must match
  uid_t uid = 0;
  gid_t gid = 0;
  bool gone = false;
};

// The kernel's word on who sent one message (SCM_CREDENTIALS, SO_PASSCRED on
// the socket): only the process that opened the context may use it, as
// uverbs' ib_safe_file_access refuses a forked child or a changed identity.
// A child that inherited the socket, or an image exec'd in the opener's pid
// that kept it, gets EACCES; what it could reach anyway is bounded by the
// address space the opener handed over (device/engine/dma.hpp).
int DeviceServer::check_sender(Client& c, const ucred* sender) {
  if (!sender || sender->pid != c.owner) return EACCES;
  if (!c.have_ids) {
    c.have_ids = true;
    c.uid = sender->uid;
    c.gid = sender->gid;
    return 0;
  }
  return sender->uid == c.uid && sender->gid == c.gid ? 0 : EACCES;
}

DeviceServer::DeviceServer(asio::io_context& io, std::string socket_path, DeviceBackend& backend)
    : io_(io), path_(std::move(socket_path)), backend_(backend), listener_(io) {
  // Accepted sockets inherit SO_PASSCRED: every message carries its sender.
  // Any local user may open a vHCA, like /dev/infiniband/uverbs* on most
  // distros; each object is tied to the connecting process and its own
  // address space.
  const int fd = listen_seqpacket(path_, true);
  listener_.assign(fd);
  accept_next();
}

DeviceServer::~DeviceServer() {
  boost::system::error_code ec;
  listener_.close(ec);
  unlink(path_.c_str());
  for (auto& [id, c] : clients_) {
    c->gone = true;
    c->sock.close(ec);
    backend_.closed(id);
  }
}

void DeviceServer::accept_next() {
  listener_.async_wait(asio::posix::stream_descriptor::wait_read, [this](boost::system::error_code ec) {
    if (ec) return;
    for (;;) {
      int fd = accept4(listener_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) break;
      ucred cred{};
      socklen_t len = sizeof(cred);
      if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
        close(fd);
        continue;
      }
      auto c = std::make_shared<Client>(io_, fd, next_client_id_++, cred.pid);
      clients_[c->id] = c;
      backend_.opened(c->id, DevicePeer{cred.pid, cred.uid, (process_capabilities(cred.pid) >> CAP_NET_RAW & 1) != 0});
      read_next(c);
    }
    accept_next();
  });
}

void DeviceServer::read_next(const std::shared_ptr<Client>& c) {
  c->sock.async_wait(asio::posix::stream_descriptor::wait_read, [this, c](boost::system::error_code ec) {
    if (ec || c->gone) return drop(c);
    std::vector<uint8_t> buf(VHCA_MAX_MSG);
    iovec iov{buf.data(), buf.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    // Requests carry at most two fds (OPEN_CONTEXT's pipe and mem file) and
    // the sender's credentials; room for a few more fds so a hostile
    // client's extras arrive (and get closed) instead of leaking into
    // MSG_CTRUNC handling.
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8) + CMSG_SPACE(sizeof(ucred))];
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n = recvmsg(c->sock.native_handle(), &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return read_next(c);
    std::vector<int> fds;
    ucred sender{};
    bool have_sender = false;
    if (n >= 0) {
      for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS &&
            cm->cmsg_len == CMSG_LEN(sizeof(ucred))) {
          std::memcpy(&sender, CMSG_DATA(cm), sizeof(sender));
          have_sender = true;
        } else if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
          const size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
          for (size_t i = 0; i < count; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            fds.push_back(fd);
          }
        }
      }
    }
    auto close_all = [&fds] {
      for (int fd : fds) close(fd);
    };
    if (n <= 0) {  // EOF: the app closed or died
      close_all();
      return drop(c);
    }
    if (msg.msg_flags & MSG_TRUNC) n = ssize_t(buf.size()) + 1;  // oversized: fails framing
    buf.resize(size_t(n) > buf.size() ? buf.size() : size_t(n));
    if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
      close_all();
      send_reply(c, status_reply(buf.data(), buf.size(), EMSGSIZE));
      return read_next(c);
    }
    if (int err = check_sender(*c, have_sender ? &sender : nullptr)) {
      close_all();
      send_reply(c, status_reply(buf.data(), buf.size(), err));
      return read_next(c);
    }
    on_message(c, std::move(buf), std::move(fds));
  });
}

void DeviceServer::on_message(const std::shared_ptr<Client>& c, std::vector<uint8_t> msg,
                              std::vector<int> fds) {
  if (int err = check_request_framing(msg.data(), msg.size())) {
    for (int fd : fds) close(fd);
    send_reply(c, status_reply(msg.data(), msg.size(), err));
    return read_next(c);
  }
  // Not reading again until the reply is out keeps one request in flight
  // per client, in order (the provider serialises its requests anyway).
  backend_.request(c->id, std::move(msg), std::move(fds), [this, c](DeviceReply r) {
    asio::post(io_, [this, c, r = std::move(r)]() mutable {
      if (c->gone) {
        for (int fd : r.fds) close(fd);
        return;
      }
      send_reply(c, std::move(r));
      read_next(c);
    });
  });
}

void DeviceServer::send_reply(const std::shared_ptr<Client>& c, DeviceReply r) {
  // An optional fd the backend did not produce (-1) is simply not sent.
  std::erase(r.fds, -1);
  iovec iov{r.bytes.data(), r.bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * (r.fds.empty() ? 1 : r.fds.size())));
  if (!r.fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * r.fds.size());
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * r.fds.size());
    std::memcpy(CMSG_DATA(cm), r.fds.data(), sizeof(int) * r.fds.size());
  }
  // Replies are small and the provider waits for each: a full socket buffer
  // means a misbehaving client, which loses its connection.
  if (sendmsg(c->sock.native_handle(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT) != ssize_t(r.bytes.size()))
    c->gone = true;
  for (int fd : r.fds) close(fd);
}

void DeviceServer::drop(const std::shared_ptr<Client>& c) {
  if (clients_.erase(c->id) == 0) return;
  c->gone = true;
  boost::system::error_code ec;
  c->sock.close(ec);
  backend_.closed(c->id);
}

}  // namespace vf
