// `fabricctl counters [NAME]` and `counters reset [NAME]`: the PMA counters
// of the ports a name selects (port_select.hpp) with, per class, the queue
// and wait counters, and for a vHCA its port's and engine's own; a reset
// clears them the way perfquery -R does. Names are resolved on the control
// thread; the lcore copies or clears the numbers.
#include <optional>

#include <nlohmann/json.hpp>
#include <set>

#include "daemon/commands/control_commands.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/telemetry/counter_format.hpp"
#include "daemon/service/daemon_state.hpp"
#include "daemon/vhca/event_sink.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/telemetry/pfc_json.hpp"
#include "daemon/commands/port_select.hpp"
#include "daemon/sm/subnet_manager.hpp"
#include "daemon/fabric/topology.hpp"
#include "dataplane/fabric/fabric.hpp"

namespace vf {
namespace {
using control::json;

std::string name_arg(const json& args) {
  return args.contains("name") && args["name"].is_string() ? args["name"].get<std::string>() : std::string();
}

dp::Endpoint endpoint(const PortRef& r) { return {r.node, r.port}; }

std::optional<size_t> vhca_index(const Topology& t, const std::string& name) {
  for (size_t i = 0; i < t.vhcas().size(); ++i)
    if (t.vhcas()[i].name == name) return i;
  return std::nullopt;
}

struct PortCounterView {
  PortRef ref;
  LinkLayer ll;
  dp::PortSnapshot port;
  std::optional<VhcaSnapshot> vhca;
  std::optional<dp::PfcSnapshot> pfc;  // Ethernet
  std::optional<std::array<dp::EcnPrioritySnapshot, 8>> ecn;  // an ECN-marking switch port
};

PortCounterView copy_port(DaemonState& d, const PortRef& r) {
  Topology& t = d.topology();
  const dp::Fabric& f = t.fabric(r.fabric);
  PortCounterView v{r, f.link_layer(), {}, std::nullopt, std::nullopt, std::nullopt};
  const dp::Port& port = f.port(endpoint(r));
  if (const dp::Pfc* pfc = f.pfc(port)) v.pfc = pfc->snapshot();
  if (const dp::EcnMarker* e = f.ecn(port)) {
    v.ecn.emplace();
    for (unsigned p = 0; p < 8; ++p) (*v.ecn)[p] = e->snapshot(p);
  }
  const auto i = r.hca ? vhca_index(t, r.node) : std::nullopt;
  if (i) {
    v.vhca = t.snapshot(*i);
    v.vhca->events = d.events(*i).stats();
    v.port = v.vhca->port.port;
  } else {
    v.port = f.port(endpoint(r)).snapshot(d.lcore().scheduler().now());
  }
  return v;
}

json port_json(const config::Config& cfg, const PortCounterView& v) {
  json counters = json::object(), classes = json::array();
  put_counters(counters, dp::kPortCounters, &v.port);
  for (unsigned c = 0; c < dp::kNumClasses; ++c) {
    const char* name = dp::class_name(v.ll, c);
    if (!name) continue;
    json one = {{"class", name}};
    put_counters(one, dp::kClassCounters, &v.port.classes[c]);
    classes.push_back(std::move(one));
  }
  json out = {{"port", v.ref.text()},
              {"fabric", cfg.fabrics[v.ref.fabric].name},
              {"kind", v.ref.hca ? "hca" : "switch"},
              {"counters", std::move(counters)},
              {"classes", std::move(classes)}};
  if (v.pfc) out["pfc"] = pfc_counters_json(*v.pfc);
  if (v.ecn) {
    json ecn = json::object();
    for (unsigned p = 0; p < 8; ++p)
      for (const CounterDef& d : dp::kEcnPriorityCounters)
        ecn[priority_counter_name(d.name, p)] = read_counter(d, &(*v.ecn)[p]);
    out["ecn"] = std::move(ecn);
  }
  if (v.vhca) {
    json hca = json::object(), hw = json::object();
    put_counters(hca, dp::kHcaPortCounters, &v.vhca->port);
    put_counters(hca, dp::kRxErrorCounters, &v.vhca->port);
    put_counters(hw, engine::kEngineCounters, &v.vhca->engine);
    put_counters(hw, kEventSinkCounters, &v.vhca->events);
    out["hca_port"] = std::move(hca);
    out["hw_counters"] = std::move(hw);
  }
  return out;
}

void counters(DaemonState& d, const json& args, control::Reply reply) {
  auto sel = select_ports(d.config(), name_arg(args));
  if (const auto* e = std::get_if<PortSelectError>(&sel)) return reply.error(e->message, e->hint);
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, refs = std::get<std::vector<PortRef>>(std::move(sel)), reply] {
    std::vector<PortCounterView> views;
    views.reserve(refs.size());
    for (const PortRef& r : refs) views.push_back(copy_port(*dp, r));
    const Nanos now = dp->lcore().scheduler().now();
    reply.ok_with([dp, views = std::move(views), now] {
      json ports = json::array();
      for (const PortCounterView& v : views) ports.push_back(port_json(dp->config(), v));
      // The dataplane clock, so a client turns two samples into rates in
      // emulated time, the time the link rates are in.
      return json{{"clock_ns", now}, {"ports", std::move(ports)}};
    });
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

void counters_reset(DaemonState& d, const json& args, control::Reply reply) {
  auto sel = select_ports(d.config(), name_arg(args));
  if (const auto* e = std::get_if<PortSelectError>(&sel)) return reply.error(e->message, e->hint);
  DaemonState* dp = &d;
  const bool whole = name_arg(args).find('/') == std::string::npos;
  const bool queued = d.lcore().post([dp, whole, refs = std::get<std::vector<PortRef>>(std::move(sel)), reply] {
    json ports = json::array();
    std::set<std::pair<size_t, std::string>> switches;
    for (const PortRef& r : refs) {
      dp->topology().reset_counters(r.fabric, endpoint(r));
      ports.push_back(r.text());
      if (r.port != 0) switches.emplace(r.fabric, r.node);
    }
    // A switch's own counters (bridge, router) go with a reset of the whole
    // switch (or fabric, or everything), not of one port.
    if (whole)
      for (const auto& [fabric, sw] : switches) dp->topology().reset_switch_counters(fabric, sw);
    dp->fabric_event("counters", "counters cleared on " + std::to_string(ports.size()) + " port" +
                                     (ports.size() == 1 ? " (" + ports[0].get<std::string>() + ")" : "s"));
    reply.ok({{"reset", std::move(ports)}});
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

}  // namespace

void register_counter_commands(control::ControlServer& server, DaemonState& daemon) {
  server.add_async_command(
      "counters", [&daemon](const json& args, control::Reply reply) { counters(daemon, args, std::move(reply)); },
      "{name?}: the counters of a vHCA, switch, switch port or fabric (all ports without a name), with the "
      "dataplane clock",
      control::Access::ReadOnly);
  server.add_async_command(
      "counters.reset",
      [&daemon](const json& args, control::Reply reply) { counters_reset(daemon, args, std::move(reply)); },
      "{name?}: clear the PMA counters of those ports (perfquery -R); engine hw_counters are kept",
      control::Access::Mutating);
}

}  // namespace vf
