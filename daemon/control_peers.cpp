// Who may hold a control connection: peer credentials, the per-uid and table
// caps, and evicting the longest-idle connection to make room (the policy is
// described in control_server.hpp).
#include <utility>

#include <sys/socket.h>

#include <fmt/format.h>

#include "daemon/control_detail.hpp"

namespace vf::control {

Peer peer_credentials(int fd) {
  Peer p;
  ucred c{};
  socklen_t len = sizeof c;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &len) == 0 && len == sizeof c) {
    p.uid = c.uid;
    p.gid = c.gid;
    p.pid = c.pid;
  }
  return p;
}

namespace detail {

void say(int fd, const json& reply) {
  std::string line = reply.dump(-1, ' ', false, json::error_handler_t::replace) + '\n';
  // A short line into an empty socket buffer; if even that does not fit, the
  // client was not reading and loses only the explanation.
  (void)::send(fd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

Session* idlest(const ServerState& st, const uid_t* uid) {
  Session* best = nullptr;
  for (Session* s : st.sessions) {
    if (!s->idle() || (uid && s->peer().uid != *uid)) continue;
    if (!best || s->idle_since() < best->idle_since()) best = s;
  }
  return best;
}

std::optional<Refusal> make_room(ServerState& st, uid_t uid) {
  std::size_t mine = 0;
  for (Session* s : st.sessions) mine += s->peer().uid == uid;
  if (mine >= st.opts.max_clients_per_uid) {
    // Only the uid's own connections make room for it: a user at its cap
    // must not push out someone else's.
    if (Session* v = idlest(st, &uid)) {
      v->evict();
      return std::nullopt;
    }
    return Refusal{fmt::format("too many control connections from uid {}", uid),
                   fmt::format("fabricd serves at most {} busy connections per user; let them finish, then retry",
                               st.opts.max_clients_per_uid)};
  }
  if (st.sessions.size() >= st.opts.max_clients) {
    if (Session* v = idlest(st, nullptr)) {
      v->evict();
      return std::nullopt;
    }
    return Refusal{"too many control clients",
                   fmt::format("all {} connections fabricd serves are busy; retry in a moment", st.opts.max_clients)};
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace vf::control
