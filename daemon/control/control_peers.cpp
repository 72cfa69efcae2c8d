// Who may hold a control connection and what it may do: peer credentials,
// the per-uid and table caps, evicting the longest-idle connection to make
// room, and the mutating-command check (policies in control_server.hpp).
#include <utility>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>

#include "daemon/control/control_detail.hpp"

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
  // The groups of the connecting process itself (Linux 4.13+), not what the
  // group database says its user is in now.
  std::vector<gid_t> groups(64);
  for (int tries = 0; tries < 4; ++tries) {
    socklen_t bytes = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &bytes) == 0) {
      groups.resize(bytes / sizeof(gid_t));
      p.groups = std::move(groups);
      break;
    }
    if (errno != ERANGE || bytes / sizeof(gid_t) > 65536) break;  // NGROUPS_MAX is 65536
    groups.resize(bytes / sizeof(gid_t));
  }
  return p;
}

bool may_mutate(const Peer& p, uid_t daemon_uid, std::optional<gid_t> admin_gid) {
  if (p.uid == static_cast<uid_t>(-1)) return false;  // unknown peer: nothing
  if (p.uid == 0 || p.uid == daemon_uid) return true;
  if (!admin_gid) return false;
  return p.gid == *admin_gid || std::find(p.groups.begin(), p.groups.end(), *admin_gid) != p.groups.end();
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
