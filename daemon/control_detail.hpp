// Internals of the control server (control_server.cpp: listening socket and
// command table; control_session.cpp: one client connection).
#pragma once

#include <utility>  // before Asio (see DESIGN §7)

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <optional>
#include <set>

#include "daemon/control_server.hpp"

namespace vf::control {

class Session;

namespace detail {

struct Command {
  Handler sync;
  AsyncHandler async;
  std::string help;
};

struct ServerState {
  ServerState(boost::asio::io_context& ctx, ServerOptions o) : io(ctx), opts(std::move(o)), retry(ctx) {}
  boost::asio::io_context& io;
  ServerOptions opts;
  std::map<std::string, Command, std::less<>> commands;
  std::optional<boost::asio::local::stream_protocol::acceptor> acceptor;
  std::set<Session*> sessions;  // live connections, for stop() and the client cap
  boost::asio::steady_timer retry;  // accept back-off after EMFILE and friends
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

}  // namespace detail

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<detail::ServerState> server, boost::asio::local::stream_protocol::socket sock);
  ~Session();
  void start();
  // Accepted past the client cap: say why, then close.
  void reject(const std::string& message, const std::string& hint);
  void close();
  // An async command's answer, delivered on the io thread.
  void complete(uint64_t request_no, json reply);

 private:
  enum class Phase { Reading, Handling, Writing, Closed };
  void read_next();
  void on_line(std::string line);
  void dispatch(const json& req, const json* id);
  void send(json reply, bool close_after);
  void arm(std::chrono::milliseconds after);
  void on_timeout();
  void abandon_pending();

  std::shared_ptr<detail::ServerState> server_;
  boost::asio::local::stream_protocol::socket sock_;
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
