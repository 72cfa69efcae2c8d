#include "dataplane/fabric/neighbours.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "dataplane/wire/arp.hpp"
#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/ipv6.hpp"
#include "dataplane/wire/ndp.hpp"

namespace vf::dp {
namespace {

constexpr Mac kBroadcast{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
constexpr unsigned kMinFrame = wire::kEthMinFrameLen - wire::kEthFcsLen;  // 60: padded up to it

// fe80::/64 with an EUI-64 interface identifier (xx:xx:xx:ff:fe:xx:xx:xx):
// the MAC is in it, with the universal/local bit flipped back.
bool link_local_mac(const Gid& g, Mac& mac) {
  static constexpr uint8_t kLinkLocal[8] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(g.data(), kLinkLocal, 8) != 0 || g[11] != 0xff || g[12] != 0xfe) return false;
  mac = Mac{uint8_t(g[8] ^ 0x02), g[9], g[10], g[13], g[14], g[15]};
  return true;
}

}  // namespace

bool is_v4_mapped(const Gid& g) {
  static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  return std::memcmp(g.data(), kPrefix, 12) == 0;
}

Gid v4_mapped_gid(uint32_t ip) {
  Gid g{};
  g[10] = g[11] = 0xFF;
  wire::put32(g.data() + 12, ip);
  return g;
}

size_t Neighbours::GidHash::operator()(const Gid& g) const {
  uint64_t a, b;
  std::memcpy(&a, g.data(), 8);
  std::memcpy(&b, g.data() + 8, 8);
  return std::hash<uint64_t>{}(a * 0x9E3779B97F4A7C15ULL ^ b);
}

Neighbours::Neighbours(Scheduler& sched, NeighbourIface& iface, rte_mempool* pool)
    : sched_(sched), iface_(iface), pool_(pool), timer_(&Neighbours::on_timer, this) {}

Neighbours::~Neighbours() {
  sched_.disarm(timer_);
  for (auto& [ip, e] : table_)
    for (const Parked& p : e.parked) rte_pktmbuf_free(p.m);
}

bool Neighbours::lookup(const Gid& ip, Mac& mac) const {
  const auto it = table_.find(ip);
  if (it != table_.end() && (it->second.state == State::kReachable || it->second.state == State::kPermanent)) {
    mac = it->second.mac;
    return true;
  }
  return link_local_mac(ip, mac);
}

Neighbours::Entry* Neighbours::entry_for(const Gid& ip) {
  auto it = table_.find(ip);
  if (it == table_.end()) {
    if (table_.size() >= kMaxEntries && !make_room()) return nullptr;
    it = table_.emplace(ip, Entry{}).first;
  }
  return &it->second;
}

void Neighbours::start_probing(const Gid& ip, Entry& e) {
  if (e.state == State::kFailed) {
    e.state = State::kIncomplete;
    e.probes = 0;
  }
  if (e.probes == 0) solicit(ip, e);
}

void Neighbours::park(const Gid& ip, rte_mbuf* m, unsigned cls) {
  Entry* e = entry_for(ip);
  if (!e) {
    ctr_.unresolved_discards.add();
    rte_pktmbuf_free(m);
    return;
  }
  if (e->parked.size() >= kUnresolvedQueue) {
    // Linux drops the oldest to make room: the newest packet is the one an
    // application is most likely still waiting for.
    ctr_.unresolved_discards.add();
    rte_pktmbuf_free(e->parked.front().m);
    e->parked.pop_front();
  }
  e->parked.push_back({m, uint8_t(cls)});
  start_probing(ip, *e);
}

void Neighbours::resolve(const Gid& ip, ResolveDone done) {
  Mac mac;
  if (lookup(ip, mac)) return done(0);
  Entry* e = entry_for(ip);
  if (!e) return done(ETIMEDOUT);  // every entry is in use: no room to ask
  e->waiters.push_back({sched_.now() + kResolveTimeout, std::move(done)});
  start_probing(ip, *e);
  arm_timer();
}

void Neighbours::take_waiters(Entry& e, std::vector<Waiter>& out, Nanos past) {
  std::erase_if(e.waiters, [&](Waiter& w) {
    if (w.deadline > past) return false;
    out.push_back(std::move(w));
    return true;
  });
}

void Neighbours::call(std::vector<Waiter>& ws, int err) {
  for (Waiter& w : ws) w.done(err);
}

void Neighbours::solicit(const Gid& ip, Entry& e) {
  ++e.probes;
  e.probe_at = sched_.now() + kRetransTime;
  arm_timer();
  uint8_t* body = nullptr;
  if (is_v4_mapped(ip)) {
    rte_mbuf* m = new_frame(kBroadcast, wire::kEtherTypeArp, wire::kArpLen, &body);
    if (!m) return;
    wire::ArpMsg a;
    a.sha = iface_.mac();
    a.spa = v4_of(iface_.source(true));
    a.tpa = v4_of(ip);
    wire::arp_put(body, a);
    ctr_.solicits_sent.add();
    return send(m);
  }
  const Gid src = iface_.source(false);
  if (src == Gid{}) return;  // no IPv6 address to ask from: the parked frames wait out the probes
  wire::NdMsg ns;
  ns.type = wire::kNdSolicit;
  std::memcpy(ns.target.data(), ip.data(), 16);
  ns.dst = wire::solicited_node(ns.target);
  std::memcpy(ns.src.data(), src.data(), 16);
  ns.has_lla = true;
  ns.lla = iface_.mac();
  rte_mbuf* m = new_frame(wire::ipv6_multicast_mac(ns.dst), wire::kEtherTypeIpv6, wire::kNdLen, &body);
  if (!m) return;
  wire::nd_put(body, ns);
  ctr_.solicits_sent.add();
  send(m);
}

void Neighbours::on_timer(Timer& t, Nanos now) {
  auto& n = CtxTimer::owner<Neighbours>(t);
  std::vector<Waiter> timed_out;
  for (auto& [ip, e] : n.table_) {
    take_waiters(e, timed_out, now);
    if (e.state != State::kIncomplete || e.probe_at > now) continue;
    if (e.probes < kMaxProbes) {
      n.solicit(ip, e);
      continue;
    }
    e.state = State::kFailed;
    e.probes = 0;
    n.ctr_.failed.add();
    n.drop_parked(e);
    take_waiters(e, timed_out);
  }
  n.arm_timer();
  call(timed_out, ETIMEDOUT);
}

void Neighbours::arm_timer() {
  Nanos next = kNever;
  for (const auto& [ip, e] : table_) {
    if (e.state == State::kIncomplete && e.probes > 0) next = std::min(next, e.probe_at);
    for (const Waiter& w : e.waiters) next = std::min(next, w.deadline);
  }
  if (next == kNever)
    sched_.disarm(timer_);
  else
    sched_.arm(timer_, next);
}

bool Neighbours::make_room() {
  auto victim = table_.end();
  for (auto it = table_.begin(); it != table_.end(); ++it) {
    const Entry& e = it->second;
    if (e.state == State::kFailed && e.parked.empty()) {
      victim = it;
      break;
    }
    if (e.state == State::kReachable && victim == table_.end()) victim = it;
  }
  if (victim == table_.end()) return false;
  table_.erase(victim);
  return true;
}

void Neighbours::drop_parked(Entry& e) {
  for (const Parked& p : e.parked) rte_pktmbuf_free(p.m);
  ctr_.unresolved_discards.add(e.parked.size());
  e.parked.clear();
}

// What the wire says `ip` is at. `create`: the message was addressed to us
// (a request for our address), so an unknown sender gets an entry -- we are
// about to talk to it; otherwise only entries we already have are updated.
void Neighbours::learned(const Gid& ip, const Mac& mac, bool create, bool override) {
  auto it = table_.find(ip);
  if (it == table_.end()) {
    if (!create || (table_.size() >= kMaxEntries && !make_room())) return;
    it = table_.emplace(ip, Entry{}).first;
  }
  Entry& e = it->second;
  if (e.state == State::kPermanent) return;
  if (!override && e.state == State::kReachable && e.mac != mac) return;
  if (e.state != State::kReachable) ctr_.resolved.add();
  e.state = State::kReachable;
  e.mac = mac;
  e.probes = 0;
  std::deque<Parked> parked;
  parked.swap(e.parked);
  for (const Parked& p : parked) {
    wire::eth_set_dst(rte_pktmbuf_mtod(p.m, uint8_t*), mac.data());
    iface_.transmit(p.m, p.cls);
  }
  std::vector<Waiter> known;
  take_waiters(e, known);
  arm_timer();
  call(known, 0);
}

bool Neighbours::receive(rte_mbuf* m) {
  const uint16_t len = rte_pktmbuf_data_len(m);
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  if (len < wire::kEthHdrLen) return false;
  unsigned l3 = wire::kEthHdrLen;
  uint16_t type = wire::eth_type(f);
  if (type == wire::kEtherTypeVlan) {
    if (len < wire::kEthHdrLen + wire::kVlanLen) return false;
    type = wire::get16(f + wire::kEthTypeOffset + wire::kVlanLen);
    l3 += wire::kVlanLen;
  }
  bool ours;
  if (type == wire::kEtherTypeArp) {
    ours = on_arp(f + l3, len - l3);
  } else if (type == wire::kEtherTypeIpv6 && len >= l3 + wire::kIpv6HdrLen &&
             wire::ipv6_next_header(f + l3) == wire::kIpProtoIcmpv6) {
    ours = on_nd(f + l3, len - l3, wire::eth_src(f));
  } else {
    return false;
  }
  if (!ours) ctr_.rx_invalid.add();
  rte_pktmbuf_free(m);
  return true;
}

// True when the frame was a well-formed ARP message (for us or not).
bool Neighbours::on_arp(const uint8_t* p, size_t len) {
  const auto a = wire::arp_parse(p, len);
  if (!a) return false;
  const Gid sender = v4_mapped_gid(a->spa);
  const bool for_us = a->tpa != 0 && iface_.owns(v4_mapped_gid(a->tpa));
  // Someone claiming our own address is a conflict, not a neighbour.
  if (a->spa != 0 && !(a->sha[0] & 1) && !iface_.owns(sender))
    learned(sender, a->sha, for_us && a->op == wire::kArpRequest);
  if (!for_us || a->op != wire::kArpRequest) return true;
  uint8_t* body = nullptr;
  rte_mbuf* m = new_frame(a->sha, wire::kEtherTypeArp, wire::kArpLen, &body);
  if (!m) return true;
  wire::ArpMsg r;
  r.op = wire::kArpReply;
  r.sha = iface_.mac();
  r.spa = a->tpa;
  r.tha = a->sha;
  r.tpa = a->spa;
  wire::arp_put(body, r);
  ctr_.replies_sent.add();
  send(m);
  return true;
}

bool Neighbours::on_nd(const uint8_t* ip6, size_t len, const uint8_t* eth_src) {
  const auto nd = wire::nd_parse(ip6, len);
  if (!nd || nd->target[0] == 0xff) return false;  // a multicast target is invalid (RFC 4861 §7.1)
  Gid target;
  std::memcpy(target.data(), nd->target.data(), 16);
  if (nd->type == wire::kNdAdvert) {
    if (nd->dst[0] == 0xff && (nd->flags & wire::kNdSolicited)) return false;  // §7.1.2
    if (nd->has_lla) learned(target, nd->lla, false, nd->flags & wire::kNdOverride);
    return true;
  }
  if (!iface_.owns(target)) return true;
  Gid src;
  std::memcpy(src.data(), nd->src.data(), 16);
  const bool dad = src == Gid{};  // duplicate address detection: no sender to learn
  if (!dad && nd->has_lla) learned(src, nd->lla, true);
  wire::NdMsg na;
  na.type = wire::kNdAdvert;
  na.src = nd->target;
  na.target = nd->target;
  na.dst = dad ? wire::Ipv6Addr{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1} : nd->src;
  na.flags = (dad ? 0 : wire::kNdSolicited) | wire::kNdOverride;
  na.has_lla = true;
  na.lla = iface_.mac();
  // Back to the asker: its option's address, else the frame's source.
  Mac to;
  if (dad) to = wire::ipv6_multicast_mac(na.dst);
  else if (nd->has_lla) to = nd->lla;
  else std::memcpy(to.data(), eth_src, 6);
  uint8_t* body = nullptr;
  rte_mbuf* m = new_frame(to, wire::kEtherTypeIpv6, wire::kNdLen, &body);
  if (!m) return true;
  wire::nd_put(body, na);
  ctr_.replies_sent.add();
  send(m);
  return true;
}

rte_mbuf* Neighbours::new_frame(const Mac& dst, uint16_t ethertype, unsigned payload, uint8_t** body) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (!m) return nullptr;
  const uint16_t vid = iface_.vlan_tag();
  const unsigned l2 = wire::kEthHdrLen + (vid ? wire::kVlanLen : 0);
  const unsigned len = std::max(l2 + payload, kMinFrame);
  auto* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, uint16_t(len)));
  if (!f) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  std::memset(f, 0, len);
  wire::eth_set_dst(f, dst.data());
  wire::eth_set_src(f, iface_.mac().data());
  if (vid) {
    wire::put16(f + wire::kEthTypeOffset, wire::kEtherTypeVlan);
    wire::put16(f + wire::kEthTypeOffset + 2, vid & 0x0FFF);  // PCP 0: best effort
  }
  wire::put16(f + l2 - 2, ethertype);
  *body = f + l2;
  return m;
}

