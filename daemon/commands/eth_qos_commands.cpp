#include "daemon/commands/eth_qos_commands.hpp"

#include <optional>

#include <fmt/format.h>

#include "core/pfc_headroom.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/service/daemon_state.hpp"
#include "daemon/config/ets_check.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/telemetry/pfc_json.hpp"
#include "daemon/commands/port_select.hpp"
#include "daemon/fabric/topology.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "dataplane/wire/pfc.hpp"

namespace vf {
namespace {
using control::json;

constexpr uint64_t kMaxDcqcnTimeNs = 100'000'000;  // as the config allows

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
  std::optional<engine::DcqcnConfig> dcqcn;  // a RoCE vHCA's
};

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

// In mlx5's knob names (ecn/roce_rp, ecn/roce_np).
json dcqcn_json(const engine::DcqcnConfig& c) {
  return {{"enabled", c.rp_enabled && c.np_enabled},
          {"line_rate_mbps", c.line_rate_mbps},
          {"min_time_between_cnps_ns", c.min_time_between_cnps_ns},
          {"rpg_time_reset_ns", c.rpg_time_reset_ns},
          {"rpg_ai_rate_mbps", c.rpg_ai_rate_mbps},
          {"rpg_hai_rate_mbps", c.rpg_hai_rate_mbps},
          {"cnp_dscp", c.cnp_dscp}};
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
  if (v.dcqcn) out["dcqcn"] = dcqcn_json(*v.dcqcn);
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

EthQosView view(DaemonState& d, const PortRef& r) {
  const dp::Fabric& f = d.topology().fabric(r.fabric);
  const dp::Port& p = f.port({r.node, r.port});
  EthQosView v{p.config().eth, std::nullopt, {}, p.link_params().rate_bps, std::nullopt};
  v.q.ets = p.ets();
  if (const dp::Pfc* pfc = f.pfc(p)) {
    v.pfc = pfc->snapshot();
    v.model = pfc->config().model;
  }
  if (r.hca) v.dcqcn = d.topology().dcqcn(r.node);
  return v;
}

void answer(DaemonState* d, const PortRef& r, control::Reply reply) {
  const EthQosView v = view(*d, r);
  reply.ok_with([d, r, v] {
    json out = eth_qos_json(v);
    out["port"] = r.text();
    out["fabric"] = d->config().fabrics[r.fabric].name;
    return out;
  });
}

// What qos.set asks of an Ethernet port, checked for shape and range.
struct EthChange {
  std::optional<std::array<uint8_t, 8>> prio_tc, tc_bw;
  std::optional<std::array<bool, 8>> strict;
  std::optional<bool> dcqcn;
  std::optional<uint64_t> cnp_interval_ns, rate_timer_ns;
  std::optional<uint32_t> ai_mbps, hai_mbps;
  bool touches_dcqcn() const { return dcqcn || cnp_interval_ns || rate_timer_ns || ai_mbps || hai_mbps; }
  bool touches_ets() const { return prio_tc || tc_bw || strict; }
};

std::optional<std::array<uint8_t, 8>> eight(const json& v, unsigned max) {
  if (!v.is_array() || v.size() != 8) return std::nullopt;
  std::array<uint8_t, 8> out{};
  for (size_t i = 0; i < 8; ++i) {
    if (!v[i].is_number_unsigned() || v[i].get<uint64_t>() > max) return std::nullopt;
    out[i] = uint8_t(v[i].get<uint64_t>());
  }
  return out;
}

std::optional<uint64_t> bounded(const json& args, const char* key, uint64_t lo, uint64_t hi, std::string& error) {
  if (!args.contains(key)) return std::nullopt;
  const json& v = args[key];
  if (!v.is_number_unsigned() || v.get<uint64_t>() < lo || v.get<uint64_t>() > hi) {
    error = fmt::format("{} must be {} to {}", key, lo, hi);
    return std::nullopt;
  }
  return v.get<uint64_t>();
}

std::optional<EthChange> parse(const json& args, std::string& error) {
  EthChange c;
  if (args.contains("prio_tc") && !(c.prio_tc = eight(args["prio_tc"], 7)))
    error = "prio_tc is 8 traffic classes 0..7, priority 0 first";
  if (error.empty() && args.contains("tc_bw") && !(c.tc_bw = eight(args["tc_bw"], 100)))
    error = "tc_bw is 8 percentages 0..100, traffic class 0 first";
  if (error.empty() && args.contains("tsa")) {
    const json& t = args["tsa"];
    std::array<bool, 8> s{};
    bool ok = t.is_array() && t.size() == 8;
    for (size_t i = 0; ok && i < 8; ++i) {
      ok = t[i] == "ets" || t[i] == "strict";
      if (ok) s[i] = t[i] == "strict";
    }
    if (ok) c.strict = s;
    else error = "tsa is 8 of ets|strict, traffic class 0 first";
  }
  if (error.empty() && args.contains("dcqcn")) {
    if (args["dcqcn"] == "on" || args["dcqcn"] == "off") c.dcqcn = args["dcqcn"] == "on";
    else error = "dcqcn is on or off";
  }
  if (error.empty()) c.cnp_interval_ns = bounded(args, "min_time_between_cnps_ns", 1, kMaxDcqcnTimeNs, error);
  if (error.empty()) c.rate_timer_ns = bounded(args, "rpg_time_reset_ns", 1, kMaxDcqcnTimeNs, error);
  if (error.empty())
    if (const auto v = bounded(args, "rpg_ai_rate_mbps", 1, 100'000, error)) c.ai_mbps = uint32_t(*v);
  if (error.empty())
    if (const auto v = bounded(args, "rpg_hai_rate_mbps", 1, 100'000, error)) c.hai_mbps = uint32_t(*v);
  if (error.empty() && !c.touches_ets() && !c.touches_dcqcn())
    error = "nothing to set: give prio_tc, tsa, tc_bw, or on a vHCA dcqcn and its parameters";
  if (!error.empty()) return std::nullopt;
  return c;
}

engine::DcqcnConfig applied(engine::DcqcnConfig d, const EthChange& c) {
  if (c.dcqcn) d.rp_enabled = d.np_enabled = *c.dcqcn;
  if (c.cnp_interval_ns) d.min_time_between_cnps_ns = *c.cnp_interval_ns;
  if (c.rate_timer_ns) d.rpg_time_reset_ns = *c.rate_timer_ns;
  if (c.ai_mbps) d.rpg_ai_rate_mbps = *c.ai_mbps;
  if (c.hai_mbps) d.rpg_hai_rate_mbps = *c.hai_mbps;
  return d;
}

}  // namespace

void eth_qos_show(DaemonState& d, const PortRef& r, control::Reply reply) {
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, r, reply] { answer(dp, r, reply); });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

void eth_qos_set(DaemonState& d, const PortRef& r, const json& args, control::Reply reply) {
  if (args.contains("sl2vl") || args.contains("vlarb_high") || args.contains("vlarb_low") ||
      args.contains("high_limit"))
    return reply.error(r.text() + " is an Ethernet port: it has priorities and traffic classes, not VLs",
                       "give prio_tc, tsa or tc_bw (mlnx_qos's words)");
  std::string bad;
  const auto c = parse(args, bad);
  if (!c) return reply.error(bad, "e.g. fabricctl qos set sw/1 tc_bw 70,30,0,0,0,0,0,0");
  if (c->touches_dcqcn() && !r.hca)
    return reply.error("DCQCN runs at the vHCAs (reaction and notification points), not at " + r.text(),
                       "name a RoCE vHCA, e.g. fabricctl qos set vroce0 dcqcn off");
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, r, c = *c, reply] {
    Topology& topo = dp->topology();
    dp::EtsConfig e = topo.fabric(r.fabric).port({r.node, r.port}).ets();
    if (c.touches_ets()) {
      if (c.prio_tc) e.prio2tc = *c.prio_tc;
      if (c.tc_bw) e.bw = *c.tc_bw;
      if (c.strict)
        for (unsigned tc = 0; tc < 8; ++tc) e.tsa[tc] = (*c.strict)[tc] ? dp::Tsa::kStrict : dp::Tsa::kEts;
      std::array<bool, 8> strict{};
      for (unsigned tc = 0; tc < 8; ++tc) strict[tc] = e.tsa[tc] == dp::Tsa::kStrict;
      if (const auto p = ets_problem(strict, e.bw)) return reply.error(p->what, p->fix);
      e.enabled = true;
      topo.set_port_ets(r.fabric, {r.node, r.port}, e);
    }
    if (c.touches_dcqcn()) topo.set_dcqcn(r.node, applied(*topo.dcqcn(r.node), c));
    dp->fabric_event("qos", "QoS of " + r.text() + " set");
    answer(dp, r, reply);
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

}  // namespace vf
