// One control client: read a line, answer it, repeat — with every limit the
// header promises (line cap, request/drain timeout, reply timeout).
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/control/control_detail.hpp"
#include "daemon/config/units.hpp"

namespace vf::control {
namespace asio = boost::asio;

namespace {
constexpr int kMaxJsonDepth = 32;  // requests are shallow; this stops stack games
constexpr std::size_t kMaxCmdLen = 64;

std::string dump(const json& j) {
  // Never throws: invalid UTF-8 from a handler's strings is replaced.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}
}  // namespace

json detail::error_reply(const std::string& message, const std::string& hint, const json* id) {
  json r = {{"ok", false}, {"error", message}};
  if (!hint.empty()) r["hint"] = hint;
  if (id) r["id"] = *id;
  return r;
}

detail::ReplyState::~ReplyState() {
  // Every Reply copy is gone and nobody answered: tell the client rather
  // than leave it waiting for the reply timeout.
  if (!done.exchange(true)) {
    asio::post(ex, [s = session, no = request_no] {
      if (auto sp = s.lock())
        sp->complete(no, error_reply("the command finished without a reply", "this is a fabricd bug; see its log", nullptr));
    });
  }
}

void Reply::ok(json result) const {
  if (!state_ || state_->done.exchange(true)) return;
  asio::post(state_->ex, [s = state_->session, no = state_->request_no, r = std::move(result)]() mutable {
    if (auto sp = s.lock()) sp->complete(no, json{{"ok", true}, {"result", std::move(r)}});
  });
}

void Reply::ok_with(std::function<json()> make) const {
  if (!state_ || state_->done.exchange(true)) return;
  asio::post(state_->ex, [s = state_->session, no = state_->request_no, m = std::move(make)] {
    if (auto sp = s.lock()) sp->complete(no, json{{"ok", true}, {"result", m()}});
  });
}

void Reply::error(std::string message, std::string hint) const {
  if (!state_ || state_->done.exchange(true)) return;
  asio::post(state_->ex, [s = state_->session, no = state_->request_no, m = std::move(message), h = std::move(hint)] {
    if (auto sp = s.lock()) sp->complete(no, detail::error_reply(m, h, nullptr));
  });
}

bool Reply::done() const { return !state_ || state_->done.load(); }

Session::Session(std::shared_ptr<detail::ServerState> server, asio::local::stream_protocol::socket sock,
                 Peer peer)
    : server_(std::move(server)),
      sock_(std::move(sock)),
      peer_(std::move(peer)),
      may_mutate_(may_mutate(peer_, server_->opts.daemon_uid, server_->opts.admin_gid)),
      buf_(server_->opts.max_line + 1),  // the line plus its newline
      timer_(server_->io) {
  server_->sessions.insert(this);
}

Session::~Session() { server_->sessions.erase(this); }

void Session::start() { read_next(); }

void Session::close() {
  if (phase_ == Phase::Closed) return;
  phase_ = Phase::Closed;
  server_->sessions.erase(this);  // its handlers may still hold it for a moment
  ++timer_gen_;
  timer_.cancel();
  boost::system::error_code ec;
  sock_.shutdown(asio::socket_base::shutdown_both, ec);
  sock_.close(ec);
  abandon_pending();  // a late async answer is dropped
}

void Session::abandon_pending() {
  if (auto p = pending_.lock()) p->done = true;
  pending_.reset();
  awaiting_ = false;
}

void Session::arm(std::chrono::milliseconds after) {
  uint64_t gen = ++timer_gen_;
  timer_.expires_after(after);
  timer_.async_wait([self = shared_from_this(), gen](const boost::system::error_code& ec) {
    if (ec || gen != self->timer_gen_) return;
    self->on_timeout();
  });
}

void Session::on_timeout() {
  switch (phase_) {
    case Phase::Reading:  // idle, or a request trickling in byte by byte
    case Phase::Writing:  // the client does not read its replies
      spdlog::debug("control: closing a client that stalled");
      close();
      break;
    case Phase::Handling:
      abandon_pending();
      send(detail::error_reply("the command timed out",
                               "fabricd did not answer in time; retry, and check its log if it persists",
                               pending_id_ ? &*pending_id_ : nullptr),
           false);
      break;
    case Phase::Closed:
      break;
  }
}

void Session::evict() {
  detail::say(sock_.native_handle(),
              detail::error_reply("closed to make room for another control client",
                                  "this connection was idle; reconnect and send the request right away",
                                  nullptr));
  close();
}

void Session::read_next(bool new_request) {
  if (phase_ == Phase::Closed) return;
  phase_ = Phase::Reading;
  if (new_request) {  // a blank line neither extends the deadline nor looks fresh
    idle_since_ = ++server_->idle_clock;
    arm(server_->opts.request_timeout);
  }
  asio::async_read_until(sock_, buf_, '\n', [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
    if (self->phase_ == Phase::Closed) return;
    if (ec == asio::error::not_found) {  // the buffer filled without a newline
      self->send(detail::error_reply(fmt::format("request line longer than {} bytes", self->server_->opts.max_line),
                                     "send one JSON object per line; the connection is closed", nullptr),
                 true);
      return;
    }
    if (ec) {  // EOF or a reset: the client is gone
      self->close();
      return;
    }
    std::string line(asio::buffers_begin(self->buf_.data()), asio::buffers_begin(self->buf_.data()) + static_cast<std::ptrdiff_t>(n));
    self->buf_.consume(n);
    line.pop_back();  // '\n'
    if (!line.empty() && line.back() == '\r') line.pop_back();
    self->on_line(std::move(line));
  });
}

void Session::on_line(std::string line) {
  if (line.find_first_not_of(" \t") == std::string::npos) {  // blank lines are ignored
    read_next(false);
    return;
  }
  int too_deep = 0;
  json req = json::parse(
      line,
      [&](int depth, json::parse_event_t, json&) {
        if (depth > kMaxJsonDepth) too_deep = 1;
        return too_deep == 0;
      },
      /*allow_exceptions=*/false);
  if (too_deep) {
    send(detail::error_reply(fmt::format("request nests deeper than {} levels", kMaxJsonDepth),
                             "send a flat {\"cmd\":...,\"args\":{...}} object", nullptr),
         false);
    return;
  }
  if (req.is_discarded()) {
    send(detail::error_reply("request is not valid JSON",
                             R"(send one JSON object per line, e.g. {"cmd":"status"})", nullptr),
         false);
    return;
  }
  if (!req.is_object()) {
    send(detail::error_reply("request is not a JSON object", R"(e.g. {"cmd":"status","args":{}})", nullptr), false);
    return;
  }
  const json* id = nullptr;
  if (auto it = req.find("id"); it != req.end()) {
    if (!(it->is_string() || it->is_number()) || (it->is_string() && it->get_ref<const std::string&>().size() > 128)) {
      send(detail::error_reply("\"id\" must be a number or a short string", "", nullptr), false);
      return;
    }
    id = &*it;
  }
  for (auto it = req.begin(); it != req.end(); ++it) {
    if (it.key() != "cmd" && it.key() != "args" && it.key() != "id") {
      send(detail::error_reply(fmt::format("unknown request field \"{}\"", it.key().substr(0, 64)),
                               "a request has \"cmd\", optional \"args\" and optional \"id\"", id),
           false);
      return;
    }
  }
  dispatch(req, id);
}

void Session::dispatch(const json& req, const json* id) {
  auto c = req.find("cmd");
  if (c == req.end() || !c->is_string() || c->get_ref<const std::string&>().empty() ||
      c->get_ref<const std::string&>().size() > kMaxCmdLen) {
    send(detail::error_reply("request has no \"cmd\" string", R"(e.g. {"cmd":"status"})", id), false);
    return;
  }
  const std::string& name = c->get_ref<const std::string&>();
  json args = json::object();
  if (auto a = req.find("args"); a != req.end() && !a->is_null()) {
    if (!a->is_object()) {
      send(detail::error_reply("\"args\" must be a JSON object", R"(e.g. "args":{"name":"vib0"})", id), false);
      return;
    }
    args = *a;
  }
  auto cmd = server_->commands.find(name);
  if (cmd == server_->commands.end()) {
    std::vector<std::string> names;
    for (const auto& [n, _] : server_->commands) names.push_back(n);
    std::string near = units::did_you_mean(name, names);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    send(detail::error_reply(fmt::format("unknown command \"{}\"", name),
                             near.empty() ? "available commands: " + list
                                          : fmt::format("did you mean \"{}\"? available commands: {}", near, list),
                             id),
         false);
    return;
  }

  if (cmd->second.access == Access::Mutating && !may_mutate_) {
    send(detail::error_reply(fmt::format("permission denied: \"{}\" changes the fabric, and uid {} may only "
                                         "run read-only commands", name, peer_.uid),
                             "run it as root or as fabricd's user, or have the admin add you to the group "
                             "named by daemon.admin_group in fabricd's config",
                             id),
         false);
    return;
  }
  phase_ = Phase::Handling;
  try {
    if (cmd->second.sync) {
      json result = cmd->second.sync(args);
      json r = {{"ok", true}, {"result", std::move(result)}};
      if (id) r["id"] = *id;
      send(std::move(r), false);
      return;
    }
    auto st = std::make_shared<detail::ReplyState>();
    st->ex = server_->io.get_executor();
    st->session = weak_from_this();
    st->request_no = ++request_no_;
    pending_ = st;
    awaiting_ = true;
    pending_id_ = id ? std::optional<json>(*id) : std::nullopt;
    arm(server_->opts.reply_timeout);
    cmd->second.async(args, Reply(std::move(st)));
  } catch (const ControlError& e) {
    abandon_pending();
    send(detail::error_reply(e.what(), e.hint(), id), false);
  } catch (const json::exception& e) {
    abandon_pending();
    send(detail::error_reply(fmt::format("bad arguments for \"{}\": {}", name, e.what()),
                             "run the \"help\" command for the expected arguments", id),
         false);
  } catch (const std::exception& e) {
    abandon_pending();
    spdlog::warn("control: command {} failed: {}", name, e.what());
    send(detail::error_reply(fmt::format("\"{}\" failed: {}", name, e.what()), "see the fabricd log", id), false);
  }
}

void Session::complete(uint64_t request_no, json reply) {
  if (phase_ != Phase::Handling || !awaiting_ || request_no != request_no_) return;  // timed out or closed
  pending_.reset();
  awaiting_ = false;
  if (pending_id_) reply["id"] = *pending_id_;
  send(std::move(reply), false);
}

void Session::send(json reply, bool close_after) {
  if (phase_ == Phase::Closed) return;
  phase_ = Phase::Writing;
  pending_id_.reset();
  out_ = dump(reply);
  out_.push_back('\n');
  arm(server_->opts.write_timeout);
  asio::async_write(sock_, asio::buffer(out_), [self = shared_from_this(), close_after](const boost::system::error_code& ec, std::size_t) {
    if (self->phase_ == Phase::Closed) return;
    if (ec || close_after) {
      self->close();
      return;
    }
    self->read_next();
  });
}

}  // namespace vf::control
