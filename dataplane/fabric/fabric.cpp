#include "dataplane/fabric/fabric.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <tuple>

#include "dataplane/fabric/pfc_headroom.hpp"
#include "dataplane/fabric/port_capture.hpp"

namespace vf::dp {

std::optional<Endpoint> Endpoint::parse(std::string_view text) {
  const size_t slash = text.find('/');
  Endpoint e;
  e.node = std::string(text.substr(0, slash));
  if (e.node.empty()) return std::nullopt;
  if (slash == std::string_view::npos) return e;
  const std::string_view num = text.substr(slash + 1);
  if (num.empty() || num[0] == '0') return std::nullopt;  // ports count from 1; no leading zeros
  const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), e.port);
  if (ec != std::errc{} || end != num.data() + num.size()) return std::nullopt;
  return e;
}

std::string Endpoint::str() const { return port ? node + "/" + std::to_string(port) : node; }

Fabric::Fabric(Scheduler& sched, std::string name, LinkLayer ll, rte_mempool* pool)
    : sched_(sched), name_(std::move(name)), ll_(ll), pool_(pool) {}

Fabric::~Fabric() {
  // Links first: their destructors free frames in flight without delivering.
  links_.clear();
  hcas_.clear();
  switches_.clear();
}

bool Fabric::name_taken(std::string_view n) const {
  for (const auto& s : switches_)
    if (s->name() == n) return true;
  for (const auto& h : hcas_)
    if (h->name() == n) return true;
  return false;
}

Switch& Fabric::add_switch(const std::string& name, unsigned nports, Nanos latency_ns) {
  SwitchConfig cfg;
  cfg.nports = nports;
  cfg.latency_ns = latency_ns;
  return add_switch(name, cfg);
}

Switch& Fabric::add_switch(const std::string& name, const SwitchConfig& cfg) {
  if (name.empty() || name.find('/') != std::string::npos)
    throw std::invalid_argument("fabric " + name_ + ": bad switch name '" + name + "'");
  if (name_taken(name)) throw std::invalid_argument("fabric " + name_ + ": duplicate name " + name);
  if (ll_ == LinkLayer::kInfiniBand)
    switches_.push_back(std::make_unique<IbSwitch>(sched_, name, cfg));
  else
    switches_.push_back(std::make_unique<EthSwitch>(sched_, name, cfg));
  return *switches_.back();
}

HcaPort& Fabric::add_hca_port(const std::string& name, const HcaPortConfig& cfg) {
  if (name.empty() || name.find('/') != std::string::npos)
    throw std::invalid_argument("fabric " + name_ + ": bad HCA port name '" + name + "'");
  if (name_taken(name)) throw std::invalid_argument("fabric " + name_ + ": duplicate name " + name);
  if (cfg.link_layer != ll_)
    throw std::invalid_argument("fabric " + name_ + ": HCA port " + name + " has the other link layer");
  hcas_.push_back(std::make_unique<HcaPort>(sched_, name, pool_, cfg));
  return *hcas_.back();
}

Switch* Fabric::find_switch(std::string_view name) {
  for (auto& s : switches_)
    if (s->name() == name) return s.get();
  return nullptr;
}

HcaPort* Fabric::find_hca_port(std::string_view name) {
  for (auto& h : hcas_)
    if (h->name() == name) return h.get();
  return nullptr;
}

Port& Fabric::port(const Endpoint& e) {
  if (e.port == 0) {
    if (HcaPort* h = find_hca_port(e.node)) return h->port();
    if (find_switch(e.node))
      throw std::invalid_argument("fabric " + name_ + ": " + e.node + " is a switch; say which port (" +
                                  e.node + "/N)");
  } else if (Switch* s = find_switch(e.node)) {
    if (e.port > s->nports())
      throw std::invalid_argument("fabric " + name_ + ": " + e.str() + ": switch has " +
                                  std::to_string(s->nports()) + " ports");
    return s->port(e.port);
  } else if (find_hca_port(e.node)) {
    throw std::invalid_argument("fabric " + name_ + ": " + e.str() + ": an HCA port has no port number");
  }
  throw std::invalid_argument("fabric " + name_ + ": unknown endpoint " + e.str());
}

