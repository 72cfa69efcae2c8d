// Binding, address and route resolution, listening, options and the QP
// attributes: the rdma_cm commands that do not talk to the other end.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>

#include "daemon/cm/service.hpp"
#include "daemon/cm/state.hpp"
#include "daemon/cm/wire.hpp"

namespace vf::cm {
namespace {

constexpr uint16_t kEphemeralLo = 32768, kEphemeralHi = 60999;  // ip_local_port_range

// A sockaddr_in / sockaddr_in6 as rdma_ucm's commands carry it (28 bytes).
std::optional<Addr> parse_addr(const sockaddr_in6& s, int& err) {
  Addr a;
  a.family = s.sin6_family;
  a.port = ntohs(s.sin6_port);
  if (s.sin6_family == AF_INET) {
    sockaddr_in v4;
    std::memcpy(&v4, &s, sizeof(v4));
    a.ip = ntohl(v4.sin_addr.s_addr);
    return a;
  }
  if (s.sin6_family == AF_INET6) {
    const uint8_t* b = s.sin6_addr.s6_addr;
    static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(b, kMapped, 12) == 0) {
      a.ip = uint32_t(b[12]) << 24 | uint32_t(b[13]) << 16 | uint32_t(b[14]) << 8 | b[15];
      return a;
    }
    static const uint8_t kAny[16] = {};
    if (std::memcmp(b, kAny, 16) == 0) {
      a.v6_any = true;
      return a;
    }
    err = EADDRNOTAVAIL;  // no vHCA has an IPv6 address
    return std::nullopt;
  }
  err = EAFNOSUPPORT;
  return std::nullopt;
}

sockaddr_in6 to_sockaddr(const Addr& a) {
  sockaddr_in6 s{};
  if (a.family == AF_INET6) {
    s.sin6_family = AF_INET6;
    s.sin6_port = htons(a.port);
    if (!a.v6_any || a.ip) {
      s.sin6_addr.s6_addr[10] = s.sin6_addr.s6_addr[11] = 0xff;
      const uint32_t be = htonl(a.ip);
      std::memcpy(&s.sin6_addr.s6_addr[12], &be, 4);
    }
    return s;
  }
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_port = htons(a.port);
  v4.sin_addr.s_addr = htonl(a.ip);
  std::memcpy(&s, &v4, sizeof(v4));
  return s;
}

// rdma_cm's port check (cma_check_port): a port is shared only when both
// binds allow reuse; a wildcard overlaps every address.
int clash(const Id& a, const Id& b) {
  if (a.ps != b.ps || a.src.port != b.src.port) return 0;
  if (a.reuseaddr && b.reuseaddr && a.st != St::kListen && b.st != St::kListen) return 0;
  if (a.src.any() || b.src.any()) return EADDRNOTAVAIL;
  return a.src.ip == b.src.ip ? EADDRINUSE : 0;
}

}  // namespace

int Service::bind(Id& id, const Addr& want) {
  if (id.st != St::kIdle) return EINVAL;
  Addr a = want;
  if (a.loopback()) {
    // The kernel's cma_bind_loopback: the first device takes it (libfabric's
    // verbs provider binds "localhost" to find a device for a passive side).
    if (ports_.empty()) return EADDRNOTAVAIL;
    id.dev = ports_.front().vhca;
  } else if (!a.any()) {
    const Port* p = port_by_ip(ports_, a.ip);
    if (!p) return EADDRNOTAVAIL;
    id.dev = p->vhca;
  }
  Id probe;
  probe.ps = id.ps;
  probe.src = a;
  probe.reuseaddr = id.reuseaddr;
  // Only the ids bound to the same port can clash: an ephemeral search looks
  // at a handful of ids per candidate, however many ids apps hold.
  const auto taken = [&](uint16_t port) {
    probe.src.port = port;
    const auto [first, last] = port_owners_.equal_range({id.ps, port});
    for (auto it = first; it != last; ++it)
      if (it->second != id.handle)
        if (int e = clash(probe, *ids_.at(it->second))) return e;
    return 0;
  };
  if (a.port == 0) {
    const uint32_t span = kEphemeralHi - kEphemeralLo + 1;
    uint32_t start = psn_seed_ = psn_seed_ * 1103515245u + 12345u;
    for (uint32_t i = 0; i < span && a.port == 0; ++i) {
      const uint16_t cand = uint16_t(kEphemeralLo + (start + i) % span);
      if (!taken(cand)) a.port = cand;
    }
    if (a.port == 0) return EADDRNOTAVAIL;
  } else if (int e = taken(a.port)) {
    return e;
  }
  id.src = a;
  id.owns_port = true;
  port_owners_.emplace(std::pair{id.ps, a.port}, id.handle);
  id.st = St::kAddrBound;
  return 0;
}

