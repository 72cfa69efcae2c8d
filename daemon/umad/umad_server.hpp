// Serves the umad ports of the vHCAs (device/abi/vhca_umad.h): one SEQPACKET
// socket per vHCA port, which the preload shim connects /dev/infiniband/umadN
// to. It does what the kernel's ib_umad and ib_mad do for an app: keeps the
// agents it registered, stamps its requests' TIDs with the agent (the upper
// 32 bits, as ib_mad does, so a response finds its way back), hands each MAD
// to the fabric (UmadBackend), and delivers the response -- or, when none
// came within the request's timeout and retries, the request itself with
// status ETIMEDOUT, which is how libibmad learns of a timeout. Control
// thread only; every message from an app is checked again here.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 in C++20)

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sys/types.h>
#include <string>
#include <vector>

#include "daemon/mad/mad.hpp"
#include "daemon/telemetry/umad_stats.hpp"

namespace vf {

struct UmadResult {
  std::optional<mad::Mad> response;
  uint16_t slid = 0;
  std::vector<uint8_t> table;  // non-empty: the whole response, not 256 bytes (an RMPP transfer)
};

class UmadBackend {
 public:
  virtual ~UmadBackend() = default;
  // Sends `m` from the port on QP `qpn` (0 or 1) to `dlid`; `done` gets what
  // came back, on any thread, exactly once.
  virtual void send(uint32_t qpn, uint16_t dlid, const mad::Mad& m, std::function<void(UmadResult)> done) = 0;
};

class UmadServer {
 public:
  // Bounds, so that no app can take more than its share of fabricd:
  // requests awaiting a response or timeout per open port; MADs handed to
  // the lcore and not yet back, per vHCA (each is a task on the dataplane's
  // queue, which every app's verbs share), and per open port; undelivered messages and bytes
  // queued for an app that does not read; open ports per vHCA.
  static constexpr size_t kMaxOutstanding = 256;
  static constexpr size_t kMaxInFlight = 64;
  static constexpr size_t kMaxInFlightPerPort = 16;  // one flooding app leaves the rest to others
  static constexpr size_t kMaxQueued = 1024;
  static constexpr size_t kMaxQueuedBytes = 4 << 20;
  static constexpr size_t kMaxSessions = 64;
  static constexpr uint32_t kMaxTimeoutMs = 60'000;

  // The socket is root's, like a kernel's /dev/infiniband/umad* (0600),
  // and `group`'s too (0660) when there is one: fabricd's admin group.
  UmadServer(boost::asio::io_context& io, std::string socket_path, UmadBackend& backend,
             std::optional<gid_t> group = std::nullopt);
  ~UmadServer();
  UmadServer(const UmadServer&) = delete;
  UmadServer& operator=(const UmadServer&) = delete;
  const std::string& path() const { return path_; }
  // sent, answered, timeouts, rejected, overflow (the rest are the backend's).
  const UmadStats& stats() const { return stats_; }
  size_t sessions() const { return sessions_.size(); }
  // A response that came back over the fabric for a request this port sent
  // (an SMP's, whose answer travels as packets): delivered to the agent
  // whose request it answers, by TID; one nobody awaits any more (timed
  // out, agent gone) is dropped, as ib_mad drops it.
  void on_wire_response(UmadResult r);

 private:
  struct Session;
  struct Pending;
  void accept_next();
  void read_next(const std::shared_ptr<Session>& s);
  bool on_message(const std::shared_ptr<Session>& s, const uint8_t* p, size_t n);
  bool on_send(const std::shared_ptr<Session>& s, uint32_t agent, const uint8_t* p, size_t n);
  void on_result(const std::shared_ptr<Session>& s, uint64_t tid, UmadResult r);
  void time_out(const std::shared_ptr<Session>& s, uint64_t tid);
  // Hands `m` to the backend, counting it in flight; `then` gets what came
  // back on the control thread (not at all once the server is gone).
  void to_fabric(const std::shared_ptr<Session>& s, uint32_t qpn, uint16_t dlid, const mad::Mad& m,
                 std::function<void(UmadResult)> then);
  // The request itself back to the app with ETIMEDOUT, as ib_mad returns a
  // send that got no response.
  void return_unanswered(const std::shared_ptr<Session>& s, const uint8_t* hdr, const mad::Mad& sent);
  void deliver(const std::shared_ptr<Session>& s, const uint8_t* hdr, const uint8_t* mad, size_t len);
  void flush(const std::shared_ptr<Session>& s);
  void drop(const std::shared_ptr<Session>& s);

  boost::asio::io_context& io_;
  std::string path_;
  UmadBackend& backend_;
  boost::asio::posix::stream_descriptor listener_;
  std::map<uint64_t, std::shared_ptr<Session>> sessions_;
  uint64_t next_session_ = 1;
  uint32_t next_hi_tid_ = 1;
  size_t in_flight_ = 0;
  UmadStats stats_;
  // Results come back through the io_context after the lcore ran the MAD;
  // one that arrives after the server is gone finds this expired.
  std::shared_ptr<UmadServer*> alive_ = std::make_shared<UmadServer*>(this);
};

}  // namespace vf