Link& Fabric::connect(const Endpoint& a, const Endpoint& b, const LinkParams& params,
                      uint32_t vl_buffer_bytes) {
  Port& pa = port(a);
  Port& pb = port(b);
  if (&pa == &pb) throw std::invalid_argument("fabric " + name_ + ": " + a.str() + " linked to itself");
  for (const auto& [e, p] : {std::pair{&a, &pa}, std::pair{&b, &pb}})
    if (p->connected()) throw std::invalid_argument("fabric " + name_ + ": " + e->str() + " is already linked");
  if (params.rate_bps == 0) throw std::invalid_argument("fabric " + name_ + ": link rate must be > 0");
  if (params.mtu == 0) throw std::invalid_argument("fabric " + name_ + ": link MTU must be > 0");
  const auto [ca, vls_a] = port_setup(a);
  const auto [cb, vls_b] = port_setup(b);
  const bool credits = ll_ == LinkLayer::kInfiniBand && ca->credits && cb->credits;
  const uint32_t buf_a = vl_buffer_bytes ? vl_buffer_bytes : ca->vl_buffer_bytes;
  const uint32_t buf_b = vl_buffer_bytes ? vl_buffer_bytes : cb->vl_buffer_bytes;
  // Checked before anything is wired: a bad buffer leaves the fabric unchanged.
  if (credits)
    for (const auto& [e, buf] : {std::pair{&a, buf_a}, std::pair{&b, buf_b}})
      if (buf && buf < max_frame_bytes(ll_, params.mtu))
        throw std::invalid_argument("fabric " + name_ + ": " + e->str() + ": vl_buffer of " +
                                    std::to_string(buf) +
                                    " bytes cannot hold one packet of the link's MTU " +
                                    std::to_string(params.mtu) + " (" +
                                    std::to_string(max_frame_bytes(ll_, params.mtu)) + " bytes)");
  LinkInfo& li =
      links_.emplace_back(LinkInfo{a, b, std::make_unique<Link>(sched_, ll_, params), {}, {}, {}, {}, {}, {}, &pa, &pb, {}, {}});
  connect_ports(pa, pb, *li.link);
  if (ll_ == LinkLayer::kEthernet) {
    try {
      li.pfc_a = make_pfc(pa, pb, a);
      li.pfc_b = make_pfc(pb, pa, b);
      li.ecn_a = make_ecn(pa, a);
      li.ecn_b = make_ecn(pb, b);
    } catch (...) {
      links_.pop_back();  // the ports stay wired to a dead link otherwise
      pa.detach();
      pb.detach();
      throw;
    }
  }
  if (credits) {
    const uint8_t vls = std::min(vls_a, vls_b);
    li.credits_a = make_credits(pa, buf_a, ca->vl15_buffer_bytes, vls);
    li.credits_b = make_credits(pb, buf_b, cb->vl15_buffer_bytes, vls);
  }
  return *li.link;
}

const LinkInfo* Fabric::find_link(const Endpoint& end) const {
  for (const LinkInfo& l : links_)
    if (l.a == end || l.b == end) return &l;
  return nullptr;
}

void Fabric::set_impairment(const Endpoint& end, const ImpairmentSpec& spec) {
  LinkInfo* l = nullptr;
  for (LinkInfo& li : links_)
    if (li.a == end || li.b == end) l = &li;
  if (!l) throw std::invalid_argument("fabric " + name_ + ": " + end.str() + " has no link");
  spec.check();
  if (!spec.any()) {
    l->link->a_to_b().set_impairment({});
    l->link->b_to_a().set_impairment({});
    l->impair_ab.reset();
    l->impair_ba.reset();
    return;
  }
  ImpairmentSpec back = spec;
  back.seed = spec.seed + 1;
  auto ab = std::make_unique<Impairment>(ll_, spec, &l->link->a_to_b().corrupted);  // both made first
  auto ba = std::make_unique<Impairment>(ll_, back, &l->link->b_to_a().corrupted);
  l->link->a_to_b().set_impairment(ab->stage());
  l->link->b_to_a().set_impairment(ba->stage());
  l->impair_ab = std::move(ab);
  l->impair_ba = std::move(ba);
}

void Fabric::set_capture(const Endpoint& port, PortCapture* cap) {
  const LinkInfo* l = find_link(port);
  if (!l) throw std::invalid_argument("fabric " + name_ + ": " + port.str() + " has no link");
  LinkDirection& sent = l->a == port ? l->link->a_to_b() : l->link->b_to_a();
  LinkDirection& received = l->a == port ? l->link->b_to_a() : l->link->a_to_b();
  if (!cap) {
    sent.set_tap({});
    received.set_tap({});
    return;
  }
  if (sent.tapped() || received.tapped())
    throw std::invalid_argument("the link " + l->a.str() + " - " + l->b.str() + " is being captured already");
  sent.set_tap(cap->sent_tap());
  received.set_tap(cap->received_tap());
}

