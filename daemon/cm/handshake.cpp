// Connection establishment and teardown: the CM messages the two ends'
// agents exchange (IBA 12.6-12.9, 12.11 for SIDR), with ib_cm's and
// rdma_cm's rules for who sees which event. Each end acts only on what the
// messages carry; `deliver` is the wire between them.
#include <rdma/rdma_user_cm.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>

#include "daemon/cm/service.hpp"
#include "daemon/cm/state.hpp"
#include "daemon/cm/wire.hpp"

namespace vf::cm {
namespace {

using std::chrono::milliseconds;
// rdma_cm's CM response timeout (2^20 x 4.096 us) and its retries: a
// message nobody answers is sent 16 times, about 69 s, before its sender
// gives up.
constexpr int kMaxCmRetries = 15;
constexpr uint8_t kRejVendorOptionNotSupported = 35;

// One more of message type `t` in the sent or received column.
void count(CmStats& s, MsgType t, bool sent) {
  uint64_t* const pairs[][2] = {
      {&s.req_sent, &s.req_received},   {&s.mra_sent, &s.mra_received},   {&s.rej_sent, &s.rej_received},
      {&s.rep_sent, &s.rep_received},   {&s.rtu_sent, &s.rtu_received},   {&s.dreq_sent, &s.dreq_received},
      {&s.drep_sent, &s.drep_received}, {&s.sidr_req_sent, &s.sidr_req_received},
      {&s.sidr_rep_sent, &s.sidr_rep_received},
  };
  ++*pairs[size_t(t)][sent ? 0 : 1];
}

rdma_ucm_conn_param conn_param(const Msg& m, size_t room) {
  rdma_ucm_conn_param p{};
  p.qp_num = m.qpn;
  // rdma_cm reports the whole private data field of the message, past its
  // own header: what the sender gave, then zeros.
  copy_prefix(p.private_data, m.private_data, room);
  p.private_data_len = uint8_t(room);
  p.srq = m.srq;
  p.flow_control = m.flow_control;
  p.retry_count = m.retry;
  p.rnr_retry_count = m.rnr_retry;
  // ib_cm reports the sender's resources from the receiver's side.
  p.responder_resources = m.initiator_depth;
  p.initiator_depth = m.responder_resources;
  return p;
}

template <class T>
std::span<const uint8_t> bytes(const T& v) {
  return {reinterpret_cast<const uint8_t*>(&v), sizeof(v)};
}

}  // namespace

void Service::arm_timer(Id& id, milliseconds after, std::function<void(Id&)> fire) {
  if (!id.timer) id.timer = std::make_unique<boost::asio::steady_timer>(io_);
  id.timer->expires_after(after);
  id.timer->async_wait([this, alive = std::weak_ptr<Service*>(alive_), h = id.handle,
                        fire = std::move(fire)](boost::system::error_code ec) {
    if (ec || !alive.lock()) return;
    if (auto it = ids_.find(h); it != ids_.end()) fire(*it->second);
  });
}

// ib_cm's time-wait: a disconnected QP number may still meet the packets
// in flight for a packet lifetime (twice it, with the ACK delay: the path's
// lifetime + 1 as the CM computes its local ACK timeout); then the id hears
// TIMEWAIT_EXIT -- the moment rdma_cm says its QP may be reused.
void Service::enter_timewait(Id& id) {
  const int iba_time = std::min(int((id.path ? *id.path : Path{}).packet_life) + 1, 31);
  const milliseconds wait(1 << std::max(iba_time - 8, 0));  // cm_convert_to_ms
  arm_timer(id, wait, [this](Id& i) {
    if (i.st == St::kDisconnected) queue_event(i, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
  });
}

void Service::send_msg(Id& from, Msg m) {
  if (!m.local_comm) m.local_comm = from.local_comm;
  if (!m.remote_comm) m.remote_comm = from.remote_comm;
  transmit(*from.dev, from.peer_dev, std::move(m));
}

void Service::send_awaiting(Id& from, Msg m, std::function<void(Id&)> give_up) {
  if (!m.local_comm) m.local_comm = from.local_comm;
  if (!m.remote_comm) m.remote_comm = from.remote_comm;
  from.awaiting = m;
  from.retries_left = kMaxCmRetries;
  from.give_up = std::move(give_up);
  transmit(*from.dev, from.peer_dev, std::move(m));
  arm_timer(from, response_timeout_, [this](Id& i) { retry_tick(i); });
}

void Service::retry_tick(Id& id) {
  if (!id.awaiting) return;
  if (id.retries_left-- > 0) {
    Msg again = *id.awaiting;
    transmit(*id.dev, id.peer_dev, std::move(again));
    arm_timer(id, response_timeout_, [this](Id& i) { retry_tick(i); });
    return;
  }
  id.awaiting.reset();
  if (auto g = std::move(id.give_up)) g(id);
}

void Service::settle(Id& id) {
  id.awaiting.reset();
  id.give_up = nullptr;
  if (id.timer) id.timer->cancel();
}

void Service::reply(Id& from, Msg m) {
  if (!m.local_comm) m.local_comm = from.local_comm;
  if (!m.remote_comm) m.remote_comm = from.remote_comm;
  from.last_reply = m;
  transmit(*from.dev, from.peer_dev, std::move(m));
}

void Service::transmit(size_t from, size_t to, Msg m) {
  if (from >= ports_.size() || to >= ports_.size()) return;
  spdlog::debug("cm: {} sends {} (reason {}) to {}", ports_[from].name, int(m.type), m.reason, ports_[to].name);
  m.from_vhca = from;
  count(counters_[from], m.type, true);
  if (wire_) return wire_->send(from, to, m);
  boost::asio::post(io_, [this, alive = std::weak_ptr<Service*>(alive_), to, m = std::move(m)] {
    if (alive.lock()) receive(to, m);
  });
}

void Service::receive(size_t to, const Msg& m) {
  if (to >= ports_.size()) return;
  count(counters_[to], m.type, false);
  on_msg(to, m);
}

Id* Service::by_comm(uint32_t comm) {
  const auto it = by_local_comm_.find(comm);
  const auto id = it == by_local_comm_.end() ? ids_.end() : ids_.find(it->second);
  return id == ids_.end() ? nullptr : id->second.get();
}

Id* Service::by_remote_comm(size_t peer_vhca, uint32_t comm) {
  const auto it = by_remote_comm_.find({peer_vhca, comm});
  const auto id = it == by_remote_comm_.end() ? ids_.end() : ids_.find(it->second);
  return id == ids_.end() ? nullptr : id->second.get();
}

// Communication IDs are the service's own (every vHCA's agent lives here),
// so one never names two live connections.
void Service::assign_comm(Id& id) {
  // A UD id connects again after an UNREACHABLE: its old number names
  // nothing now, so a late answer to the old request finds no id.
  if (id.local_comm) by_local_comm_.erase(id.local_comm);
  do id.local_comm = next_comm_id_++;
  while (id.local_comm == 0 || by_local_comm_.count(id.local_comm));
  by_local_comm_[id.local_comm] = id.handle;
}

void Service::set_remote_comm(Id& id, uint32_t comm) {
  id.remote_comm = comm;
  by_remote_comm_[{id.peer_dev, comm}] = id.handle;
}

int Service::cmd_connect(Channel& ch, In c) {
  const auto cmd = load<rdma_ucm_connect>(c);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  if (!cmd.conn_param.valid) return EINVAL;
  if (id->st != St::kRouteResolved || !id->path) return EINVAL;
  const auto& p = cmd.conn_param;
  const bool ud = id->qp_type == kQptUd;
  if (p.private_data_len > (ud ? kSidrReqPrivate : kReqPrivate)) return EINVAL;
  assign_comm(*id);
  psn_seed_ = psn_seed_ * 1103515245u + 12345u;
  id->psn = (psn_seed_ >> 8) & 0xFFFFFF;
  id->qpn = p.qp_num;
  id->responder_resources = p.responder_resources;
  id->initiator_depth = p.initiator_depth;
  id->retry = std::min<uint8_t>(p.retry_count, 7);
  id->rnr_retry = std::min<uint8_t>(p.rnr_retry_count, 7);
  id->srq = p.srq;
  Msg m;
  m.type = ud ? MsgType::kSidrReq : MsgType::kReq;
  m.service_id = uint64_t(id->ps) << 16 | id->dst.port;
  m.src = id->src;
  m.dst = id->dst;
  m.qpn = p.qp_num;
  m.psn = id->psn;
  m.responder_resources = p.responder_resources;
  m.initiator_depth = p.initiator_depth;
  m.retry = id->retry;
  m.rnr_retry = id->rnr_retry;
  m.srq = p.srq;
  m.flow_control = p.flow_control;
  m.qp_type = id->qp_type;
  m.path = *id->path;
  m.private_data.assign(p.private_data, p.private_data + p.private_data_len);
  id->st = St::kConnect;
  send_awaiting(*id, std::move(m), [this](Id& i) {
    if (i.st != St::kConnect) return;
    if (i.qp_type != kQptUd) {
      Msg rej;
      rej.type = MsgType::kRej;
      rej.reason = kRejTimeout;
      send_msg(i, std::move(rej));
    }
    i.st = St::kRouteResolved;
    queue_event(i, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
  });
  return 0;
}

int Service::cmd_accept(Channel& ch, In c) {
  const auto cmd = load<rdma_ucm_accept>(c);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  if (id->st == St::kRepRcvd && !cmd.conn_param.valid) {  // the active side's RTU
    Msg rtu;
    rtu.type = MsgType::kRtu;
    reply(*id, std::move(rtu));
    id->st = St::kEstablished;
    return 0;
  }
  if (id->st != St::kReqRcvd || !cmd.conn_param.valid) return EINVAL;
  const auto& p = cmd.conn_param;
  const bool ud = id->qp_type == kQptUd;
  if (p.private_data_len > (ud ? kSidrRepPrivate : kRepPrivate)) return EINVAL;
  id->uid = cmd.uid;
  id->qpn = p.qp_num;
  Msg m;
  m.type = ud ? MsgType::kSidrRep : MsgType::kRep;
  m.qpn = p.qp_num;
  m.psn = id->psn;
  m.qkey = kUdpQkey;
  m.reason = kSidrSuccess;
  m.responder_resources = p.responder_resources;
  m.initiator_depth = p.initiator_depth;
  m.rnr_retry = std::min<uint8_t>(p.rnr_retry_count, 7);
  m.srq = p.srq;
  m.flow_control = p.flow_control;
  m.private_data.assign(p.private_data, p.private_data + p.private_data_len);
  if (!ud) {
    id->responder_resources = p.responder_resources;
    id->initiator_depth = p.initiator_depth;
  }
  id->st = ud ? St::kEstablished : St::kRepSent;
  if (ud) {
    reply(*id, std::move(m));
  } else {
    // An RTU that never comes: the passive side's IB_CM_REP_ERROR.
    send_awaiting(*id, std::move(m), [this](Id& i) {
      if (i.st != St::kRepSent) return;
      i.st = St::kDisconnected;
      queue_event(i, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
    });
  }
  return 0;
}

int Service::cmd_reject(Channel& ch, In c) {
  const auto cmd = load<rdma_ucm_reject>(c);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  const uint8_t reason = cmd.reason ? cmd.reason : kRejConsumerDefined;
  if (reason != kRejConsumerDefined && reason != kRejVendorOptionNotSupported) return EINVAL;
  if (id->st != St::kReqRcvd) return EINVAL;
  const bool ud = id->qp_type == kQptUd;
  if (cmd.private_data_len > (ud ? kSidrRepPrivate : kRejPrivate)) return EINVAL;
  Msg m;
  m.type = ud ? MsgType::kSidrRep : MsgType::kRej;
  m.reason = ud ? kSidrReject : reason;
  m.private_data.assign(cmd.private_data, cmd.private_data + cmd.private_data_len);
  id->st = St::kDisconnected;
  reply(*id, std::move(m));
  return 0;
}

int Service::cmd_disconnect(Channel& ch, In c) {
  const auto cmd = load<rdma_ucm_disconnect>(c);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  if (id->qp_type == kQptUd) return EINVAL;
  switch (id->st) {
    case St::kEstablished:
    case St::kRepSent:
    case St::kRepRcvd: {
      settle(*id);  // a REP still awaiting its RTU is answered by this
      Msg dreq;
      dreq.type = MsgType::kDreq;
      dreq.qpn = id->remote_qpn;
      id->st = St::kDreqSent;
      // A DREQ nobody answers disconnects all the same (IB_CM_DREQ_ERROR).
      send_awaiting(*id, std::move(dreq), [this](Id& i) {
        if (i.st != St::kDreqSent) return;
        i.st = St::kDisconnected;
        queue_event(i, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT);
        enter_timewait(i);
      });
      return 0;
    }
    case St::kDreqRcvd: {
      Msg drep;
      drep.type = MsgType::kDrep;
      reply(*id, std::move(drep));
      id->st = St::kDisconnected;
      enter_timewait(*id);
      return 0;
    }
    case St::kDreqSent:
    case St::kDisconnected:
      return 0;
    default:
      return EINVAL;
  }
}

// What ib_cm does when an id goes with a connection in progress or up.
void Service::destroy_id(Id& id) {
  settle(id);
  const bool ud = id.qp_type == kQptUd;
  Msg m;
  switch (id.st) {
    case St::kConnect:
      if (!ud) {
        m.type = MsgType::kRej;
        m.reason = kRejTimeout;
        send_msg(id, std::move(m));
      }
      break;
    case St::kReqRcvd:
      m.type = ud ? MsgType::kSidrRep : MsgType::kRej;
      m.reason = ud ? kSidrReject : kRejConsumerDefined;
      send_msg(id, std::move(m));
      break;
    case St::kRepSent:
    case St::kRepRcvd:
    case St::kEstablished:
      if (!ud) {
        m.type = MsgType::kDreq;
        send_msg(id, std::move(m));
      }
      break;
    case St::kDreqRcvd:
      m.type = MsgType::kDrep;
      send_msg(id, std::move(m));
      break;
    default:
      break;
  }
  if (auto ch = channels_.find(id.channel); ch != channels_.end()) {
    purge_events(*ch->second, id.handle);
    ch->second->ids.erase(id.handle);
    release_process_id(ch->second->pid);
  }
  unindex(id);
  ids_.erase(id.handle);
}

void Service::on_msg(size_t vhca, const Msg& m) {
  if (m.type == MsgType::kReq) return on_req(vhca, m);
  if (m.type == MsgType::kSidrReq) return on_sidr_req(vhca, m);
  Id* id = nullptr;
  if (m.remote_comm) {
    id = by_comm(m.remote_comm);
  } else if (Id* i = by_remote_comm(m.from_vhca, m.local_comm); i && i->st == St::kReqRcvd) {
    id = i;  // a REJ of a REQ: the receiver knows it by the sender's number
  }
  if (!id || !id->dev || *id->dev != vhca) {
    if (m.type == MsgType::kDreq) {  // a connection already gone here: say so
      Msg drep;
      drep.type = MsgType::kDrep;
      drep.local_comm = m.remote_comm;
      drep.remote_comm = m.local_comm;
      transmit(vhca, m.from_vhca, std::move(drep));
    }
    return;
  }
  switch (m.type) {
    case MsgType::kRep: {
      if (id->st == St::kEstablished && id->last_reply) {  // our RTU was lost: the REP came again
        Msg again = *id->last_reply;
        return transmit(vhca, id->peer_dev, std::move(again));
      }
      if (id->st != St::kConnect) return;
      settle(*id);
      set_remote_comm(*id, m.local_comm);
      id->remote_qpn = m.qpn;
      id->remote_psn = m.psn;
      id->responder_resources = m.initiator_depth;
      id->initiator_depth = m.responder_resources;
      id->rnr_retry = m.rnr_retry;
      id->st = St::kRepRcvd;
      const auto p = conn_param(m, kRepPrivate);
      return queue_event(*id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, bytes(p));
    }
    case MsgType::kMra:
      // The peer received the REQ and needs time: keep waiting, with the
      // retries renewed (IBA 12.6.6: the MRA's service timeout extends the
      // wait; here each repeated REQ draws another MRA while the app thinks).
      if (id->st == St::kConnect && id->awaiting) id->retries_left = kMaxCmRetries;
      return;
    case MsgType::kRtu:
      if (id->st != St::kRepSent) return;
      settle(*id);
      id->st = St::kEstablished;
      return queue_event(*id, RDMA_CM_EVENT_ESTABLISHED, 0);
    case MsgType::kRej: {
      settle(*id);
      const St was = id->st;
      id->st = St::kDisconnected;
      if (was != St::kConnect && was != St::kRepSent && was != St::kRepRcvd && was != St::kReqRcvd) return;
      const auto p = conn_param(m, kRejPrivate);
      return queue_event(*id, RDMA_CM_EVENT_REJECTED, m.reason, bytes(p));
    }
    case MsgType::kDreq: {
      const St was = id->st;
      if (was == St::kDisconnected && id->last_reply && id->last_reply->type == MsgType::kDrep) {
        Msg again = *id->last_reply;  // our DREP was lost
        return transmit(vhca, id->peer_dev, std::move(again));
      }
      if (was == St::kDreqSent) {  // both ends at once: answer and be done
        settle(*id);
        Msg drep;
        drep.type = MsgType::kDrep;
        reply(*id, std::move(drep));
        id->st = St::kDisconnected;
        queue_event(*id, RDMA_CM_EVENT_DISCONNECTED, 0);
        return enter_timewait(*id);
      }
      if (was != St::kEstablished && was != St::kRepSent && was != St::kRepRcvd) return;
      settle(*id);
      id->st = St::kDreqRcvd;
      return queue_event(*id, RDMA_CM_EVENT_DISCONNECTED, 0);
    }
    case MsgType::kDrep:
      if (id->st != St::kDreqSent) return;
      settle(*id);
      id->st = St::kDisconnected;
      queue_event(*id, RDMA_CM_EVENT_DISCONNECTED, 0);
      return enter_timewait(*id);
    case MsgType::kSidrRep: {
      if (id->st != St::kConnect || id->qp_type != kQptUd) return;
      settle(*id);
      if (m.reason != kSidrSuccess) {
        id->st = St::kRouteResolved;
        return queue_event(*id, RDMA_CM_EVENT_UNREACHABLE, m.reason);
      }
      id->st = St::kEstablished;
      rdma_ucm_ud_param p{};
      p.qp_num = m.qpn;
      p.qkey = m.qkey;
      p.ah_attr = to_ah_attr(*id->path, ports_[vhca].gid_index);
      copy_prefix(p.private_data, m.private_data, kSidrRepPrivate);
      p.private_data_len = uint8_t(kSidrRepPrivate);
      return queue_event(*id, RDMA_CM_EVENT_ESTABLISHED, 0, bytes(p));
    }
    default:
      return;
  }
}

namespace {
// The listener a request for `service_id` to `dst` reaches on this host.
bool listens_for(const Id& l, uint64_t service_id, const Addr& dst, bool ud) {
  if (l.st != St::kListen || (l.qp_type == kQptUd) != ud) return false;
  if (uint64_t(l.ps) << 16 != (service_id & ~uint64_t(0xFFFF)) || l.src.port != (service_id & 0xFFFF)) return false;
  return l.src.any() || l.src.ip == dst.ip;
}
}  // namespace

Id* Service::listener_for(const Msg& req, bool ud) {
  Id* l = nullptr;
  for (uint32_t h : listeners_)
    if (Id& i = *ids_.at(h); listens_for(i, req.service_id, req.dst, ud)) l = &i;
  return l;
}

void Service::unindex(const Id& id) {
  const auto drop = [&](auto& index, const auto& key) {
    if (auto it = index.find(key); it != index.end() && it->second == id.handle) index.erase(it);
  };
  drop(by_local_comm_, id.local_comm);
  drop(by_remote_comm_, std::pair{id.peer_dev, id.remote_comm});
  listeners_.erase(id.handle);
  if (id.owns_port) {
    const auto [first, last] = port_owners_.equal_range({id.ps, id.src.port});
    for (auto it = first; it != last; ++it)
      if (it->second == id.handle) {
        port_owners_.erase(it);
        break;
      }
  }
}

// A request this port already has an id for: the sender repeated it because
// our answer was lost (or has not come yet). The answer goes again.
bool Service::repeated_request(size_t vhca, const Msg& m) {
  if (Id* i = by_remote_comm(m.from_vhca, m.local_comm); i && i->dev && *i->dev == vhca) {
    if (i->awaiting && i->awaiting->type == MsgType::kRep) {
      Msg again = *i->awaiting;
      transmit(vhca, m.from_vhca, std::move(again));
    } else if (i->st == St::kReqRcvd && m.type == MsgType::kReq) {
      // The app has not answered yet: an MRA asks the requester to wait.
      Msg mra;
      mra.type = MsgType::kMra;
      mra.local_comm = i->local_comm;
      mra.remote_comm = m.local_comm;
      transmit(vhca, m.from_vhca, std::move(mra));
    } else if (i->last_reply && (i->last_reply->type == MsgType::kRej || i->last_reply->type == MsgType::kSidrRep)) {
      Msg again = *i->last_reply;
      transmit(vhca, m.from_vhca, std::move(again));
    }
    return true;  // still unanswered by the app, or answered: either way not a new request
  }
  return false;
}

void Service::on_req(size_t vhca, const Msg& m) {
  if (repeated_request(vhca, m)) return;
  Id* l = listener_for(m, false);
  const auto reject = [&](uint16_t reason) {
    Msg rej;
    rej.type = MsgType::kRej;
    rej.reason = reason;
    rej.remote_comm = m.local_comm;
    transmit(vhca, m.from_vhca, std::move(rej));
  };
  if (!l) {
    spdlog::debug("cm: REQ for service {:#x} to {}:{} on {}: nobody listens", m.service_id, m.dst.ip, m.dst.port,
                  ports_[vhca].name);
    return reject(kRejInvalidServiceId);
  }
  if (l->pending >= l->backlog) return reject(kRejConsumerDefined);
  auto ch = channels_.find(l->channel);
  Id* child = ch == channels_.end() ? nullptr : create_id(*ch->second, 0, l->ps, l->qp_type);
  if (!child) return reject(kRejConsumerDefined);
  child->st = St::kReqRcvd;
  child->dev = vhca;
  child->peer_dev = m.from_vhca;
  child->src = m.dst;
  child->dst = m.src;
  child->path = reversed(m.path);
  assign_comm(*child);
  set_remote_comm(*child, m.local_comm);
  child->remote_qpn = m.qpn;
  child->remote_psn = m.psn;
  psn_seed_ = psn_seed_ * 1103515245u + 12345u;
  child->psn = (psn_seed_ >> 8) & 0xFFFFFF;
  child->responder_resources = m.initiator_depth;
  child->initiator_depth = m.responder_resources;
  child->retry = m.retry;
  child->rnr_retry = m.rnr_retry;
  ++l->pending;
  const auto p = conn_param(m, kReqPrivate);
  queue_event(*l, RDMA_CM_EVENT_CONNECT_REQUEST, 0, bytes(p), child->handle);
}

void Service::on_sidr_req(size_t vhca, const Msg& m) {
  if (repeated_request(vhca, m)) return;
  Id* l = listener_for(m, true);
  auto ch = l ? channels_.find(l->channel) : channels_.end();
  Id* child = (l && l->pending < l->backlog && ch != channels_.end())
                  ? create_id(*ch->second, 0, l->ps, l->qp_type) : nullptr;
  if (!child) {
    Msg rep;
    rep.type = MsgType::kSidrRep;
    rep.reason = l ? kSidrReject : kSidrUnsupported;
    rep.remote_comm = m.local_comm;
    rep.service_id = m.service_id;
    return transmit(vhca, m.from_vhca, std::move(rep));
  }
  child->st = St::kReqRcvd;
  child->dev = vhca;
  child->peer_dev = m.from_vhca;
  child->src = m.dst;
  child->dst = m.src;
  child->path = reversed(m.path);
  set_remote_comm(*child, m.local_comm);
  ++l->pending;
  rdma_ucm_ud_param p{};
  copy_prefix(p.private_data, m.private_data, kSidrReqPrivate);
  p.private_data_len = uint8_t(kSidrReqPrivate);
  queue_event(*l, RDMA_CM_EVENT_CONNECT_REQUEST, 0, bytes(p), child->handle);
}

}  // namespace vf::cm
