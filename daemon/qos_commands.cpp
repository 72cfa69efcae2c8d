// `fabricctl qos show|set PORT`: an IB port's VL record -- operational VLs,
// SL→VL, VL arbitration -- as the subnet manager programmed it, and changing
// it the way an operator's SMP would (opensm's qos-policy words: sl2vl,
// vlarb_high, vlarb_low, high_limit). As on a real subnet the SM programs a
// port from the config again when a sweep activates it (a link that went
// down and up). On an Ethernet port, `qos show` is mlnx_qos's view: trust,
// the DSCP map, the PFC enable vector and pause state, each lossless
// group's thresholds and the 802.1Qbb headroom model behind them. Ethernet
// QoS is set in the config (qos:); `qos set` on an Ethernet port says so.
#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "daemon/control_commands.hpp"
#include "daemon/control_server.hpp"
#include "daemon/daemon_state.hpp"
#include "daemon/lcore.hpp"
#include "core/pfc_headroom.hpp"
#include "daemon/pfc_json.hpp"
#include "daemon/port_qos_json.hpp"
#include "daemon/port_select.hpp"
#include "daemon/topology.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "dataplane/wire/pfc.hpp"

namespace vf {
namespace {
using control::json;

// The one port `args.port` names, or an error already sent.
std::optional<PortRef> one_port(DaemonState& d, const json& args, control::Reply& reply) {
  const std::string name = args.contains("port") && args["port"].is_string() ? args["port"].get<std::string>() : "";
  auto sel = select_one_port(d.config(), name);
  if (const auto* e = std::get_if<PortSelectError>(&sel)) return reply.error(e->message, e->hint), std::nullopt;
  return std::get<PortRef>(sel);
}

bool is_ethernet(const DaemonState& d, const PortRef& r) {
  return d.config().fabrics[r.fabric].link_layer == config::LinkLayer::Ethernet;
}

json headroom_json(const HeadroomTerms& t) {
  return {{"trigger", t.trigger}, {"wait", t.wait},         {"pause", t.pause}, {"cable", t.cable},
          {"interface", t.interface}, {"response", t.response}, {"last", t.last}, {"total", t.total}};
}

// What the lcore copies out of an Ethernet port for qos.show.
struct EthQosView {
  dp::EthQos q;
  std::optional<dp::PfcSnapshot> pfc;
  HeadroomTerms model{};
  uint64_t rate_bps = 0;
};

EthQosView view_eth_qos(const dp::Fabric& f, const dp::Endpoint& e) {
  const dp::Port& p = f.port(e);
  EthQosView v{p.config().eth, std::nullopt, {}, p.link_params().rate_bps};
  if (const dp::Pfc* pfc = f.pfc(p)) {
    v.pfc = pfc->snapshot();
    v.model = pfc->config().model;
  }
  return v;
}

// Egress scheduling as mlnx_qos lists it: per traffic class its algorithm,
// share and priorities.
json ets_json(const dp::EtsConfig& e) {
  json tcs = json::array();
  for (unsigned tc = 0; tc < 8; ++tc) {
    json prios = json::array();
    for (unsigned p = 0; p < 8; ++p)
      if (e.prio2tc[p] == tc) prios.push_back(p);
    tcs.push_back({{"tc", tc},
                   {"tsa", e.tsa[tc] == dp::Tsa::kStrict ? "strict" : "ets"},
                   {"bw", e.bw[tc]},
                   {"priorities", std::move(prios)}});
  }
  return {{"prio_tc", e.prio2tc}, {"tcs", std::move(tcs)}};
}

// An Ethernet port's QoS and PFC state, and the headroom the delay model
// gives for its link.
json eth_qos_json(const EthQosView& v) {
  const dp::PfcSettings& pfc = v.q.pfc;
  json out = {{"link_layer", "ethernet"},
              {"trust", v.q.trust_dscp ? "dscp" : "pcp"},
              {"dscp2prio", v.q.dscp2prio},
              {"pause_quanta", pfc.pause_quanta},
              {"pfc_response_ns", pfc.response_ns},
              {"pfc_watchdog_ns", pfc.watchdog_ns}};
  if (v.q.ets.enabled) out["ets"] = ets_json(v.q.ets);
  if (!v.pfc) return out;  // not linked
  out["pfc"] = pfc_state_json(*v.pfc);
  out["pause_time_ns"] = wire::pause_quanta_ns(pfc.pause_quanta, v.rate_bps);
  const HeadroomTerms& t = v.model;
  out["headroom_model"] = headroom_json(t);
  bool below = false;
  for (unsigned i = 0; i < dp::kNumPriorities; ++i)
    below |= (v.pfc->enable >> i & 1) && v.pfc->pg[i].headroom < t.total;
  out["headroom_below_model"] = below;
  return out;
}

// [{"vl", "weight"}...] -> a table; nullopt (and `error`) when malformed.
std::optional<VlArbTable> vlarb_arg(const json& v, const char* key, std::string& error) {
  VlArbTable t;
  if (!v.is_array() || v.size() > kVlArbCap) {
    error = std::string(key) + " must be a list of at most 8 VL:weight entries";
    return std::nullopt;
  }
  for (const json& e : v) {
    if (!e.is_object() || !e.contains("vl") || !e.contains("weight") || !e["vl"].is_number_unsigned() ||
        !e["weight"].is_number_unsigned() || e["vl"].get<uint64_t>() > 14 || e["weight"].get<uint64_t>() > 255) {
      error = std::string(key) + ": each entry is a data VL 0..14 and a weight 0..255";
      return std::nullopt;
    }
    t.add({uint8_t(e["vl"].get<uint64_t>()), uint8_t(e["weight"].get<uint64_t>())});
  }
  return t;
}

// What qos.set asks for, checked for shape and range here; whether its VLs
// are operational on the port is the lcore's to check.
struct QosChange {
  std::vector<std::pair<uint8_t, uint8_t>> sl2vl;
  std::optional<VlArbTable> high, low;
  std::optional<uint8_t> high_limit;
};

std::optional<QosChange> parse_change(const json& args, std::string& error) {
  QosChange c;
  if (args.contains("sl2vl")) {
    const json& m = args["sl2vl"];
    if (!m.is_object() || m.empty()) error = "sl2vl must map SLs to VLs, e.g. {\"0\": 0, \"1\": 1}";
    else
      for (const auto& [sl, vl] : m.items()) {
        const bool sl_ok = sl.size() <= 2 && !sl.empty() && std::all_of(sl.begin(), sl.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) &&
                           std::stoi(sl) < int(kNumSls);
        if (!sl_ok || !vl.is_number_unsigned() || vl.get<uint64_t>() > 15) {
          error = "sl2vl: each SL is 0..15 and maps to a VL 0..15 (15: the SL may not use the port)";
          break;
        }
        c.sl2vl.push_back({uint8_t(std::stoi(sl)), uint8_t(vl.get<uint64_t>())});
      }
  }
  if (error.empty() && args.contains("vlarb_high")) c.high = vlarb_arg(args["vlarb_high"], "vlarb_high", error);
  if (error.empty() && args.contains("vlarb_low")) c.low = vlarb_arg(args["vlarb_low"], "vlarb_low", error);
  if (error.empty() && args.contains("high_limit")) {
    if (!args["high_limit"].is_number_unsigned() || args["high_limit"].get<uint64_t>() > 255)
      error = "high_limit is 0..255 (4096-byte units; 255: unlimited)";
    else
      c.high_limit = uint8_t(args["high_limit"].get<uint64_t>());
  }
  if (error.empty() && c.sl2vl.empty() && !c.high && !c.low && !c.high_limit)
    error = "nothing to set: give sl2vl, vlarb_high, vlarb_low or high_limit";
  if (!error.empty()) return std::nullopt;
  return c;
}

json shown(const config::Config& cfg, const PortRef& r, const PortQos& q) {
  json out = port_qos_json(q);
  out["port"] = r.text();
  out["fabric"] = cfg.fabrics[r.fabric].name;
  return out;
}

void qos_show(DaemonState& d, const json& args, control::Reply reply) {
  const auto ref = one_port(d, args, reply);
  if (!ref) return;
  DaemonState* dp = &d;
  if (is_ethernet(d, *ref)) {
    const bool queued = d.lcore().post([dp, r = *ref, reply] {
      const EthQosView v = view_eth_qos(dp->topology().fabric(r.fabric), {r.node, r.port});
      reply.ok_with([dp, r, v] {
        json out = eth_qos_json(v);
        out["port"] = r.text();
        out["fabric"] = dp->config().fabrics[r.fabric].name;
        return out;
      });
    });
    if (!queued) reply.error("the dataplane is busy", "retry in a moment");
    return;
  }
  const bool queued = d.lcore().post([dp, r = *ref, reply] {
    try {
      const PortQos q = dp->topology().port_qos(r.fabric, {r.node, r.port});
      reply.ok_with([dp, r, q] { return shown(dp->config(), r, q); });
    } catch (const std::invalid_argument& e) {
      reply.error(e.what());
    }
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

void qos_set(DaemonState& d, const json& args, control::Reply reply) {
  const auto ref = one_port(d, args, reply);
  if (!ref) return;
  if (is_ethernet(d, *ref))
    return reply.error(ref->text() + " is an Ethernet port: its trust, DSCP map and PFC come from the config",
                       "change the fabric's qos: section and restart fabricd; qos set programs IB ports' VL records");
  std::string bad;
  const auto change = parse_change(args, bad);
  if (!change) return reply.error(bad, "e.g. fabricctl qos set vib0 sl2vl 1:1 vlarb_low 0:32,1:32");
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, r = *ref, c = *change, reply] {
    Topology& topo = dp->topology();
    try {
      PortQos q = topo.port_qos(r.fabric, {r.node, r.port});
      for (const auto& [sl, vl] : c.sl2vl) q.sl2vl[sl] = vl;
      if (c.high) q.vlarb_high = *c.high;
      if (c.low) q.vlarb_low = *c.low;
      if (c.high_limit) q.vlarb_high_limit = *c.high_limit;
      topo.set_port_qos(r.fabric, {r.node, r.port}, q);
      dp->fabric_event("qos", "QoS of " + r.text() + " set");
      reply.ok_with([dp, r, q] { return shown(dp->config(), r, q); });
    } catch (const std::invalid_argument& e) {
      reply.error(e.what(), "fabricctl qos show " + r.text() + " lists its operational VLs");
    }
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

}  // namespace

void register_qos_commands(control::ControlServer& server, DaemonState& daemon) {
  server.add_async_command(
      "qos.show", [&daemon](const json& args, control::Reply reply) { qos_show(daemon, args, std::move(reply)); },
      "{port}: an IB port's operational VLs, SL to VL table and VL arbitration; an Ethernet port's trust, DSCP "
      "map, PFC state and thresholds and the headroom model",
      control::Access::ReadOnly);
  server.add_async_command(
      "qos.set", [&daemon](const json& args, control::Reply reply) { qos_set(daemon, args, std::move(reply)); },
      "{port, sl2vl?: {sl: vl}, vlarb_high?: [{vl, weight}], vlarb_low?: [...], high_limit?}: program an IB "
      "port's VL record, as an SMP would",
      control::Access::Mutating);
}

}  // namespace vf
