// The fabric's control commands: links down/up (`fabricctl link set`), a
// switch's forwarding table as the subnet manager programmed it
// (`fabricctl routes`) and one port's state, queues and credits (`fabricctl
// port show`). Requests are resolved against the config on the
// control thread, so a bad one is refused before anything reaches the lcore.
#include <optional>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "daemon/config/addr.hpp"
#include "daemon/commands/control_commands.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/telemetry/counter_format.hpp"
#include "daemon/service/daemon_state.hpp"
#include "daemon/commands/fdb_commands.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/commands/link_lookup.hpp"
#include "daemon/mad/sa_mcast.hpp"
#include "daemon/telemetry/pfc_json.hpp"
#include "daemon/sm/subnet_manager.hpp"
#include "daemon/runtime/sysfs_spec.hpp"
#include "daemon/fabric/topology.hpp"
#include "daemon/config/units.hpp"
#include "dataplane/fabric/fabric.hpp"

namespace vf {
namespace {
using control::json;

std::string arg(const json& args, const char* k) {
  return args.contains(k) && args[k].is_string() ? args[k].get<std::string>() : std::string();
}

// The SA's multicast groups: MGID, MLID, Q_Key, P_Key and the joined
// vHCAs (by name where the port GID is a vHCA's) with their JoinState.
json sa_groups_json(const config::Fabric& f, const std::vector<mad::McGroup>& groups) {
  json out = json::array();
  for (const mad::McGroup& g : groups) {
    json members = json::array();
    for (const auto& [gid, state] : g.members) {
      const uint64_t guid = mad::get_be(gid.data() + 8, 8);
      std::string who = fmt::format("0x{:016x}", guid);
      for (const config::Hca& h : f.hcas)
        if (h.node_guid == guid) who = h.name;
      members.push_back({{"hca", who}, {"join_state", state}});
    }
    out.push_back({{"mgid", addr::format_gid_short(g.mgid)},
                   {"mlid", g.mlid},
                   {"qkey", fmt::format("0x{:08x}", g.qkey)},
                   {"pkey", fmt::format("0x{:04x}", g.pkey)},
                   {"members", std::move(members)}});
  }
  return out;
}

// The subnet manager of every IB fabric: where it runs, how it routes, and
// its last sweep (fabricctl sm show; sminfo's and opensm's status, in short).
void sm_show(DaemonState& d, control::Reply reply) {
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, reply] {
    struct Row {
      size_t fabric;
      sm::SweepReport last;
      std::vector<std::string> roots;
      uint16_t sm_lid;
      std::vector<mad::McGroup> groups;  // the SA's
    };
    std::vector<Row> rows;
    for (size_t i = 0; i < dp->config().fabrics.size(); ++i)
      if (sm::SubnetManager* m = dp->topology().subnet_manager(i))
        rows.push_back({i, m->last(), m->updn_roots(), m->lids().sm_lid, m->sa_groups().groups()});
    reply.ok_with([dp, rows = std::move(rows)] {
      json out = json::array();
      for (const Row& r : rows) {
        const config::Fabric& f = dp->config().fabrics[r.fabric];
        json one = {{"fabric", f.name},
                    {"state", "MASTER"},
                    {"sm_lid", r.sm_lid},
                    {"sm_node", !f.switches.empty() ? f.switches.front().name
                                : !f.hcas.empty()   ? f.hcas.front().name
                                                    : std::string()},
                    {"routing", config::to_string(f.sm.routing)},
                    {"sweep_delay_ns", Topology::kSweepDelay},
                    {"sweeps", r.last.number},
                    {"last_sweep",
                     {{"at_ns", r.last.at},
                      {"links_up", r.last.links_up},
                      {"links", r.last.links},
                      {"lft_changes", r.last.lft_changes},
                      {"unrouted", r.last.unrouted},
                      {"activated", r.last.activated}}}};
        if (f.sm.routing == config::Routing::UpDown) one["roots"] = r.roots;
        one["mcast_groups"] = sa_groups_json(f, r.groups);
        out.push_back(std::move(one));
      }
      return out;
    });
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

// A probability in the request: absent (nullopt), or a number 0..1.
std::optional<double> probability(const json& args, const char* key, std::string& error) {
  if (!args.contains(key)) return std::nullopt;
  const json& v = args[key];
  if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1)) {
    error = std::string(key) + " must be a probability from 0 to 1";
    return std::nullopt;
  }
  return v.get<double>();
}

// A rate ("10G", "400Mbps") or delay ("5us") argument: absent (nullopt) or
// parsed and within what the link can take.
std::optional<uint64_t> rate_arg(const json& args, const config::Link& l, std::string& error) {
  if (!args.contains("rate")) return std::nullopt;
  const auto bps = args["rate"].is_string() ? units::parse_rate_bps(args["rate"].get<std::string>()) : std::nullopt;
  const uint64_t line = config::line_rate_bps(l);
  if (!bps || *bps < config::kMinRateBps || *bps > line)
    error = "rate must be a bit rate from 1Mbps to the " + units::format_rate(line) + " this link's cable carries";
  return bps;
}

std::optional<uint64_t> delay_arg(const json& args, std::string& error) {
  if (!args.contains("delay")) return std::nullopt;
  const auto ns = args["delay"].is_string() ? units::parse_delay_ns(args["delay"].get<std::string>(), config::kMaxDelayNs)
                                            : std::nullopt;
  if (!ns) error = "delay must be a whole number of nanoseconds with a unit (ns, us, ms), up to 1s";
  return ns;
}

// {a, b?, state?: down|up, loss?, corrupt?, seed?, rate?, delay?}: both ends of the link go
// down (PhysState Polling at a vHCA end, as with a pulled cable) or train
// again, and on IB the subnet manager sweeps and routes around it; loss and
// corrupt (probabilities, netem-style, reproducible from the seed) impair
// both directions, 0 and 0 clearing them; rate and delay apply to both
// directions from their next frame.
void link_set(DaemonState& d, const json& args, control::Reply reply) {
  const std::string a = arg(args, "a"), b = arg(args, "b"), state = arg(args, "state");
  const char* hint = "e.g. fabricctl link set leaf0/3 state down, or ... loss 1% corrupt 0.1% seed 7";
  if (args.contains("state") && state != "down" && state != "up")
    return reply.error("link state must be 'down' or 'up'", hint);
  std::string bad;
  const auto loss = probability(args, "loss", bad);
  const auto corrupt = probability(args, "corrupt", bad);
  const auto duplicate = probability(args, "duplicate", bad);
  const auto reorder = probability(args, "reorder", bad);
  if (!bad.empty()) return reply.error(bad, hint);
  if (args.contains("seed") && !args["seed"].is_number_unsigned())
    return reply.error("seed must be a whole number", hint);
  const bool impair = loss || corrupt || duplicate || reorder || args.contains("seed");
  const bool timing = args.contains("rate") || args.contains("delay");
  if (state.empty() && !impair && !timing)
    return reply.error("nothing to set: give state, rate, delay, loss, corrupt, duplicate, reorder or seed", hint);
  const auto found = find_link(d.config(), a, b);
  if (const auto* e = std::get_if<LinkLookupError>(&found)) return reply.error(e->message, e->hint);
  const LinkRef ref = std::get<LinkRef>(found);
  const config::Fabric& f = d.config().fabrics[ref.fabric];
  const config::Link& l = f.links[ref.link];
  const auto rate = rate_arg(args, l, bad);
  const auto delay = delay_arg(args, bad);
  if (!bad.empty()) return reply.error(bad, "e.g. fabricctl link set vib0 rate 10G delay 5us");
  dp::ImpairmentSpec spec{loss.value_or(0), corrupt.value_or(0), duplicate.value_or(0), reorder.value_or(0),
                          args.value("seed", uint64_t(1))};
  json result = {{"fabric", f.name}, {"a", l.a.text()}, {"b", l.b.text()}};
  if (impair)
    result["impairment"] = {{"loss", spec.loss},           {"corrupt", spec.corrupt}, {"duplicate", spec.duplicate},
                            {"reorder", spec.reorder},     {"seed", spec.seed}};
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, ref, state, impair, spec, timing, rate, delay, result, reply]() mutable {
    Topology& topo = dp->topology();
    const std::string name = "fabric " + result["fabric"].get<std::string>() + ": link " +
                             result["a"].get<std::string>() + " - " + result["b"].get<std::string>();
    if (impair) {
      topo.set_link_impairment(ref.fabric, ref.link, spec);
      dp->fabric_event("link", spec.any() ? fmt::format("{}: loss {}% corrupt {}% duplicate {}% reorder {}% (seed {})",
                                                         name, spec.loss * 100, spec.corrupt * 100,
                                                         spec.duplicate * 100, spec.reorder * 100, spec.seed)
                                          : name + ": clean");
    }
    if (timing) {
      const dp::LinkParams now = topo.link(ref.fabric, ref.link).link->params();
      const uint64_t r = rate.value_or(now.rate_bps);
      const Nanos dl = delay.value_or(now.delay_ns);
      topo.set_link_timing(ref.fabric, ref.link, r, dl);
      result["rate_bps"] = r;
      result["delay_ns"] = dl;
      dp->fabric_event("link", fmt::format("{}: rate {}, delay {}", name, units::format_rate(r), units::format_delay(dl)));
    }
    if (!state.empty()) {
      const bool up = state == "up";
      result["state"] = state;
      result["changed"] = topo.link_up(ref.fabric, ref.link) != up;
      result["subnet_manager_sweeps"] = topo.subnet_manager(ref.fabric) != nullptr;
      if (result["changed"] == true) dp->fabric_event("link", name + (up ? " UP" : " DOWN"));
      for (size_t end : topo.set_link_up(ref.fabric, ref.link, up, PhysState::kPolling))
        dp->port_changed(end, nullptr);
    }
    reply.ok(std::move(result));
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

struct LftEntry {
  uint16_t lid;
  std::string hca;
  uint8_t port;
};

// One multicast group as a switch forwards it (ibroute -M).
struct MftEntry {
  uint16_t mlid;
  std::vector<std::string> members;  // the vHCAs whose QPs are attached
  std::vector<unsigned> ports;       // the switch's MFT port mask
};

json mft_json(const std::vector<MftEntry>& mft) {
  json out = json::array();
  for (const MftEntry& e : mft) out.push_back({{"mlid", e.mlid}, {"members", e.members}, {"ports", e.ports}});
  return out;
}

// {switch}: an IB switch's LFT entries for every vHCA and switch LID and its MFT
// entries for every multicast group, read from the dataplane, and the SM's
// last sweep.
void routes(DaemonState& d, const json& args, control::Reply reply) {
  const std::string name = arg(args, "switch");
  const auto& fabrics = d.config().fabrics;
  size_t fi = 0;
  while (fi < fabrics.size() && !fabrics[fi].find_switch(name)) ++fi;
  if (fi == fabrics.size())
    return reply.error("no switch named '" + name + "'", "the config's switches: sections name them");
  if (fabrics[fi].link_layer != config::LinkLayer::Infiniband) return ethernet_routes(d, fi, name, std::move(reply));
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, fi, name, reply] {
    const sm::SubnetManager& sm = *dp->topology().subnet_manager(fi);
    const dp::Fabric& fabric = dp->topology().fabric(fi);
    const dp::IbSwitch* sw = nullptr;
    for (const auto& s : fabric.switches())
      if (s->name() == name) sw = static_cast<const dp::IbSwitch*>(s.get());
    std::vector<LftEntry> lft;
    for (const auto& [node, lid] : sm.lids().lids) lft.push_back({lid, node, sw->lft(lid)});
    std::vector<MftEntry> mft;
    for (const auto& [mlid, members] : sm.mcast_groups()) {
      MftEntry e{mlid, {members.begin(), members.end()}, {}};
      if (const dp::IbSwitch::PortMask* m = sw->mft(mlid))
        for (unsigned p = 1; p < m->size(); ++p)
          if (m->test(p)) e.ports.push_back(p);
      mft.push_back(std::move(e));
    }
    const sm::SweepReport r = sm.last();
    reply.ok_with([dp, fi, name, lft = std::move(lft), mft = std::move(mft), r] {
      json entries = json::array();
      for (const LftEntry& e : lft)
        entries.push_back({{"lid", e.lid},
                           {"destination", e.hca},
                           {"port", e.port == dp::IbSwitch::kNoRoute ? json(nullptr) : json(e.port)}});
      const auto& f = dp->config().fabrics[fi];
      return json{{"switch", name},
                  {"fabric", f.name},
                  {"routing", config::to_string(f.sm.routing)},
                  {"sweep",
                   {{"number", r.number},
                    {"links_up", r.links_up},
                    {"links", r.links},
                    {"lft_changes", r.lft_changes},
                    {"mft_changes", r.mft_changes},
                    {"unrouted", r.unrouted}}},
                  {"lft", std::move(entries)},
                  {"mft", mft_json(mft)}};
    });
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

// What the lcore copies out of one port for port.show.
struct PortView {
  std::string fabric, port, peer;
  LinkLayer ll = LinkLayer::kInfiniBand;
  bool linked = false, up = false;
  dp::LinkParams link{};
  std::optional<PortInfo> hca;  // a vHCA's port record
  dp::PortSnapshot counters{};
  std::optional<dp::CreditSnapshot> credits;
  std::optional<dp::PfcSnapshot> pfc;
};

PortView view_port(const dp::Fabric& f, const dp::Endpoint& e, Nanos now) {
  const dp::Port& p = f.port(e);
  PortView v;
  v.fabric = f.name();
  v.port = e.str();
  v.ll = f.link_layer();
  v.linked = p.connected();
  v.up = p.link_up();
  v.link = p.link_params();
  if (const dp::LinkInfo* l = f.find_link(e)) v.peer = (l->a == e ? l->b : l->a).str();
  if (e.port == 0)
    for (const auto& h : f.hca_ports())
      if (h->name() == e.node) v.hca = h->info();
  v.counters = p.snapshot(now);
  if (const dp::IbCredits* c = f.credits(p)) v.credits = c->snapshot();
  if (const dp::Pfc* c = f.pfc(p)) v.pfc = c->snapshot();
  return v;
}

json port_view_json(const PortView& v) {
  json counters = json::object();
  put_counters(counters, dp::kPortCounters, &v.counters);
  json classes = json::array();  // in class order (an object would sort vl15 before vl2)
  for (unsigned c = 0; c < dp::kNumClasses; ++c) {
    const char* name = dp::class_name(v.ll, c);
    // IB: the link's operational data VLs, VL15 and link control.
    if (!name || (v.credits && c < dp::kNumDataClasses && c >= v.credits->data_vls)) continue;
    json one = {{"class", name}};
    put_counters(one, dp::kClassCounters, &v.counters.classes[c]);
    // A dead link's credit state means nothing until it trains again.
    if (v.credits && v.up && c < v.credits->data_vls) {
      const dp::VlCreditSnapshot& k = v.credits->vl[c];
      const dp::VlCreditGauges g = dp::gauges(k);
      json credit = json::object();
      put_counters(credit, dp::kVlCreditCounters, &g);
      credit["fctbs"] = k.fctbs;
      credit["fccl"] = k.fccl;
      credit["abr"] = k.abr;
      credit["fccl_known"] = k.fccl_known;
      one["credits"] = std::move(credit);
    }
    classes.push_back(std::move(one));
  }
  json out = {{"fabric", v.fabric},
              {"port", v.port},
              {"link_layer", v.ll == LinkLayer::kInfiniBand ? "infiniband" : "ethernet"},
              {"linked", v.linked},
              {"link_up", v.up},
              {"peer", v.peer.empty() ? json(nullptr) : json(v.peer)},
              {"link", {{"rate_bps", v.link.rate_bps}, {"delay_ns", v.link.delay_ns}, {"mtu", v.link.mtu}}},
              {"counters", std::move(counters)},
              {"classes", std::move(classes)}};
  // A vHCA's logical state is its PortInfo's; a switch port is up or down with its link.
  out["state"] = v.hca ? runtime::to_string(v.hca->state) : (v.linked && v.up ? "ACTIVE" : "DOWN");
  if (v.hca) out["phys_state"] = runtime::to_string(v.hca->phys_state);
  if (v.pfc) out["pfc"] = pfc_state_json(*v.pfc);
  if (v.credits && v.up)
    out["flow_control"] = {{"init", v.credits->init},
                           {"fcp_sent", v.credits->fcp_sent},
                           {"fcp_rcvd", v.credits->fcp_rcvd},
                           {"fcp_errors", v.credits->fcp_errors},
                           {"fcp_unsent", v.credits->fcp_unsent},
                           {"vl15_used_bytes", v.credits->vl15_used},
                           {"vl15_buffer_bytes", v.credits->vl15_buffer}};
  return out;
}

// {port}: one vHCA port ("vib0") or switch port ("leaf0/3"): state, link,
// PMA counters, and per class the queue, PortVLXmitWait and (IB) credits.
void port_show(DaemonState& d, const json& args, control::Reply reply) {
  const std::string name = arg(args, "port");
  const auto e = dp::Endpoint::parse(name);
  const auto& fabrics = d.config().fabrics;
  size_t fi = 0;
  if (e)
    while (fi < fabrics.size() && !fabrics[fi].find_hca(e->node) && !fabrics[fi].find_switch(e->node)) ++fi;
  if (!e || fi == fabrics.size())
    return reply.error("no port named '" + name + "'", "name a vHCA (vib0) or a switch port (leaf0/3)");
  const config::Switch* sw = fabrics[fi].find_switch(e->node);
  if (sw && (e->port == 0 || e->port > sw->ports))
    return reply.error("switch " + sw->name + " has ports 1.." + std::to_string(sw->ports),
                       "e.g. fabricctl port show " + sw->name + "/1");
  if (!sw && e->port != 0)
    return reply.error("a vHCA has one port: name it without a number", "e.g. fabricctl port show " + e->node);
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, fi, ep = *e, reply] {
    PortView v = view_port(dp->topology().fabric(fi), ep, dp->lcore().scheduler().now());
    reply.ok_with([v = std::move(v)] { return port_view_json(v); });
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

}  // namespace

void register_fabric_commands(control::ControlServer& server, DaemonState& daemon) {
  using control::Access;
  server.add_async_command(
      "link.set", [&daemon](const json& args, control::Reply reply) { link_set(daemon, args, std::move(reply)); },
      "{a, b?, state?: down|up, rate?, delay?, loss?, corrupt?, duplicate?, reorder?, seed?}: take a link down "
      "or up, change its "
      "rate or delay, or impair it (a: leaf0/3 or vib0; or a and b: its two nodes)",
      Access::Mutating);
  server.add_async_command(
      "routes", [&daemon](const json& args, control::Reply reply) { routes(daemon, args, std::move(reply)); },
      "{switch}: an IB switch's LFT for every vHCA LID and the subnet manager's last sweep", Access::ReadOnly);
  server.add_async_command(
      "sm.show", [&daemon](const json&, control::Reply reply) { sm_show(daemon, std::move(reply)); },
      "every IB fabric's subnet manager: SM LID, routing, roots, sweeps and the last one", Access::ReadOnly);
  server.add_async_command(
      "port.show", [&daemon](const json& args, control::Reply reply) { port_show(daemon, args, std::move(reply)); },
      "{port}: a vHCA or switch port: state, link, counters, per class queue, wait and credits", Access::ReadOnly);
}

}  // namespace vf