void Fabric::set_link_timing(const Endpoint& end, uint64_t rate_bps, Nanos delay_ns) {
  const LinkInfo* l = find_link(end);
  if (!l) throw std::invalid_argument("fabric " + name_ + ": " + end.str() + " has no link");
  if (rate_bps == 0) throw std::invalid_argument("fabric " + name_ + ": link rate must be > 0");
  l->link->set_timing(rate_bps, delay_ns);
  for (Port* p : {l->port_a, l->port_b}) p->link_timing_changed();
  for (IbCredits* c : {l->credits_a.get(), l->credits_b.get()})
    if (c) c->rate_changed();
}

const LinkInfo& Fabric::set_link_up(const Endpoint& end, bool up, PhysState phys_down) {
  const LinkInfo* l = find_link(end);
  if (!l) throw std::invalid_argument("fabric " + name_ + ": " + end.str() + " has no link");
  Port& pa = *l->port_a;
  Port& pb = *l->port_b;
  HcaPort* ha = l->a.port == 0 ? find_hca_port(l->a.node) : nullptr;
  HcaPort* hb = l->b.port == 0 ? find_hca_port(l->b.node) : nullptr;
  // Down: the ports stop and drop their queues before the wire is emptied,
  // so nothing new goes onto it. Up: the records say Init (or Active) before
  // the ports start exchanging flow-control packets.
  for (HcaPort* h : {ha, hb})
    if (h) h->link_changed(up, phys_down);
  pa.set_link_up(up);
  pb.set_link_up(up);
  if (!up) {
    l->link->a_to_b().flush();
    l->link->b_to_a().flush();
    // A bridge forgets the stations behind a port that stopped forwarding.
    for (const Endpoint* e : {&l->a, &l->b})
      if (e->port != 0 && ll_ == LinkLayer::kEthernet) static_cast<EthSwitch*>(find_switch(e->node))->flush_port(e->port);
  }
  return *l;
}

std::pair<const PortConfig*, uint8_t> Fabric::port_setup(const Endpoint& e) {
  if (e.port == 0) {
    const HcaPort& h = *find_hca_port(e.node);
    return {&h.config().port, h.config().qos.data_vls};
  }
  const Switch& s = *find_switch(e.node);
  return {&s.config().port, s.config().data_vls};
}

std::unique_ptr<IbCredits> Fabric::make_credits(Port& p, uint32_t vl_buffer, uint32_t vl15_buffer,
                                                uint8_t data_vls) {
  CreditConfig cc;
  cc.data_vls = data_vls;
  cc.vl_buffer_bytes = vl_buffer ? vl_buffer : default_vl_buffer(p.link_params(), p.max_frame());
  cc.vl15_buffer_bytes = vl15_buffer;
  return std::make_unique<IbCredits>(p, pool_, cc);
}

// A switch port's PFC frames come from a locally administered address made
// from its name (switch ports have no MAC of their own here); a vHCA's from its MAC.
Mac Fabric::pfc_source_mac(const Endpoint& e) {
  if (e.port == 0) return find_hca_port(e.node)->config().mac;
  uint32_t h = 2166136261u;
  for (const char ch : e.str()) h = (h ^ uint8_t(ch)) * 16777619u;
  return Mac{0x02, 0x76, 0x66, uint8_t(h >> 16), uint8_t(h >> 8), uint8_t(h)};
}

std::unique_ptr<Pfc> Fabric::make_pfc(Port& p, const Port& peer, const Endpoint& e) {
  const bool switch_port = e.port != 0;
  const PfcSettings& mine = p.config().eth.pfc;
  PfcConfig c;
  c.enable = mine.enable;
  c.alpha_log2 = mine.alpha_log2;
  c.reserved_bytes = mine.reserved_bytes;
  c.pause_quanta = mine.pause_quanta;
  c.response_ns = mine.response_ns;
  c.watchdog_ns = mine.watchdog_ns;
  c.mac = pfc_source_mac(e);
  c.model = pfc_headroom({p.link_params().rate_bps, p.link_params().delay_ns, p.max_frame(), p.max_frame(),
                          uint64_t(peer.config().eth.pfc.response_ns), uint64_t(mine.interface_delay_ns)});
  const PfcThresholds t = default_pfc_thresholds(c.model.total, p.max_frame(), mine);
  for (unsigned i = 0; i < kNumPriorities; ++i) {
    if (!(c.enable >> i & 1)) continue;
    c.pg[i] = t;
    // A switch's lossless egress queues are bounded by PFC upstream, not by a size.
    if (switch_port) p.set_class_limit(i, EgressQueue::kUnbounded);
  }
  return std::make_unique<Pfc>(p, pool_, p.buffer(), c);
}