int Service::cmd_bind_ip(Channel& ch, In c) {
  const auto cmd = load<rdma_ucm_bind_ip>(c);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  auto a = parse_addr(cmd.addr, err);
  if (!a) return err;
  return bind(*id, *a);
}

int Service::cmd_resolve_ip(Channel& ch, In c) {
  const auto cmd = load<rdma_ucm_resolve_ip>(c);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  auto dst = parse_addr(cmd.dst_addr, err);
  if (!dst) return err;
  if (id->st == St::kIdle) {
    Addr src;
    if (cmd.src_addr.sin6_family) {
      auto s = parse_addr(cmd.src_addr, err);
      if (!s) return err;
      src = *s;
    } else {
      src.family = dst->family;
      src.v6_any = dst->family == AF_INET6;
    }
    if (int e = bind(*id, src)) return e;
  }
  if (id->st != St::kAddrBound) return EINVAL;
  id->dst = *dst;
  id->st = St::kAddrQuery;
  std::optional<size_t> to;
  if (const Port* p = port_by_ip(ports_, dst->ip); p && !dst->any()) to = p->vhca;
  if (dst->any() && id->dev) to = id->dev;  // the wildcard is this host: loopback
  if (dst->loopback() && !ports_.empty()) to = id->dev ? *id->dev : ports_.front().vhca;  // cma_resolve_loopback
  boost::asio::post(io_, [this, alive = std::weak_ptr<Service*>(alive_), h = id->handle, to, t = cmd.timeout_ms] {
    if (alive.lock()) finish_addr(h, to, t);
  });
  return 0;
}

// What ARP (IPoIB's or Ethernet's) and the routing table make of the
// destination: the vHCA that owns it, reached from the bound port or -- the
// source left open -- from that vHCA itself, as a host's own address is.
void Service::finish_addr(uint32_t handle, std::optional<size_t> dst_dev, uint32_t timeout_ms) {
  auto it = ids_.find(handle);
  if (it == ids_.end() || it->second->st != St::kAddrQuery) return;
  Id& id = *it->second;
  const Port* src = id.dev ? &ports_[*id.dev] : nullptr;
  if (dst_dev) {
    const Port& dst = ports_[*dst_dev];
    if (!src) src = &dst;
    if (src == &dst || reachable(*src, dst)) {
      id.dev = src->vhca;
      id.peer_dev = dst.vhca;
      if (id.dst.loopback()) {
        if (id.src.any()) id.src.ip = id.dst.ip;  // 127.0.0.1 to itself, as the kernel has it
      } else if (src->ipv4) {
        id.src.ip = *src->ipv4;
      }
      if (id.dst.any() && dst.ipv4) id.dst.ip = *dst.ipv4;
      id.st = St::kAddrResolved;
      return queue_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
    }
    id.st = St::kAddrBound;
    return queue_event(id, RDMA_CM_EVENT_ADDR_ERROR, -ENETUNREACH);
  }
  // Nobody owns the address. On a subnet a port is on, ARP asks until the
  // app's timeout; elsewhere there is no route.
  bool on_link = false;
  for (const Port& p : ports_) {
    if (src && &p != src) continue;
    if (!p.ipv4) continue;
    const uint32_t mask = p.prefix_len ? ~uint32_t(0) << (32 - p.prefix_len) : 0;
    if ((*p.ipv4 & mask) == (id.dst.ip & mask) || p.gateway) on_link = true;
  }
  if (!on_link) {
    id.st = St::kAddrBound;
    return queue_event(id, RDMA_CM_EVENT_ADDR_ERROR, -ENETUNREACH);
  }
  arm_timer(id, std::chrono::milliseconds(timeout_ms), [this](Id& i) {
    if (i.st != St::kAddrQuery) return;
    i.st = St::kAddrBound;
    queue_event(i, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT);
  });
}