// Neighbour traffic is best effort: priority 0, whatever the port's trust.
void Neighbours::send(rte_mbuf* m) { iface_.transmit(m, 0); }

std::vector<std::pair<Gid, Mac>> Neighbours::entries() const {
  std::vector<std::pair<Gid, Mac>> out;
  for (const auto& [ip, e] : table_)
    if (e.state == State::kReachable || e.state == State::kPermanent) out.emplace_back(ip, e.mac);
  std::sort(out.begin(), out.end());
  return out;
}

void Neighbours::set_permanent(const Gid& ip, const Mac& mac) {
  Entry& e = table_[ip];
  e.state = State::kPermanent;
  e.mac = mac;
  for (const Parked& p : e.parked) {
    wire::eth_set_dst(rte_pktmbuf_mtod(p.m, uint8_t*), mac.data());
    iface_.transmit(p.m, p.cls);
  }
  e.parked.clear();
  std::vector<Waiter> known;
  take_waiters(e, known);
  arm_timer();
  call(known, 0);
}

void Neighbours::remove(const Gid& ip) {
  const auto it = table_.find(ip);
  if (it == table_.end()) return;
  drop_parked(it->second);
  std::vector<Waiter> gone;
  take_waiters(it->second, gone);
  table_.erase(it);
  arm_timer();
  call(gone, ETIMEDOUT);
}

void Neighbours::flush() {
  std::vector<Waiter> gone;
  for (auto it = table_.begin(); it != table_.end();) {
    if (it->second.state == State::kPermanent) {
      ++it;
      continue;
    }
    drop_parked(it->second);
    take_waiters(it->second, gone);
    it = table_.erase(it);
  }
  arm_timer();
  call(gone, ETIMEDOUT);
}

void Neighbours::reset_counters() {
  for (Counter* c : {&ctr_.solicits_sent, &ctr_.replies_sent, &ctr_.resolved, &ctr_.failed,
                     &ctr_.unresolved_discards, &ctr_.rx_invalid})
    c->set(0);
}

}  // namespace vf::dp
