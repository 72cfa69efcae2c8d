// Channels, ids and events: the rdma_ucm side of the connection manager.
#include "daemon/cm/service.hpp"

#include <rdma/rdma_user_cm.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <random>

#include "daemon/cm/state.hpp"
#include "daemon/cm/wire.hpp"
#include "device/abi/vhca_ucma.h"

namespace vf::cm {

Service::Service(boost::asio::io_context& io, std::vector<Port> ports, RouteResolver& routes,
                 std::function<void(uint64_t)> event_ready)
    : io_(io), ports_(std::move(ports)), routes_(routes), event_ready_(std::move(event_ready)),
      counters_(ports_.size()) {
  std::random_device rd;
  next_comm_id_ = rd();
  psn_seed_ = rd();
}

Service::~Service() = default;

std::pair<uint64_t, uint64_t> Service::open_channel(pid_t pid) {
  std::random_device rd;
  auto ch = std::make_unique<Channel>();
  ch->pid = pid;
  ch->number = next_channel_++;
  ch->secret = uint64_t(rd()) << 32 | rd();
  const auto r = std::make_pair(ch->number, ch->secret);
  channels_[ch->number] = std::move(ch);
  return r;
}

void Service::close_channel(uint64_t channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  const std::set<uint32_t> ids = it->second->ids;
  for (uint32_t h : ids)
    if (auto i = ids_.find(h); i != ids_.end()) destroy_id(*i->second);
  channels_.erase(channel);
}

namespace {
const char* state_name(St s) {
  switch (s) {
    case St::kIdle: return "IDLE";
    case St::kAddrQuery: return "ADDR_QUERY";
    case St::kAddrBound: return "ADDR_BOUND";
    case St::kAddrResolved: return "ADDR_RESOLVED";
    case St::kRouteQuery: return "ROUTE_QUERY";
    case St::kRouteResolved: return "ROUTE_RESOLVED";
    case St::kListen: return "LISTEN";
    case St::kConnect: return "CONNECT";
    case St::kReqRcvd: return "CONNECT_REQUEST";  // ib_cm's REQ_RCVD: the app has not answered
    case St::kRepSent:
    case St::kRepRcvd: return "CONNECT";
    case St::kEstablished: return "ESTABLISHED";
    case St::kDreqSent:
    case St::kDreqRcvd:
    case St::kDisconnected: return "DISCONNECT";
  }
  return "?";
}

std::string addr_text(const Addr& a) {
  if (!a.family) return "";
  return fmt::format("{}.{}.{}.{}:{}", a.ip >> 24, (a.ip >> 16) & 255, (a.ip >> 8) & 255, a.ip & 255, a.port);
}
}  // namespace

std::vector<IdView> Service::list() const {
  std::vector<IdView> out;
  for (const auto& [h, id] : ids_) {
    IdView v;
    v.handle = h;
    if (id->dev) v.hca = ports_[*id->dev].name;
    v.state = state_name(id->st);
    v.ps = id->ps;
    v.qp_type = id->qp_type;
    v.src = addr_text(id->src);
    v.dst = addr_text(id->dst);
    v.qpn = id->qpn;
    v.remote_qpn = id->remote_qpn;
    if (auto ch = channels_.find(id->channel); ch != channels_.end()) v.pid = ch->second->pid;
    out.push_back(std::move(v));
  }
  return out;
}

void Service::device_removal(const std::function<void(uint64_t, std::span<const uint8_t>)>& emit) const {
  for (const auto& [h, id] : ids_) {
    if (!id->dev || !id->uid) continue;
    rdma_ucm_event_resp r{};
    r.uid = id->uid;
    r.id = h;
    r.event = RDMA_CM_EVENT_DEVICE_REMOVAL;
    emit(id->channel, {reinterpret_cast<const uint8_t*>(&r), sizeof(r)});
  }
}

size_t Service::queued_events(uint64_t channel) const {
  auto it = channels_.find(channel);
  return it == channels_.end() ? 0 : it->second->events.size();
}

Id* Service::find(uint64_t channel, uint32_t handle, int& err) {
  auto it = ids_.find(handle);
  if (it == ids_.end()) {
    err = ENOENT;
    return nullptr;
  }
  if (it->second->channel != channel) {
    err = EINVAL;  // ucma_get_ctx: another file's id
    return nullptr;
  }
  return it->second.get();
}

void Service::release_process_id(pid_t pid) {
  const auto it = ids_per_process_.find(pid);
  if (it != ids_per_process_.end() && --it->second == 0) ids_per_process_.erase(it);
}

Id* Service::create_id(Channel& ch, uint64_t uid, uint16_t ps, uint8_t qp_type) {
  if (ch.ids.size() >= kMaxIdsPerChannel) return nullptr;
  // The kernel bounds ids by memory only; one process here may not take
  // fabricd's: ENOMEM beyond kMaxIdsPerProcess.
  size_t& held = ids_per_process_[ch.pid];
  if (held >= kMaxIdsPerProcess) return nullptr;
  ++held;
  while (next_handle_ == 0 || ids_.count(next_handle_)) ++next_handle_;
  auto id = std::make_unique<Id>();
  id->handle = next_handle_++;
  id->channel = ch.number;
  id->uid = uid;
  id->ps = ps;
  id->qp_type = qp_type;
  Id* raw = id.get();
  ch.ids.insert(raw->handle);
  ids_[raw->handle] = std::move(id);
  return raw;
}

void Service::queue_event(Id& id, uint32_t event, int32_t status, In param, uint32_t new_id) {
  // A request's id nobody accepted has no user context to report to yet.
  if (!id.uid) return;
  auto ch = channels_.find(id.channel);
  if (ch == channels_.end()) return;
  if (ch->second->events.size() >= kMaxEventsPerChannel) {
    // The kernel would queue on; a bounded queue keeps one app from
    // exhausting fabricd, and the loss is counted and said once per channel.
    if (id.dev) ++counters_[*id.dev].events_dropped;
    if (!ch->second->overflowed) {
      ch->second->overflowed = true;
      spdlog::warn("rdma_cm: channel {} of pid {} holds {} unfetched events; dropping more", ch->second->number,
                   ch->second->pid, kMaxEventsPerChannel);
    }
    return;
  }
  Event e;
  e.handle = id.handle;
  e.conn_request = event == RDMA_CM_EVENT_CONNECT_REQUEST;
  rdma_ucm_event_resp r{};
  r.uid = id.uid;
  r.id = new_id ? new_id : id.handle;
  r.event = event;
  r.status = uint32_t(status);
  copy_prefix(&r.param, param, sizeof(r.param));
  e.resp.resize(sizeof(r));
  std::memcpy(e.resp.data(), &r, sizeof(r));
  ch->second->events.push_back(std::move(e));
  event_ready_(id.channel);
}

// The kernel drops the events of a destroyed id that were never fetched:
// their uid points at memory librdmacm frees next.
void Service::purge_events(Channel& ch, uint32_t handle) {
  std::erase_if(ch.events, [&](const Event& e) {
    if (e.handle != handle) {
      if (!e.conn_request) return false;
      rdma_ucm_event_resp r;
      std::memcpy(&r, e.resp.data(), sizeof(r));
      if (r.id != handle) return false;  // a request's new id dies with it
    }
    if (e.conn_request) {
      if (auto l = ids_.find(e.handle); l != ids_.end() && l->second->pending > 0) --l->second->pending;
    }
    return true;
  });
}

int Service::command(uint64_t channel, In cmd, Out& out) {
  out.clear();
  auto chit = channels_.find(channel);
  if (chit == channels_.end()) return EBADF;
  Channel& ch = *chit->second;
  rdma_ucm_cmd_hdr h{};
  const auto refuse = [&](int e) {
    ++rejected_commands_;
    spdlog::debug("cm: command {} on channel {} failed: {}", h.cmd, channel, std::strerror(e));
    return e;
  };
  if (cmd.size() < sizeof(h)) return refuse(EINVAL);
  std::memcpy(&h, cmd.data(), sizeof(h));
  if (sizeof(h) + size_t(h.in) > cmd.size()) return refuse(EINVAL);
  const In c = cmd.subspan(sizeof(h));
  if (h.out < min_response(h.cmd)) return refuse(ENOSPC);
  int e = 0;
  switch (h.cmd) {
    case RDMA_USER_CM_CMD_CREATE_ID: e = cmd_create_id(ch, c, out); break;
    case RDMA_USER_CM_CMD_DESTROY_ID: e = cmd_destroy_id(ch, c, out); break;
    case RDMA_USER_CM_CMD_BIND_IP: e = cmd_bind_ip(ch, c); break;
    case RDMA_USER_CM_CMD_RESOLVE_IP: e = cmd_resolve_ip(ch, c); break;
    case RDMA_USER_CM_CMD_RESOLVE_ROUTE: e = cmd_resolve_route(ch, c); break;
    case RDMA_USER_CM_CMD_QUERY_ROUTE: e = cmd_query_route(ch, c, out); break;
    case RDMA_USER_CM_CMD_CONNECT: e = cmd_connect(ch, c); break;
    case RDMA_USER_CM_CMD_LISTEN: e = cmd_listen(ch, c); break;
    case RDMA_USER_CM_CMD_ACCEPT: e = cmd_accept(ch, c); break;
    case RDMA_USER_CM_CMD_REJECT: e = cmd_reject(ch, c); break;
    case RDMA_USER_CM_CMD_DISCONNECT: e = cmd_disconnect(ch, c); break;
    case RDMA_USER_CM_CMD_INIT_QP_ATTR: e = cmd_init_qp_attr(ch, c, out); break;
    case RDMA_USER_CM_CMD_GET_EVENT: e = cmd_get_event(ch, c, out); break;
    case RDMA_USER_CM_CMD_SET_OPTION: e = cmd_set_option(ch, cmd.subspan(sizeof(h))); break;
    case RDMA_USER_CM_CMD_NOTIFY: {
      int err = 0;
      rdma_ucm_notify n = load<rdma_ucm_notify>(c);
      e = find(ch.number, n.id, err) ? 0 : err;
      break;
    }
    case RDMA_USER_CM_CMD_MIGRATE_ID: e = cmd_migrate(ch, cmd, out); break;  // the shim's own layout, header included
    case RDMA_USER_CM_CMD_BIND:
    case RDMA_USER_CM_CMD_RESOLVE_ADDR:
      // AF_IB and the sockaddr_storage commands: librdmacm probes them with
      // an AF_IB bind at start-up and uses the IP ones when it fails.
      e = EAFNOSUPPORT;
      break;
    default:
      // GET_OPTION has no handler in the kernel either; multicast through
      // rdma_cm (JOIN_*, LEAVE_MCAST) and QUERY are not built here.
      e = h.cmd > RDMA_USER_CM_CMD_JOIN_MCAST ? EINVAL : ENOSYS;
      break;
  }
  if (e && e != int(VHCA_UCMA_STALE)) refuse(e);
  if (e) out.clear();
  if (out.size() > h.out) out.resize(h.out);  // the kernel copies what fits (checked above)
  return e;
}

int Service::cmd_create_id(Channel& ch, In c, Out& out) {
  const auto cmd = load<rdma_ucm_create_id>(c);
  if (cmd.qp_type != kQptRc && cmd.qp_type != kQptUd && cmd.qp_type != kQptUc) return EINVAL;
  if (cmd.ps != RDMA_PS_TCP && cmd.ps != RDMA_PS_UDP && cmd.ps != RDMA_PS_IB && cmd.ps != RDMA_PS_IPOIB)
    return EINVAL;
  Id* id = create_id(ch, cmd.uid, cmd.ps, cmd.qp_type);
  if (!id) return ENOMEM;
  rdma_ucm_create_id_resp r{id->handle};
  put(out, r);
  return 0;
}

int Service::cmd_destroy_id(Channel& ch, In c, Out& out) {
  const auto cmd = load<rdma_ucm_destroy_id>(c);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  rdma_ucm_destroy_id_resp r{id->events_reported};
  destroy_id(*id);
  put(out, r);
  return 0;
}

int Service::cmd_get_event(Channel& ch, In c, Out& out) {
  (void)c;
  if (ch.events.empty()) return int(VHCA_UCMA_STALE);
  Event e = std::move(ch.events.front());
  ch.events.pop_front();
  if (auto it = ids_.find(e.handle); it != ids_.end()) {
    ++it->second->events_reported;
    if (e.conn_request && it->second->pending > 0) --it->second->pending;
  }
  out = std::move(e.resp);
  return 0;
}

// ucma_migrate_id: `ch` is the destination; the command names the id's
// current channel, which must be the caller's too (its secret says so).
int Service::cmd_migrate(Channel& ch, In whole, Out& out) {
  const auto m = load<vhca_ucma_migrate>(whole);
  auto from = channels_.find(m.channel);
  if (from == channels_.end() || from->second->secret != m.secret) return EINVAL;
  Channel& src = *from->second;
  int err = 0;
  Id* id = find(src.number, m.id, err);
  if (!id) return err;
  rdma_ucm_migrate_resp r{id->events_reported};
  if (&src != &ch) {
    // The id's queued events move with it, as the kernel's do.
    size_t moved = 0;
    for (auto it = src.events.begin(); it != src.events.end();) {
      if (it->handle == id->handle) {
        ch.events.push_back(std::move(*it));
        it = src.events.erase(it);
        ++moved;
      } else {
        ++it;
      }
    }
    src.ids.erase(id->handle);
    ch.ids.insert(id->handle);
    id->channel = ch.number;
    release_process_id(src.pid);
    ++ids_per_process_[ch.pid];
    for (size_t i = 0; i < moved; ++i) event_ready_(ch.number);
  }
  put(out, r);
  return 0;
}

}  // namespace vf::cm
