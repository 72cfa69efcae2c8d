#include "daemon/topology.hpp"

#include <stdexcept>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "daemon/counter_format.hpp"
#include "daemon/credit_loops.hpp"
#include "daemon/lid_assign.hpp"
#include "daemon/link_attrs.hpp"
#include "daemon/port_qos_json.hpp"
#include "daemon/routing.hpp"
#include "daemon/sm_qos.hpp"
#include "daemon/sysfs_spec.hpp"
#include "dataplane/fabric/credit_deadlock.hpp"
#include "dataplane/fabric/fabric.hpp"

namespace vf {
namespace {

// One vHCA: its engine and the port (owned by its fabric) it transmits through.
struct Vhca {
  dp::HcaPort* port;
  std::unique_ptr<engine::Hca> engine;
};

dp::Endpoint to_dp(const config::Endpoint& ep) { return {ep.node, ep.is_switch ? ep.port : 0}; }

}  // namespace

struct Topology::Impl {
  Scheduler& sched;
  // Fabrics outlive the engines: an engine's last act may be to free mbufs
  // it had queued on its port.
  std::vector<std::unique_ptr<dp::Fabric>> fabrics;
  std::vector<std::unique_ptr<Vhca>> vhcas;  // same order as Topology::info_; stable addresses
  // Per fabric (null for Ethernet); after `fabrics`, so destroyed first.
  std::vector<std::unique_ptr<dp::CreditDeadlockDetector>> deadlocks;
  std::vector<std::string> routing;  // per fabric: the routing's name, for messages
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
    const auto lids = sm::assign_lids(f);
    const PortQos qos = sm::programmed_qos(f.qos);  // IB: what the SM programs into every port
    for (const auto& s : f.switches) {
      dp::SwitchConfig sc;
      sc.nports = s.ports;
      sc.latency_ns = s.latency_ns;
      sc.port.vl_buffer_bytes = s.vl_buffer_bytes;
      sc.data_vls = qos.data_vls;
      dp::Switch& sw = fabric.add_switch(s.name, sc);
      if (f.link_layer != config::LinkLayer::Infiniband) continue;
      auto& ib = static_cast<dp::IbSwitch&>(sw);
      for (unsigned port = 1; port <= s.ports; ++port) {
        for (uint8_t sl = 0; sl < kNumSls; ++sl) ib.set_sl2vl(port, sl, qos.sl2vl[sl]);
        ib.set_vlarb(port, qos.vlarb_high, qos.vlarb_low, qos.vlarb_high_limit);
      }
    }
    for (const auto& h : f.hcas) add_vhca(fabric, f, h, lids.lid(h.name), lids.lmc);
    for (const auto& l : f.links)
      fabric.connect(to_dp(l.a), to_dp(l.b), {l.rate_bps, l.delay_ns, l.mtu}, l.vl_buffer_bytes);
    // What the subnet manager (IB) or the operator's static FDB (Ethernet)
    // would program: every switch knows its port towards every HCA.
    // A routing whose channel dependencies form a cycle can deadlock under
    // load: the lab should know before it happens, and why.
    const Routes routes = compute_routes(f);
    if (const std::string w = credit_loop_warning(f, routes); !w.empty()) spdlog::warn("{}", w);
    for (const auto& [sw, table] : routes)
      for (const auto& [hca, port] : table) {
        if (f.link_layer == config::LinkLayer::Infiniband)
          fabric.set_lft(sw, lids.lid(hca), uint8_t(port));
        else
          fabric.add_fdb(sw, f.find_hca(hca)->mac, port);
      }
    const bool ib = f.link_layer == config::LinkLayer::Infiniband;
    impl_->deadlocks.push_back(ib ? std::make_unique<dp::CreditDeadlockDetector>(fabric) : nullptr);
    impl_->routing.push_back(ib ? config::to_string(f.sm.routing) : "");
    // RoCE has no ARP here: each port knows every peer GID's MAC statically.
    if (f.link_layer == config::LinkLayer::Ethernet)
      for (const auto& a : f.hcas)
        for (const auto& b : f.hcas)
          if (a.name != b.name)
            for (const auto& g : vhca_by_name(b.name).port.gids) fabric.set_neighbour(a.name, g, b.mac);
  }
}

void Topology::add_vhca(dp::Fabric& fabric, const config::Fabric& f, const config::Hca& h, uint16_t lid,
                        uint8_t lmc) {
  const config::Link* link = f.link_of(h.name);
  if (!link) throw std::runtime_error("vHCA " + h.name + " has no link");
  VhcaInfo info = describe_vhca({&f, &h, link}, lid);
  dp::HcaPortConfig pc;
  static_cast<PortInfo&>(pc) = info.port;
  auto v = std::make_unique<Vhca>();
  v->port = &fabric.add_hca_port(h.name, pc);
  if (f.link_layer == config::LinkLayer::Infiniband) {
    const PortQos& q = info.port.qos;
    for (uint8_t sl = 0; sl < kNumSls; ++sl) v->port->set_sl2vl(sl, q.sl2vl[sl]);
    v->port->set_vlarb(q.vlarb_high, q.vlarb_low, q.vlarb_high_limit);
  }
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

Topology::~Topology() = default;

engine::Hca& Topology::engine(size_t i) { return *impl_->vhcas.at(i)->engine; }

bool Topology::port_up(size_t i) const { return impl_->vhcas.at(i)->port->passes_data(); }
void Topology::set_port_state(size_t i, PortState state, PhysState phys) {
  impl_->vhcas.at(i)->port->set_state(state, phys);
}

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

MetricsSnapshot Topology::metrics() const {
  MetricsSnapshot m{};
  const Nanos now = impl_->sched.now();
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
    m.vhcas.push_back({info_[i].fabric, info_[i].name, v.port_info.link_layer, v.port, v.engine, {}});
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
      {"port_state", snap.port_info.passes_data() ? "ACTIVE" : "DOWN"},
      {"active_mtu", snap.port_info.mtu},
      {"objects",
       {{"clients", o.clients}, {"pds", o.pds}, {"mrs", o.mrs}, {"cqs", o.cqs}, {"qps", o.qps},
        {"srqs", o.srqs}, {"ahs", o.ahs}}},
      {"counters", std::move(counters)},
      {"classes", classes_json(snap.port_info.link_layer, snap.port.port)},
  };
  // VLs exist on IB links only; a RoCE port's classes are 802.1Q priorities.
  if (snap.port_info.link_layer == LinkLayer::kInfiniBand) out["qos"] = port_qos_json(snap.port_info.qos);
  return out;
}

}  // namespace vf