std::unique_ptr<EcnMarker> Fabric::make_ecn(Port& p, const Endpoint& e) {
  const EcnProfile& prof = p.config().eth.ecn;
  if (e.port == 0 || !prof.enabled) return nullptr;
  std::array<EcnProfile, 8> all;
  all.fill(prof);
  // WRED never drops on a lossless priority: PFC's promise comes first.
  for (unsigned prio = 0; prio < 8; ++prio)
    if (p.config().eth.pfc.enable >> prio & 1) all[prio].wred = false;
  // A seed of the port's own, so runs repeat and ports do not mark in step.
  uint64_t seed = 1469598103934665603ULL;
  for (const char ch : e.str()) seed = (seed ^ uint8_t(ch)) * 1099511628211ULL;
  return std::make_unique<EcnMarker>(p, all, seed);
}

const EcnMarker* Fabric::ecn(const Port& p) const {
  for (const LinkInfo& l : links_) {
    if (l.ecn_a && l.port_a == &p) return l.ecn_a.get();
    if (l.ecn_b && l.port_b == &p) return l.ecn_b.get();
  }
  return nullptr;
}

void Fabric::reset_flow_counters(const Port& p) {
  for (LinkInfo& l : links_)
    for (auto [port, pfc, ecn] : {std::tuple{l.port_a, l.pfc_a.get(), l.ecn_a.get()},
                                   std::tuple{l.port_b, l.pfc_b.get(), l.ecn_b.get()}})
      if (port == &p) {
        if (pfc) pfc->reset_counters();
        if (ecn) ecn->reset_counters();
      }
}

const Pfc* Fabric::pfc(const Port& p) const {
  for (const LinkInfo& l : links_) {
    if (l.pfc_a && &l.pfc_a->port() == &p) return l.pfc_a.get();
    if (l.pfc_b && &l.pfc_b->port() == &p) return l.pfc_b.get();
  }
  return nullptr;
}

const IbCredits* Fabric::credits(const Port& p) const {
  for (const LinkInfo& l : links_) {
    if (l.credits_a && &l.credits_a->port() == &p) return l.credits_a.get();
    if (l.credits_b && &l.credits_b->port() == &p) return l.credits_b.get();
  }
  return nullptr;
}

void Fabric::set_lft(std::string_view sw, uint16_t dlid, uint8_t port) {
  Switch* s = find_switch(sw);
  if (!s) throw std::invalid_argument("fabric " + name_ + ": unknown switch " + std::string(sw));
  if (ll_ != LinkLayer::kInfiniBand) throw std::invalid_argument("fabric " + name_ + ": an LFT is for IB switches");
  static_cast<IbSwitch*>(s)->set_lft(dlid, port);
}

EthSwitch& Fabric::eth_switch(std::string_view sw) {
  Switch* s = find_switch(sw);
  if (!s) throw std::invalid_argument("fabric " + name_ + ": unknown switch " + std::string(sw));
  if (ll_ != LinkLayer::kEthernet) throw std::invalid_argument("fabric " + name_ + ": " + s->name() + " is not an Ethernet switch");
  return *static_cast<EthSwitch*>(s);
}

void Fabric::add_fdb(std::string_view sw, const Mac& mac, unsigned port, uint16_t vid) {
  eth_switch(sw).add_fdb(mac, port, vid);
}

Router& Fabric::enable_routing(std::string_view sw, const RouterConfig& cfg) {
  return eth_switch(sw).enable_routing(cfg, pool_);
}

void Fabric::set_neighbour(std::string_view hca_port, const Gid& gid, const Mac& mac) {
  HcaPort* h = find_hca_port(hca_port);
  if (!h) throw std::invalid_argument("fabric " + name_ + ": unknown HCA port " + std::string(hca_port));
  h->set_neighbour(gid, mac);
}

std::vector<NamedPortSnapshot> Fabric::snapshot(Nanos now) const {
  std::vector<NamedPortSnapshot> out;
  for (const auto& h : hcas_) out.push_back({h->name(), h->port().snapshot(now)});
  for (const auto& s : switches_)
    for (unsigned i = 1; i <= s->nports(); ++i) out.push_back({s->port(i).name(), s->port(i).snapshot(now)});
  return out;
}

}  // namespace vf::dp