int Service::cmd_resolve_route(Channel& ch, In c) {
  const auto cmd = load<rdma_ucm_resolve_route>(c);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  if (id->st != St::kAddrResolved || !id->dev) return EINVAL;
  id->st = St::kRouteQuery;
  routes_.resolve(*id->dev, id->peer_dev,
                  [this, alive = std::weak_ptr<Service*>(alive_), h = id->handle](std::optional<Path> p) {
                    if (!alive.lock()) return;
                    auto it = ids_.find(h);
                    if (it == ids_.end() || it->second->st != St::kRouteQuery) return;
                    Id& i = *it->second;
                    if (!p) {
                      i.st = St::kAddrResolved;
                      return queue_event(i, RDMA_CM_EVENT_ROUTE_ERROR, -EHOSTUNREACH);
                    }
                    if (i.tos && p->global) p->tclass = *i.tos;
                    i.path = *p;
                    i.st = St::kRouteResolved;
                    queue_event(i, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
                  });
  return 0;
}

int Service::cmd_query_route(Channel& ch, In c, Out& out) {
  const auto cmd = load<rdma_ucm_query>(c);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  rdma_ucm_query_route_resp r{};
  r.ibdev_index = UINT32_MAX;  // librdmacm then matches the device by GUID
  if (id->dev) {
    const Port& p = ports_[*id->dev];
    r.node_guid = htobe64(p.node_guid);
    r.port_num = 1;
    if (id->path) {
      r.ib_route[0] = to_user_path(*id->path);
      r.num_paths = 1;
    } else {
      std::memcpy(r.ib_route[0].sgid, p.gid.data(), 16);
      if (id->st >= St::kAddrResolved) std::memcpy(r.ib_route[0].dgid, ports_[id->peer_dev].gid.data(), 16);
      r.ib_route[0].pkey = htons(0xFFFF);
    }
  }
  r.src_addr = to_sockaddr(id->src);
  if (id->dst.family) r.dst_addr = to_sockaddr(id->dst);
  put(out, r);
  return 0;
}

int Service::cmd_listen(Channel& ch, In c) {
  const auto cmd = load<rdma_ucm_listen>(c);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  const int backlog = cmd.backlog > 0 && cmd.backlog < uint32_t(kMaxBacklog) ? int(cmd.backlog) : kMaxBacklog;
  if (id->st == St::kListen) {
    id->backlog = backlog;
    return 0;
  }
  if (id->st == St::kIdle) {
    Addr any;
    any.family = AF_INET;
    if (int e = bind(*id, any)) return e;
  }
  if (id->st != St::kAddrBound) return EINVAL;
  const auto [first, last] = port_owners_.equal_range({id->ps, id->src.port});
  for (auto it = first; it != last; ++it) {
    const Id& other = *ids_.at(it->second);
    if (&other != id && other.st == St::kListen && clash(*id, other)) return EADDRINUSE;
  }
  id->backlog = backlog;
  id->st = St::kListen;
  listeners_.insert(id->handle);
  return 0;
}

int Service::cmd_set_option(Channel& ch, In c) {
  const auto cmd = load<rdma_ucm_set_option>(c);
  if (cmd.optlen > c.size() || c.size() - cmd.optlen < sizeof(cmd)) return EINVAL;
  const In val = c.subspan(c.size() - cmd.optlen);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  if (cmd.level != RDMA_OPTION_ID) return ENOSYS;  // RDMA_OPTION_IB_PATH: ibacm's, not here
  switch (cmd.optname) {
    case RDMA_OPTION_ID_TOS:
      if (val.size() != 1) return EINVAL;
      id->tos = val[0];
      return 0;
    case RDMA_OPTION_ID_REUSEADDR:
      if (val.size() != sizeof(int)) return EINVAL;
      if (id->st != St::kIdle) return EINVAL;
      id->reuseaddr = load<int>(val) != 0;
      return 0;
    case RDMA_OPTION_ID_AFONLY:
      if (val.size() != sizeof(int)) return EINVAL;
      if (id->st != St::kIdle) return EINVAL;
      id->afonly = load<int>(val) != 0;
      return 0;
    case RDMA_OPTION_ID_ACK_TIMEOUT:
      if (val.size() != 1 || val[0] > 31) return EINVAL;
      id->ack_timeout = val[0];
      return 0;
    default:
      return ENOSYS;
  }
}

int Service::cmd_init_qp_attr(Channel& ch, In c, Out& out) {
  const auto cmd = load<rdma_ucm_init_qp_attr>(c);
  int err = 0;
  Id* id = find(ch.number, cmd.id, err);
  if (!id) return err;
  if (!id->dev) return EINVAL;
  enum : uint32_t {
    kState = 1, kAccess = 8, kPkey = 16, kPort = 32, kQkey = 64, kAv = 128, kMtu = 256, kTimeout = 512,
    kRetry = 1024, kRnrRetry = 2048, kRqPsn = 4096, kMaxRd = 8192, kMinRnr = 32768, kSqPsn = 65536,
    kMaxDestRd = 131072, kDestQpn = 1048576,
  };
  ib_uverbs_qp_attr a{};
  a.qp_state = cmd.qp_state;
  const bool connected = id->remote_qpn != 0 && id->qp_type != kQptUd;
  const bool rc = id->qp_type == kQptRc;
  switch (cmd.qp_state) {
    case 1:  // INIT
      a.qp_attr_mask = kState | kPkey | kPort;
      a.pkey_index = 0;
      a.port_num = 1;
      if (id->qp_type == kQptUd) {
        a.qkey = kUdpQkey;
        a.qp_attr_mask |= kQkey;
      } else {
        a.qp_attr_mask |= kAccess;
        // before the handshake rdma_cm grants nothing; then ib_cm's rule
        if (connected) a.qp_access_flags = 2u | (id->responder_resources ? 4u | 8u : 0u);
      }
      break;
    case 2:  // RTR
      if (!connected || !id->path) return EINVAL;
      a.qp_attr_mask = kState | kAv | kMtu | kDestQpn | kRqPsn | (rc ? kMaxDestRd | kMinRnr : 0);
      a.ah_attr = to_ah_attr(*id->path, ports_[*id->dev].gid_index);
      a.path_mtu = id->path->mtu;
      a.dest_qp_num = id->remote_qpn;
      a.rq_psn = id->remote_psn;
      a.max_dest_rd_atomic = id->responder_resources;
      a.min_rnr_timer = 0;  // ib_cm's; 655 ms, as on hardware
      break;
    case 3:  // RTS
      if (!connected || !id->path) return EINVAL;
      a.qp_attr_mask = kState | kSqPsn | (rc ? kTimeout | kRetry | kRnrRetry | kMaxRd : 0);
      a.sq_psn = id->psn;
      a.timeout = id->ack_timeout ? *id->ack_timeout : ack_timeout(*id->path);
      a.retry_cnt = id->retry;
      a.rnr_retry = id->rnr_retry;
      a.max_rd_atomic = id->initiator_depth;
      break;
    default:
      return EINVAL;
  }
  put(out, a);
  return 0;
}

}  // namespace vf::cm
