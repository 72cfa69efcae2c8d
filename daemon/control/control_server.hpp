// fabricd's control API: newline-delimited JSON over a UNIX stream socket,
// <runtime_dir>/control.sock, served on the daemon's Boost.Asio control thread.
//
//   request : {"cmd": "hca.list", "args": {...}, "id": <optional, echoed>}\n
//   reply   : {"ok": true,  "result": <any>, "id": ...}\n
//          or {"ok": false, "error": "<what went wrong>", "hint": "<what to do>", "id": ...}\n
//
// Requests on one connection are answered in order, one at a time. Every
// client is hostile: lines are capped (an oversized line gets an error and the
// connection is closed), malformed JSON gets an error and the connection stays
// usable, a client must send each complete request line within
// request_timeout of connecting or of the previous reply, and must read its
// replies within write_timeout (slowloris / stalled readers are dropped), and
// nothing one client does can stall or crash another.
//
// Nobody can lock the socket by holding connections open:
//  - The connection table (max_clients) never refuses a newcomer while some
//    connection is idle (waiting for its next request, possibly part-way
//    through trickling one in): the one idle the longest — by when it last
//    finished a request or connected, not by its last byte — is closed to make
//    room. A flood of idle connections therefore only ever evicts itself, and
//    fabricctl, which sends its request as soon as it connects, gets through.
//  - Connections that are busy (a request being handled or its reply being
//    written) are not evicted; they are bounded by reply_timeout and
//    write_timeout, and max_clients_per_uid caps how many one peer uid
//    (SO_PEERCRED) may hold, so one user cannot take every slot with busy ones.
//    Only when every slot is busy is a newcomer refused.
//  - The listen backlog is the kernel's maximum, so a burst of connects queues
//    instead of failing.
//  - When accept fails for want of file descriptors (EMFILE/ENFILE) the
//    listener backs off for accept_backoff instead of spinning, and the
//    longest-idle connection is closed so that the next attempt gets an fd.
//
// Read-only and mutating commands: every command is registered with its
// Access. Anyone who can connect (the socket is 0660 root:vfabric) may run
// ReadOnly ones; Mutating ones, which change the fabric, only a peer that
// may_mutate() — uid 0, fabricd's own uid, or a member of the admin group
// (daemon.admin_group) — by the kernel's credentials of the connecting
// process (SO_PEERCRED, SO_PEERGROUPS). Anyone else gets a "permission
// denied" error and the connection stays usable. Access defaults to
// Mutating, so a command registered without thought is admin-only.
//
// Threading: one io_context, run by one thread. Construct, add commands,
// start() and stop() on that thread (or before it runs). Handlers run on it.
// Only Reply (the async completion) may be used from any thread.
//
// The JSON shapes of the daemon's commands (status, hca.list, env) are
// documented in ctl/control-api.md; fabricctl renders exactly those.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace vf::control {

using json = nlohmann::json;

// Thrown by a handler for a clean error reply: {"ok":false,"error":what(),"hint":hint()}.
class ControlError : public std::runtime_error {
 public:
  explicit ControlError(const std::string& message, std::string hint = {})
      : std::runtime_error(message), hint_(std::move(hint)) {}
  const std::string& hint() const noexcept { return hint_; }

 private:
  std::string hint_;
};

// Thrown by start() when the socket cannot be served.
class ControlServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
struct ReplyState;
struct ServerState;
}  // namespace detail

// Completion of an asynchronous command. Copyable; callable from any thread;
// the first ok()/error() wins and later calls are ignored. If every copy is
// dropped without an answer the client gets an error instead of waiting, and
// if the answer takes longer than ServerOptions::reply_timeout the client gets
// a timeout error and the late answer is discarded. Copies must not outlive
// the io_context (answering posts to it).
class Reply {
 public:
  void ok(json result) const;
  // Builds the result on the control thread: lets the dataplane answer with a
  // plain snapshot and leave the formatting to the control side.
  void ok_with(std::function<json()> make) const;
  void error(std::string message, std::string hint = {}) const;
  bool done() const;  // answered, timed out, or the client went away

 private:
  friend class Session;
  explicit Reply(std::shared_ptr<detail::ReplyState> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::ReplyState> state_;
};

using Handler = std::function<json(const json& args)>;
using AsyncHandler = std::function<void(const json& args, Reply reply)>;

enum class Access { ReadOnly, Mutating };

// Who is at the other end of a connection, as the kernel saw it at connect().
struct Peer {
  uid_t uid = static_cast<uid_t>(-1);  // -1: unknown (counted together, trusted with nothing)
  gid_t gid = static_cast<gid_t>(-1);
  pid_t pid = 0;
  std::vector<gid_t> groups;  // supplementary groups
};
// SO_PEERCRED and SO_PEERGROUPS of a connected UNIX socket.
Peer peer_credentials(int fd);

// Whether `p` may run Mutating commands of a daemon running as `daemon_uid`.
bool may_mutate(const Peer& p, uid_t daemon_uid, std::optional<gid_t> admin_gid);

struct ServerOptions {
  std::filesystem::path socket_path;  // <runtime_dir>/control.sock
  // 0660: the control API can reconfigure the lab, so it is for root and a
  // group, not every local user. Members of `group` (created by the admin:
  // `groupadd vfabric; usermod -aG vfabric alice`) can run fabricctl; 0666
  // opens it to everyone.
  mode_t mode = 0660;
  std::string group = "vfabric";      // chgrp the socket when this group exists; empty = leave
  std::size_t max_line = 64 * 1024;   // request line limit in bytes (newline excluded)
  std::size_t max_clients = 128;      // connections; when full, the longest-idle one makes room
  std::size_t max_clients_per_uid = 16;  // connections one peer uid may hold
  // fabricctl sends its request right after connecting; 5 s is ample for a
  // script and short enough that a squatter's slot turns over quickly.
  std::chrono::milliseconds request_timeout{5'000};  // to send a complete request line
  std::chrono::milliseconds write_timeout{5'000};    // to drain a reply
  std::chrono::milliseconds reply_timeout{10'000};   // for an async handler to answer
  std::chrono::milliseconds accept_backoff{100};     // after accept failed (EMFILE and friends)
  // How a new connection's peer is identified; peer_credentials when empty.
  // Tests inject fake peers here.
  std::function<Peer(int fd)> peer_of;
  // Who may run Mutating commands besides root: see may_mutate().
  uid_t daemon_uid = ::geteuid();
  std::optional<gid_t> admin_gid;  // daemon.admin_group
};

class ControlServer {
 public:
  ControlServer(boost::asio::io_context& io, ServerOptions opts);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Registers a command; `help` is listed by the built-in "help" command.
  // The handler returns the result or throws ControlError.
  void add_command(std::string name, Handler h, std::string help = {}, Access access = Access::Mutating);
  // The handler answers later through `reply` (e.g. after the lcore replied).
  void add_async_command(std::string name, AsyncHandler h, std::string help = {},
                         Access access = Access::Mutating);

  // Binds and listens. Refuses to replace a socket another live process
  // serves; removes a stale one. The socket appears with its final mode
  // (bound under a temporary name, chmod-ed, then renamed into place).
  void start();
  // Closes the listener and every connection, removes the socket. Idempotent.
  void stop();

  std::vector<std::string> commands() const;
  std::size_t client_count() const;
  const std::filesystem::path& socket_path() const;

 private:
  void accept_next();
  std::shared_ptr<detail::ServerState> state_;
};

}  // namespace vf::control
