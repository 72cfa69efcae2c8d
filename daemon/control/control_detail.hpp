// Internals of the control server (control_server.cpp: listening socket and
// command table; control_session.cpp: one client connection;
// control_peers.cpp: who may hold a connection).
#pragma once

#include <utility>  // before Asio (see DESIGN §7)

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <optional>
#include <set>

#include "daemon/control/control_server.hpp"

namespace vf::control {

class Session;

namespace detail {

struct Command {
  Handler sync;
  AsyncHandler async;
  std::string help;
  Access access = Access::Mutating;
};

struct ServerState {
  ServerState(boost::asio::io_context& ctx, ServerOptions o) : io(ctx), opts(std::move(o)), retry(ctx) {}
  boost::asio::io_context& io;
  ServerOptions opts;
  std::map<std::string, Command, std::less<>> commands;
  std::optional<boost::asio::local::stream_protocol::acceptor> acceptor;
  std::set<Session*> sessions;  // open connections, for stop() and the caps
  boost::asio::steady_timer retry;  // accept back-off after EMFILE and friends
  uint64_t accept_failures = 0;     // in a row, to log a failing streak once
  uint64_t idle_clock = 0;          // orders sessions by when they became idle
  ino_t socket_ino = 0;             // to remove only our own socket file
  bool running = false;
};

// Shared by every copy of a Reply; `done` makes the first answer win across
// threads without a lock.
struct ReplyState {
  boost::asio::any_io_executor ex;
  std::weak_ptr<Session> session;
  uint64_t request_no = 0;
  std::atomic<bool> done{false};
  ~ReplyState();
};

// {"ok":false,...} with the request's id when it had one.
json error_reply(const std::string& message, const std::string& hint, const json* id);

// Best effort, never blocks: one reply line to a client about to be closed.
void say(int fd, const json& reply);

// The open session that has been idle the longest (of `uid` only, when
// given); nullptr when every candidate is busy.
Session* idlest(const ServerState& st, const uid_t* uid);

struct Refusal {
  std::string error, hint;
};
// Makes room for a newcomer from `uid` by evicting an idle session when the
// uid is at its cap or the table is full; says why when nothing can go.
std::optional<Refusal> make_room(ServerState& st, uid_t uid);

}  // namespace detail

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<detail::ServerState> server, boost::asio::local::stream_protocol::socket sock,
          Peer peer);
  ~Session();
  void start();
  // Closes and leaves the table at once, so its slot is free for a newcomer.
  void close();
  // Closed to make room for a newcomer; tells the client why.
  void evict();
  const Peer& peer() const { return peer_; }
  // Waiting for (the rest of) its next request: nothing is lost by closing it.
  bool idle() const { return phase_ == Phase::Reading; }
  uint64_t idle_since() const { return idle_since_; }  // detail::ServerState::idle_clock
  // An async command's answer, delivered on the io thread.
  void complete(uint64_t request_no, json reply);

 private:
  enum class Phase { Reading, Handling, Writing, Closed };
  void read_next(bool new_request = true);
  void on_line(std::string line);
  void dispatch(const json& req, const json* id);
  void send(json reply, bool close_after);
  void arm(std::chrono::milliseconds after);
  void on_timeout();
  void abandon_pending();

  std::shared_ptr<detail::ServerState> server_;
  boost::asio::local::stream_protocol::socket sock_;
  Peer peer_;
  bool may_mutate_ = false;  // decided once: the credentials are those of connect()
  uint64_t idle_since_ = 0;
  boost::asio::streambuf buf_;
  boost::asio::steady_timer timer_;
  uint64_t timer_gen_ = 0;    // a re-armed timer ignores its stale expiry
  uint64_t request_no_ = 0;   // the async request being waited for
  bool awaiting_ = false;     // an async handler owes request_no_ an answer
  // Weak: when the handler drops every Reply copy unanswered, ReplyState's
  // destructor must run and report it.
  std::weak_ptr<detail::ReplyState> pending_;
  std::optional<json> pending_id_;
  std::string out_;
  Phase phase_ = Phase::Reading;
};

}  // namespace vf::control
