#include "daemon/fabric/topology.hpp"

#include <stdexcept>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "daemon/telemetry/counter_format.hpp"
#include "daemon/sm/credit_loops.hpp"
#include "daemon/sm/lid_assign.hpp"
#include "daemon/config/link_attrs.hpp"
#include "daemon/telemetry/port_qos_json.hpp"
#include "daemon/ip/router_setup.hpp"
#include "daemon/sm/routing.hpp"
#include "daemon/sm/sm_qos.hpp"
#include "daemon/runtime/sysfs_spec.hpp"
#include "dataplane/fabric/credit_deadlock.hpp"
#include "dataplane/fabric/pfc_storm_watch.hpp"
#include "daemon/config/pfc_watchdog_check.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "dataplane/fabric/ib_switch.hpp"

namespace vf {
namespace {

// One vHCA: its engine and the port (owned by its fabric) it transmits through.
struct Vhca {
  dp::HcaPort* port;
  std::unique_ptr<engine::Hca> engine;
};

using sm::dp_endpoint;

// An Ethernet fabric's `qos:` as every one of its ports takes it.
dp::EthQos eth_qos(const config::EthQos& q) {
  dp::EthQos e;
  e.trust_dscp = q.trust_dscp;
  e.dscp2prio = q.dscp2prio;
  e.pfc.enable = q.pfc;
  e.pfc.pause_quanta = q.pause_quanta;
  e.pfc.response_ns = q.pfc_response_ns;
  e.pfc.watchdog_ns = q.pfc_watchdog_ns;
  e.pfc.xoff_bytes = q.xoff_bytes;
  e.pfc.xon_bytes = q.xon_bytes;
  e.pfc.headroom_bytes = q.headroom_bytes;
  e.pfc.alpha_log2 = q.buffer_alpha_log2;
  e.pfc.reserved_bytes = q.reserved_bytes;
  if (q.ecn_kmax_bytes) e.ecn = {true, q.ecn_kmin_bytes, q.ecn_kmax_bytes, q.ecn_pmax, q.ecn_wred};
  e.ets.enabled = true;
  e.ets.prio2tc = q.prio_tc;
  for (unsigned tc = 0; tc < 8; ++tc) e.ets.tsa[tc] = q.tc_strict[tc] ? dp::Tsa::kStrict : dp::Tsa::kEts;
  e.ets.bw = q.tc_bw;
  return e;
}

// DCQCN at vHCA `h` on a link of `rate_bps`: the fabric's, then the vHCA's own.
engine::DcqcnConfig dcqcn_config(const config::EthQos& q, const config::Hca& h, uint64_t rate_bps) {
  engine::DcqcnConfig c;
  const config::Hca::DcqcnOverride& o = h.dcqcn;
  c.rp_enabled = c.np_enabled = o.enabled.value_or(q.dcqcn);
  c.line_rate_mbps = uint32_t(rate_bps / 1'000'000);
  c.min_time_between_cnps_ns = o.cnp_interval_ns.value_or(q.cnp_interval_ns);
  c.rpg_time_reset_ns = o.rate_timer_ns.value_or(q.rate_timer_ns);
  c.rpg_ai_rate_mbps = o.ai_rate_mbps.value_or(q.ai_rate_mbps);
  c.rpg_hai_rate_mbps = o.hai_rate_mbps.value_or(q.hai_rate_mbps);
  return c;
}

}  // namespace

struct Topology::Impl {
  Scheduler& sched;
  // Fabrics outlive the engines: an engine's last act may be to free mbufs
  // it had queued on its port.
  std::vector<std::unique_ptr<dp::Fabric>> fabrics;
  std::vector<std::unique_ptr<Vhca>> vhcas;  // same order as Topology::info_; stable addresses
  // Per fabric (null for Ethernet); after `fabrics`, so destroyed first.
  std::vector<std::unique_ptr<dp::CreditDeadlockDetector>> deadlocks;
  std::vector<std::unique_ptr<dp::PfcStormWatch>> storms;  // Ethernet fabrics; null on IB
  std::vector<std::string> routing;  // per fabric: the routing's name, for messages
  std::vector<std::unique_ptr<sm::SubnetManager>> sms;  // per fabric; null for Ethernet
  std::vector<const config::Fabric*> cfg;                // per fabric
  std::function<void(size_t)> activated;
  std::function<void(std::string, std::string)> event;
  explicit Impl(Scheduler& s) : sched(s) {}
};

VhcaInfo describe_vhca(const config::Config::HcaRef& ref, uint16_t lid) {
  const auto& f = *ref.fabric;
  const runtime::DeviceSpec spec = runtime::make_device_spec(f, *ref.hca, *ref.link, sm::assign_lids(f));
  VhcaInfo v;
  v.name = ref.hca->name;
  v.fabric = f.name;
  v.link_layer = f.link_layer;
  v.index = ref.hca->index;
  auto& e = v.engine_config;
  e.name = v.name;
  e.node_guid = spec.node_guid;
  e.sys_image_guid = spec.sys_image_guid;
  e.fw_ver = spec.fw_ver;  // ibv_devinfo's fw_ver must match sysfs
  // Port 1 as it starts, derived from the config in one place (make_device_spec).
  v.port = spec.port;
  v.port.lid = lid;
  if (f.link_layer == config::LinkLayer::Infiniband) v.port.qos = sm::programmed_qos(f.qos);
  return v;
}

Topology::Topology(const config::Config& cfg, Scheduler& sched, rte_mempool* pool)
    : impl_(std::make_unique<Impl>(sched)) {
  for (const auto& f : cfg.fabrics) {
    auto& fabric = *impl_->fabrics.emplace_back(
        std::make_unique<dp::Fabric>(sched, f.name, config::to_core(f.link_layer), pool));
    impl_->cfg.push_back(&f);
    add_switches(fabric, f);
    const auto lids = sm::assign_lids(f);
    const size_t first_vhca = impl_->vhcas.size();
    for (const auto& h : f.hcas) add_vhca(fabric, f, h, lids.lid(h.name));
    for (const auto& l : f.links)
      fabric.connect(dp_endpoint(l.a), dp_endpoint(l.b), {l.rate_bps, l.delay_ns, l.mtu}, l.vl_buffer_bytes);
    const bool ib = f.link_layer == config::LinkLayer::Infiniband;
    impl_->deadlocks.push_back(ib ? std::make_unique<dp::CreditDeadlockDetector>(fabric) : nullptr);
    impl_->storms.push_back(ib ? nullptr : std::make_unique<dp::PfcStormWatch>(fabric));
    impl_->routing.push_back(ib ? config::to_string(f.sm.routing) : "");
    if (!ib) {
      impl_->sms.push_back(nullptr);
      program_ethernet(fabric, f);
      warn_small_headroom(fabric);
      if (const std::string w = pfc_watchdog_warning(f); !w.empty()) spdlog::warn("{}", w);
      continue;
    }
    // The SM's first sweep: every LFT, and every port from Init to Active.
    auto& sm = *impl_->sms.emplace_back(std::make_unique<sm::SubnetManager>(f, fabric, sched, kSweepDelay));
    const sm::SweepReport& r = sm.sweep();
    // An app attaching a UD QP to a multicast group joins its port (no SA here).
    for (size_t i = first_vhca; i < impl_->vhcas.size(); ++i)
      impl_->vhcas[i]->engine->on_mcast_membership(
          [&sm, name = info_[i].name](uint16_t mlid, bool member) { sm.mcast_membership(name, mlid, member); });
    // A routing whose channel dependencies form a cycle can deadlock under
    // load: the lab should know before it happens, and why.
    if (const std::string w = credit_loop_warning(f, sm.routes()); !w.empty()) spdlog::warn("{}", w);
    const size_t fi = impl_->sms.size() - 1;
    sm.on_sweep([this, fi](const sm::SweepReport& done) { after_sweep(fi, done); });
    spdlog::info("fabric {}: subnet manager swept: {} routing, {} LFT entries, {} ports active", f.name,
                 impl_->routing.back(), r.lft_changes, r.activated.size());
    if (f.adaptive.mode != config::AdaptiveRouting::Mode::Off)
      spdlog::info("fabric {}: adaptive routing {}: {} (switch, vHCA) pairs have an AR group", f.name,
                   config::to_string(f.adaptive.mode), r.ar_groups);
  }
}

// Operational VLs are structural (every port's credits are sized for them);
// the SL→VL and arbitration tables are the SM's to program.
void Topology::add_switches(dp::Fabric& fabric, const config::Fabric& f) {
  for (const auto& s : f.switches) {
    dp::SwitchConfig sc;
    sc.nports = s.ports;
    sc.latency_ns = s.latency_ns;
    sc.port.vl_buffer_bytes = s.vl_buffer_bytes;
    sc.data_vls = f.qos.data_vls;
    sc.adaptive = {f.adaptive.mode == config::AdaptiveRouting::Mode::Off         ? dp::AdaptiveMode::kOff
                   : f.adaptive.mode == config::AdaptiveRouting::Mode::PerPacket ? dp::AdaptiveMode::kPerPacket
                                                                                 : dp::AdaptiveMode::kFlowlet,
                   Nanos(f.adaptive.flowlet_gap_ns)};
    if (f.link_layer == config::LinkLayer::Ethernet) {
      sc.port.eth = eth_qos(f.eth_qos);
      sc.buffer_bytes = s.buffer_bytes;
    }
    fabric.add_switch(s.name, sc);
  }
}

// An Ethernet fabric is not programmed: the switches learn and the emulated
// hosts resolve each other with ARP / ND on the wire, as a real L2 domain
// does. Only what the config pins down is set: ageing, static FDB entries,
// and the VLAN membership its hosts imply -- a port facing a tagged host
// carries only that VLAN, tagged; switch-to-switch ports carry every VLAN
// in use, tagged, besides the untagged default VLAN 1.
void Topology::program_ethernet(dp::Fabric& fabric, const config::Fabric& f) {
  dp::PortVlans trunk;
  for (const auto& h : f.hcas)
    if (h.vlan) trunk.add_tagged(h.vlan);
  for (const auto& s : f.switches) {
    dp::EthSwitch& sw = fabric.eth_switch(s.name);
    sw.set_ageing(s.ageing_ns);
    for (const auto& e : s.fdb) sw.add_fdb(e.mac, e.port, e.vlan);
  }
  for (const auto& l : f.links) {
    const config::Hca* host = l.a.is_switch ? f.find_hca(l.b.node) : f.find_hca(l.a.node);
    for (const config::Endpoint* e : {&l.a, &l.b}) {
      if (!e->is_switch) continue;
      if (!host) {
        fabric.eth_switch(e->node).set_vlans(e->port, trunk);
      } else if (host->vlan) {
        dp::PortVlans tagged;
        tagged.member.reset();
        tagged.untagged.reset();
        tagged.pvid = 0;  // an untagged frame from a tagged host is not expected: dropped
        tagged.add_tagged(host->vlan);
        fabric.eth_switch(e->node).set_vlans(e->port, tagged);
      }
    }
  }
  routing::enable_routers(fabric, f);
  routing::program_routes(fabric, f);
}

// A headroom below the 802.1Qbb model is allowed (labs reproduce drops with
// it) but never silently.
void Topology::warn_small_headroom(const dp::Fabric& fabric) {
  for (const auto& l : fabric.links())
    for (const dp::Port* p : {l.port_a, l.port_b}) {
      const dp::Pfc* pfc = fabric.pfc(*p);
      if (!pfc) continue;
      const uint64_t model = pfc->config().model.total;
      for (unsigned i = 0; i < dp::kNumPriorities; ++i)
        if (pfc->lossless(i) && pfc->config().pg[i].headroom < model) {
          spdlog::warn("fabric {}: port {} priority {}: PFC headroom {} bytes is below the 802.1Qbb model's {} "
                       "bytes for its link; lossless traffic will drop under load (headroom_overflow)",
                       fabric.name(), p->name(), i, pfc->config().pg[i].headroom, model);
          break;
        }
    }
}

void Topology::after_sweep(size_t fabric, const sm::SweepReport& r) {
  const std::string line = fmt::format(
      "fabric {}: subnet manager sweep {}: {} of {} links up, {} LFT entries changed, {} port{} activated, {} "
      "switch/HCA pairs without a route",
      impl_->fabrics[fabric]->name(), r.number, r.links_up, r.links, r.lft_changes, r.activated.size(),
      r.activated.size() == 1 ? "" : "s", r.unrouted);
  spdlog::info("{}", line);
  if (impl_->event) impl_->event("sm", line);
  if (!impl_->activated) return;
  for (const std::string& name : r.activated)
    for (size_t i = 0; i < info_.size(); ++i)
      if (info_[i].name == name && info_[i].fabric == impl_->fabrics[fabric]->name()) impl_->activated(i);
}

std::vector<size_t> Topology::set_link_up(size_t fabric, size_t link, bool up, PhysState phys_down) {
  const config::Fabric& f = *impl_->cfg.at(fabric);
  const config::Link& l = f.links.at(link);
  impl_->fabrics[fabric]->set_link_up(dp_endpoint(l.a), up, phys_down);
  if (impl_->sms[fabric]) impl_->sms[fabric]->request_sweep();
  else routing::program_routes(*impl_->fabrics[fabric], f);
  std::vector<size_t> ends;
  for (size_t i = 0; i < info_.size(); ++i)
    if (info_[i].fabric == f.name && (info_[i].name == l.a.node || info_[i].name == l.b.node)) ends.push_back(i);
  return ends;
}

void Topology::set_link_impairment(size_t fabric, size_t link, const dp::ImpairmentSpec& spec) {
  const config::Link& l = impl_->cfg.at(fabric)->links.at(link);
  impl_->fabrics[fabric]->set_impairment(dp_endpoint(l.a), spec);
}

namespace {
const dp::IbSwitch* ib_switch(const dp::Fabric& f, const std::string& name) {
  if (f.link_layer() != LinkLayer::kInfiniBand) return nullptr;
  for (const auto& s : f.switches())
    if (s->name() == name) return static_cast<const dp::IbSwitch*>(s.get());
  return nullptr;
}
}  // namespace

PortQos Topology::port_qos(size_t fabric, const dp::Endpoint& end) const {
  const dp::Fabric& f = *impl_->fabrics.at(fabric);
  if (f.link_layer() != LinkLayer::kInfiniBand) throw std::invalid_argument("not an InfiniBand port");
  if (end.port == 0)
    for (const auto& h : f.hca_ports())
      if (h->name() == end.node) return h->info().qos;
  if (const dp::IbSwitch* sw = ib_switch(f, end.node)) return sw->qos(end.port);
  throw std::invalid_argument("no port " + end.str());
}

void Topology::set_port_qos(size_t fabric, const dp::Endpoint& end, const PortQos& q) {
  dp::Fabric& f = *impl_->fabrics.at(fabric);
  PortQos check = port_qos(fabric, end);  // the port's operational VLs decide what is valid
  if (!check.set_vlarb(q.vlarb_high, q.vlarb_low, q.vlarb_high_limit))
    throw std::invalid_argument("a VL arbitration entry names a VL that is not operational on " + end.str());
  for (uint8_t sl = 0; sl < kNumSls; ++sl)
    if (!check.set_sl2vl(sl, q.sl2vl[sl]))
      throw std::invalid_argument(fmt::format("SL {} -> VL {}: VL {} is not operational on {} (data VLs 0..{})", sl,
                                              q.sl2vl[sl], q.sl2vl[sl], end.str(), check.data_vls - 1));
  if (end.port == 0) {
    dp::HcaPort* h = f.find_hca_port(end.node);
    for (uint8_t sl = 0; sl < kNumSls; ++sl) h->set_sl2vl(sl, q.sl2vl[sl]);
    h->set_vlarb(q.vlarb_high, q.vlarb_low, q.vlarb_high_limit);
    return;
  }
  auto* sw = static_cast<dp::IbSwitch*>(f.find_switch(end.node));
  for (uint8_t sl = 0; sl < kNumSls; ++sl) sw->set_sl2vl(end.port, sl, q.sl2vl[sl]);
  sw->set_vlarb(end.port, q.vlarb_high, q.vlarb_low, q.vlarb_high_limit);
}

void Topology::set_capture(size_t fabric, const dp::Endpoint& end, dp::PortCapture* cap) {
  impl_->fabrics.at(fabric)->set_capture(end, cap);
}

void Topology::set_link_timing(size_t fabric, size_t link, uint64_t rate_bps, Nanos delay_ns) {
  const config::Link& l = impl_->cfg.at(fabric)->links.at(link);
  impl_->fabrics[fabric]->set_link_timing(dp_endpoint(l.a), rate_bps, delay_ns);
  // DCQCN starts and recovers flows to the line rate: it follows the link.
  for (const auto& v : impl_->vhcas)
    if (v->port->name() == l.a.node || v->port->name() == l.b.node) {
      engine::DcqcnConfig c = v->engine->config().dcqcn;
      c.line_rate_mbps = uint32_t(rate_bps / 1'000'000);
      v->engine->set_dcqcn(c);
    }
}

void Topology::set_port_ets(size_t fabric, const dp::Endpoint& end, const dp::EtsConfig& e) {
  impl_->fabrics.at(fabric)->port(end).set_ets(e);
}

std::optional<engine::DcqcnConfig> Topology::dcqcn(const std::string& hca) const {
  for (const auto& v : impl_->vhcas)
    if (v->port->name() == hca && v->port->link_layer() == LinkLayer::kEthernet) return v->engine->config().dcqcn;
  return std::nullopt;
}

void Topology::set_dcqcn(const std::string& hca, const engine::DcqcnConfig& c) {
  for (const auto& v : impl_->vhcas)
    if (v->port->name() == hca) v->engine->set_dcqcn(c);
}

bool Topology::link_up(size_t fabric, size_t link) const { return this->link(fabric, link).up(); }

const dp::LinkInfo& Topology::link(size_t fabric, size_t link) const {
  const config::Link& l = impl_->cfg.at(fabric)->links.at(link);
  return *impl_->fabrics[fabric]->find_link(dp_endpoint(l.a));
}

void Topology::reset_counters(size_t fabric, const dp::Endpoint& end) {
  dp::Fabric& f = *impl_->fabrics.at(fabric);
  if (dp::HcaPort* h = end.port == 0 ? f.find_hca_port(end.node) : nullptr) h->reset_counters(impl_->sched.now());
  else dp::reset(f.port(end).counters(), impl_->sched.now());
  f.reset_flow_counters(f.port(end));
}

void Topology::reset_switch_counters(size_t fabric, const std::string& sw) {
  dp::Fabric& f = *impl_->fabrics.at(fabric);
  if (f.link_layer() == LinkLayer::kEthernet)
    f.eth_switch(sw).reset_counters();
  else
    static_cast<dp::IbSwitch&>(*f.find_switch(sw)).reset_counters();
}

void Topology::on_port_activated(std::function<void(size_t)> fn) { impl_->activated = std::move(fn); }
void Topology::on_event(std::function<void(std::string, std::string)> fn) { impl_->event = std::move(fn); }

const sm::SubnetManager* Topology::subnet_manager(size_t fabric) const { return impl_->sms.at(fabric).get(); }
const dp::Fabric& Topology::fabric(size_t i) const { return *impl_->fabrics.at(i); }

void Topology::add_vhca(dp::Fabric& fabric, const config::Fabric& f, const config::Hca& h, uint16_t lid) {
  const config::Link* link = f.link_of(h.name);
  if (!link) throw std::runtime_error("vHCA " + h.name + " has no link");
  VhcaInfo info = describe_vhca({&f, &h, link}, lid);
  if (f.link_layer == config::LinkLayer::Ethernet) info.engine_config.dcqcn = dcqcn_config(f.eth_qos, h, link->rate_bps);
  dp::HcaPortConfig pc;
  static_cast<PortInfo&>(pc) = info.port;
  pc.rx_rate_bps = h.rx_rate_bps;
  auto v = std::make_unique<Vhca>();
  if (f.link_layer == config::LinkLayer::Infiniband) pc.state = PortState::kInit;  // until the SM's sweep
  if (f.link_layer == config::LinkLayer::Ethernet) {
    pc.port.eth = eth_qos(f.eth_qos);
    pc.default_tclass = f.eth_qos.roce_tclass;
    pc.vlan = h.vlan != 0;
    pc.vlan_id = h.vlan;
    pc.ipv4_prefix_len = h.prefix_len;
    pc.ipv4_gateway = h.gateway;
  }
  v->port = &fabric.add_hca_port(h.name, pc);
  v->engine = std::make_unique<engine::Hca>(info.engine_config, impl_->sched, *v->port);
  // Frames go from the port to the engine directly: the daemon wires, it
  // does not sit on the path.
  v->port->set_receiver(&engine::Hca::deliver, v->engine.get());
  v->port->set_tx_space(&engine::Hca::transmit_space, v->engine.get());
  impl_->vhcas.push_back(std::move(v));
  info_.push_back(std::move(info));
}

const VhcaInfo& Topology::vhca_by_name(const std::string& name) const {
  for (const auto& v : info_)
    if (v.name == name) return v;
  throw std::out_of_range("no vHCA " + name);
}

Topology::~Topology() {
  // The SMs go before the engines, whose teardown detaches QPs from groups.
  for (auto& v : impl_->vhcas) v->engine->on_mcast_membership(nullptr);
}

engine::Hca& Topology::engine(size_t i) { return *impl_->vhcas.at(i)->engine; }

const PortInfo& Topology::port_info(size_t i) const { return impl_->vhcas.at(i)->port->info(); }

bool Topology::poll() {
  bool any = false;
  for (auto& v : impl_->vhcas) any |= v->engine->poll(64);
  return any;
}

VhcaSnapshot Topology::snapshot(size_t i) const {
  const Vhca& v = *impl_->vhcas.at(i);
  return {v.engine->counts(), v.engine->counters(), v.port->snapshot(impl_->sched.now()),
          v.port->info(), {}};
}

std::vector<std::string> Topology::check_credit_deadlocks() {
  std::vector<std::string> out;
  for (size_t i = 0; i < impl_->fabrics.size(); ++i) {
    if (!impl_->deadlocks[i]) continue;
    for (const auto& circle : impl_->deadlocks[i]->check())
      out.push_back(fmt::format(
          "fabric {}: credit loop deadlock: {} waits for {} again. Every VL buffer on this circle is full of "
          "packets waiting for credit from the next one, so none of them can move; their QPs will time out. "
          "The {} routing lets traffic go round this circle; sm: {{routing: updn}} does not",
          impl_->fabrics[i]->name(), fmt::join(circle, " waits for "), circle.front(), impl_->routing[i]));
  }
  return out;
}

std::vector<std::string> Topology::check_pfc_storms() {
  std::vector<std::string> out;
  for (size_t i = 0; i < impl_->fabrics.size(); ++i) {
    if (!impl_->storms[i]) continue;
    const std::string& f = impl_->fabrics[i]->name();
    for (const dp::StormChange& c : impl_->storms[i]->check())
      out.push_back(c.started
                        ? fmt::format("fabric {}: PFC storm: {} priority {} was paused by {} without a break for longer "
                                      "than the PFC watchdog allows; it now ignores {}'s pauses and sends",
                                      f, c.port, c.priority, c.peer, c.peer)
                        : fmt::format("fabric {}: PFC storm over: {} priority {} heard no pause from {} for a "
                                      "watchdog interval and honours its pauses again",
                                      f, c.port, c.priority, c.peer));
  }
  return out;
}

bool Topology::set_pfc_storm(size_t i, uint8_t prios) {
  const Vhca& v = *impl_->vhcas.at(i);
  for (const auto& f : impl_->fabrics)
    if (dp::Pfc* pfc = f->pfc(v.port->port())) {
      pfc->set_storm(prios);
      return true;
    }
  return false;
}

MetricsSnapshot Topology::metrics() const {
  MetricsSnapshot m{};
  const Nanos now = impl_->sched.now();
  for (const auto& f : impl_->fabrics) {
    auto add = [&](const dp::Port& p) {
      if (const dp::Pfc* c = f->pfc(p)) {
        const dp::PfcSnapshot s = c->snapshot();
        for (unsigned prio = 0; prio < dp::kNumPriorities; ++prio)
          m.pfc.push_back({f->name(), p.name(), prio, s.prio[prio]});
      }
      if (const dp::EcnMarker* e = f->ecn(p))
        for (unsigned prio = 0; prio < dp::kNumPriorities; ++prio)
          m.ecn.push_back({f->name(), p.name(), prio, e->snapshot(prio)});
    };
    for (const auto& h : f->hca_ports()) add(h->port());
    for (const auto& sw : f->switches())
      for (unsigned p = 1; p <= sw->nports(); ++p) add(sw->port(p));
    if (f->link_layer() != LinkLayer::kEthernet) {
      for (const auto& sw : f->switches())
        m.ib_switches.push_back({f->name(), sw->name(), static_cast<const dp::IbSwitch&>(*sw).snapshot()});
      continue;
    }
    for (const auto& sw : f->switches()) {
      const auto& e = static_cast<const dp::EthSwitch&>(*sw);
      m.bridges.push_back({f->name(), e.name(), e.snapshot()});
      if (e.router()) m.routers.push_back({f->name(), e.name(), e.router()->snapshot()});
    }
  }
  for (size_t i = 0; i < impl_->fabrics.size(); ++i) {
    const dp::Fabric& f = *impl_->fabrics[i];
    if (!impl_->deadlocks[i]) continue;
    m.fabrics.push_back({f.name(), {impl_->deadlocks[i]->deadlocks()}});
    auto add = [&](const dp::Port& p) {
      if (const dp::IbCredits* c = f.credits(p)) {
        const dp::CreditSnapshot s = c->snapshot();
        for (unsigned vl = 0; vl < s.data_vls; ++vl) m.vl_credits.push_back({f.name(), p.name(), vl, gauges(s.vl[vl])});
      }
    };
    for (const auto& h : f.hca_ports()) add(h->port());
    for (const auto& sw : f.switches())
      for (unsigned p = 1; p <= sw->nports(); ++p) add(sw->port(p));
  }
  for (size_t i = 0; i < info_.size(); ++i) {
    const VhcaSnapshot v = snapshot(i);
    m.vhcas.push_back({info_[i].fabric, info_[i].name, v.port_info.link_layer, v.port, v.engine, {}, {}, {}});
  }
  for (const auto& f : impl_->fabrics) {
    for (const auto& sw : f->switches())
      for (unsigned p = 1; p <= sw->nports(); ++p)
        m.switch_ports.push_back({f->name(), sw->port(p).name(), f->link_layer(), sw->port(p).snapshot(now)});
    for (const auto& l : f->links()) {
      m.links.push_back({f->name(), l.a.str(), l.b.str(), l.link->a_to_b().snapshot()});
      m.links.push_back({f->name(), l.b.str(), l.a.str(), l.link->b_to_a().snapshot()});
    }
  }
  return m;
}

namespace {
// Per class, named as class_name() calls it; classes a link layer lacks are left out.
nlohmann::json classes_json(LinkLayer ll, const dp::PortSnapshot& p) {
  nlohmann::json out = nlohmann::json::object();
  for (unsigned c = 0; c < dp::kNumClasses; ++c)
    if (const char* name = dp::class_name(ll, c)) {
      nlohmann::json one = nlohmann::json::object();
      put_counters(one, dp::kClassCounters, &p.classes[c]);
      out[name] = std::move(one);
    }
  return out;
}
}  // namespace

nlohmann::json hca_json(const VhcaInfo& info, const VhcaSnapshot& snap) {
  nlohmann::json gids = nlohmann::json::array();
  for (const auto& g : snap.port_info.gids) gids.push_back(addr::format_gid_short(g));
  const auto& o = snap.objects;
  nlohmann::json counters = nlohmann::json::object();
  put_counters(counters, dp::kPortCounters, &snap.port.port);
  put_counters(counters, dp::kHcaPortCounters, &snap.port);
  put_counters(counters, dp::kRxErrorCounters, &snap.port);
  put_counters(counters, engine::kEngineCounters, &snap.engine);
  put_counters(counters, kEventSinkCounters, &snap.events);
  nlohmann::json out = {
      {"name", info.name},
      {"fabric", info.fabric},
      {"link_layer", config::to_string(info.link_layer)},
      {"lid", snap.port_info.lid},
      {"gids", gids},
      {"port_state", runtime::to_string(snap.port_info.state)},
      {"active_mtu", snap.port_info.mtu},
      {"objects",
       {{"clients", o.clients}, {"pds", o.pds}, {"mrs", o.mrs}, {"cqs", o.cqs}, {"qps", o.qps},
        {"srqs", o.srqs}, {"ahs", o.ahs}, {"mws", o.mws}}},
      {"counters", std::move(counters)},
      {"classes", classes_json(snap.port_info.link_layer, snap.port.port)},
  };
  // What ibv_query_device reports: the ceilings the objects above count against.
  const engine::DeviceLimits& l = info.engine_config.limits;
  out["limits"] = {{"pds", l.max_pd}, {"mrs", l.max_mr}, {"mws", l.max_mw}, {"cqs", l.max_cq}, {"qps", l.max_qp},
                   {"srqs", l.max_srq}, {"ahs", l.max_ah}, {"qp_wr", l.max_qp_wr}, {"cqe", l.max_cqe},
                   {"srq_wr", l.max_srq_wr}, {"mr_size", l.max_mr_size}, {"msg_size", l.max_msg_sz}};
  out["node_guid"] = addr::format_guid_hex(info.engine_config.node_guid);
  out["fw_ver"] = info.engine_config.fw_ver;
  // VLs exist on IB links only; a RoCE port's classes are 802.1Q priorities.
  if (snap.port_info.link_layer == LinkLayer::kInfiniBand) out["qos"] = port_qos_json(snap.port_info.qos);
  return out;
}

}  // namespace vf
