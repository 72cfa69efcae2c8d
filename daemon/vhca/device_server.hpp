// Serves the per-vHCA SEQPACKET sockets providers connect to. It owns the
// socket side only: framing checks, peer credentials, fd passing. What a
// request means is decided by a DeviceBackend (the engine, on the lcore).
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace vf {

struct DeviceReply {
  std::vector<uint8_t> bytes;
  std::vector<int> fds;  // sent with SCM_RIGHTS, then closed by the server
};

// Who connected, as known when it did: SO_PEERCRED, and whether it held
// CAP_NET_RAW (read from /proc here, on the control thread, never on the
// lcore; the kernel checks it per call, an app's rights rarely change).
struct DevicePeer {
  pid_t pid = 0;
  uid_t uid = 0;
  bool cap_net_raw = false;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // A request that passed the framing checks (size, header, version, cmd),
  // with the fds it carried (SCM_RIGHTS; now owned by the backend).
  // `done` must be called exactly once, on any thread.
  virtual void request(uint32_t client, std::vector<uint8_t> msg, std::vector<int> fds,
                       std::function<void(DeviceReply)> done) = 0;
  virtual void opened(uint32_t client, const DevicePeer& peer) = 0;
  virtual void closed(uint32_t client) = 0;
};

// Returns 0 when `msg` is a well-formed request, else the errno to reply with.
int check_request_framing(const uint8_t* msg, size_t len);
size_t request_size(uint32_t cmd);  // exact size of a request, 0 if unknown
// A reply carrying only a status (for rejected requests).
DeviceReply status_reply(const uint8_t* msg, size_t len, int status);

class DeviceServer {
 public:
  DeviceServer(boost::asio::io_context& io, std::string socket_path, DeviceBackend& backend);
  ~DeviceServer();
  const std::string& path() const { return path_; }
  size_t client_count() const { return clients_.size(); }

 private:
  struct Client;
  static int check_sender(Client& c, const ucred* sender);
  void accept_next();
  void read_next(const std::shared_ptr<Client>& c);
  void on_message(const std::shared_ptr<Client>& c, std::vector<uint8_t> msg, std::vector<int> fds);
  void send_reply(const std::shared_ptr<Client>& c, DeviceReply r);
  void drop(const std::shared_ptr<Client>& c);

  boost::asio::io_context& io_;
  std::string path_;
  DeviceBackend& backend_;
  boost::asio::posix::stream_descriptor listener_;
  std::map<uint32_t, std::shared_ptr<Client>> clients_;
  static inline uint32_t next_client_id_ = 1;  // unique across all vHCAs
};

}  // namespace vf
