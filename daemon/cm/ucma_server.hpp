// The socket behind /dev/infiniband/rdma_cm (device/abi/vhca_ucma.h): one
// SEQPACKET connection per open() of the device, each a channel of the
// connection manager, with its event socket handed to the app. Open to
// every local user, as the kernel's rdma_cm device is (0666); everything a
// connection sends is checked by cm::Service. Control thread only.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 in C++20)

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <sys/types.h>

namespace vf::cm {

class Service;

class UcmaServer {
 public:
  // Open channels, in all and per process. librdmacm's sync API opens one
  // per id (rdma_create_ep, rdma_get_request), so a process may need many;
  // the kernel bounds them only by the app's fd limit (1024 by default).
  static constexpr size_t kMaxSessions = 4096;
  static constexpr size_t kMaxSessionsPerProcess = 1024;

  UcmaServer(boost::asio::io_context& io, std::string socket_path, Service& service);
  ~UcmaServer();
  UcmaServer(const UcmaServer&) = delete;
  UcmaServer& operator=(const UcmaServer&) = delete;
  const std::string& path() const { return path_; }
  size_t sessions() const { return sessions_.size(); }
  // An event was queued on `channel`: wake its app.
  void notify(uint64_t channel);
  // fabricd is stopping: each id on a vHCA gets DEVICE_REMOVAL, written
  // whole to its channel's event socket (device/abi/vhca_ucma.h).
  void announce_removal();

 private:
  struct Session;
  void accept_next();
  void read_next(const std::shared_ptr<Session>& s);
  bool on_message(const std::shared_ptr<Session>& s, const uint8_t* p, size_t n);
  bool open(const std::shared_ptr<Session>& s);
  void drop(const std::shared_ptr<Session>& s);

  boost::asio::io_context& io_;
  std::string path_;
  Service& service_;
  boost::asio::posix::stream_descriptor listener_;
  std::map<uint64_t, std::shared_ptr<Session>> sessions_;  // by session number
  std::map<uint64_t, std::shared_ptr<Session>> by_channel_;
  uint64_t next_session_ = 1;
  bool refusing_ = false;
  std::map<pid_t, size_t> per_process_;  // open sessions by the connecting process  // at kMaxSessions: warned once until a session is let in again
};

}  // namespace vf::cm
