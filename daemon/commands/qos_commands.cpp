// `fabricctl qos show|set PORT`: an IB port's VL record -- operational VLs,
// SL→VL, VL arbitration -- as the subnet manager programmed it, and changing
// it the way an operator's SMP would (opensm's qos-policy words: sl2vl,
// vlarb_high, vlarb_low, high_limit). As on a real subnet the SM programs a
// port from the config again when a sweep activates it (a link that went
// down and up). Ethernet ports are eth_qos_commands.cpp's.
#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "daemon/commands/control_commands.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/service/daemon_state.hpp"
#include "daemon/commands/eth_qos_commands.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/telemetry/port_qos_json.hpp"
#include "daemon/commands/port_select.hpp"
#include "daemon/fabric/topology.hpp"
#include "dataplane/fabric/fabric.hpp"

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
  if (is_ethernet(d, *ref)) return eth_qos_show(d, *ref, std::move(reply));
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
  if (is_ethernet(d, *ref)) return eth_qos_set(d, *ref, args, std::move(reply));
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
      "port's VL record, as an SMP would; Ethernet: {port, prio_tc?, tsa?, tc_bw?: [8]} and on a vHCA {dcqcn?: "
      "on|off, min_time_between_cnps_ns?, rpg_time_reset_ns?, rpg_ai_rate_mbps?, rpg_hai_rate_mbps?}",
      control::Access::Mutating);
}

}  // namespace vf
