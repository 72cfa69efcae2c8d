// `fabricctl topology show`: every fabric's switches, vHCAs and links as the
// dataplane has them now -- ibnetdiscover's picture plus what an emulated
// link adds (rate, delay, MTU, state, faults). The config gives names, width
// and speed; the lcore copies what can change at run time.
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "daemon/config/addr.hpp"
#include "daemon/commands/control_commands.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/service/daemon_state.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/runtime/sysfs_spec.hpp"
#include "daemon/fabric/topology.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "dataplane/fabric/impairment.hpp"

namespace vf {
namespace {
using control::json;

// What can change while fabricd runs, copied on the lcore.
struct LiveLink {
  bool up;
  dp::LinkParams params;
  std::optional<dp::ImpairmentSpec> impairment;
};
struct LiveFabric {
  std::vector<LiveLink> links;          // config order
  std::map<std::string, uint16_t> lids;  // IB: the SM's
};
struct LiveTopology {
  std::vector<LiveFabric> fabrics;
  std::map<std::string, PortState> hca_state;
};

LiveTopology copy_live(DaemonState& d) {
  LiveTopology live;
  const Topology& topo = d.topology();
  for (size_t fi = 0; fi < d.config().fabrics.size(); ++fi) {
    LiveFabric f;
    for (size_t li = 0; li < d.config().fabrics[fi].links.size(); ++li) {
      const dp::LinkInfo& l = topo.link(fi, li);
      LiveLink one{l.up(), l.port_a->link_params(), std::nullopt};
      if (l.impair_ab) one.impairment = l.impair_ab->spec();
      f.links.push_back(one);
    }
    if (const sm::SubnetManager* sm = topo.subnet_manager(fi))
      for (const auto& [node, lid] : sm->lids().lids) f.lids[node] = lid;
    live.fabrics.push_back(std::move(f));
  }
  for (size_t i = 0; i < topo.vhcas().size(); ++i) live.hca_state[topo.vhcas()[i].name] = topo.port_info(i).state;
  return live;
}

json lid_or_null(const LiveFabric& f, const std::string& node) {
  const auto it = f.lids.find(node);
  return it == f.lids.end() ? json(nullptr) : json(it->second);
}

json link_json(const config::Fabric& cf, const config::Link& l, const LiveLink& live) {
  json one = {{"a", l.a.text()},
              {"b", l.b.text()},
              {"state", live.up ? "up" : "down"},
              {"rate_bps", live.params.rate_bps},
              {"delay_ns", live.params.delay_ns},
              {"mtu", live.params.mtu}};
  if (cf.link_layer == config::LinkLayer::Infiniband) {
    one["width"] = config::to_string(l.width);
    one["speed"] = config::to_string(l.speed);
  } else {
    one["speed_gbps"] = l.eth_speed_gbps;
  }
  if (live.impairment)
    one["impairment"] = {{"loss", live.impairment->loss},
                         {"corrupt", live.impairment->corrupt},
                         {"duplicate", live.impairment->duplicate},
                         {"reorder", live.impairment->reorder},
                         {"seed", live.impairment->seed}};
  return one;
}

json fabric_json(const config::Fabric& cf, const LiveFabric& live, const LiveTopology& all) {
  const bool ib = cf.link_layer == config::LinkLayer::Infiniband;
  json switches = json::array(), hcas = json::array(), links = json::array();
  for (const config::Switch& s : cf.switches) {
    json one = {{"name", s.name}, {"ports", s.ports}, {"node_guid", addr::format_guid_hex(s.node_guid)}, {"latency_ns", s.latency_ns}};
    if (ib) one["lid"] = lid_or_null(live, s.name);
    switches.push_back(std::move(one));
  }
  for (const config::Hca& h : cf.hcas) {
    json one = {{"name", h.name}, {"node_guid", addr::format_guid_hex(h.node_guid)}};
    if (ib) one["lid"] = lid_or_null(live, h.name);
    if (h.ipv4) one["ipv4"] = addr::format_ipv4(*h.ipv4);
    if (!ib) one["mac"] = addr::format_mac(h.mac);
    const auto st = all.hca_state.find(h.name);
    one["state"] = st == all.hca_state.end() ? "DOWN" : runtime::to_string(st->second);
    hcas.push_back(std::move(one));
  }
  for (size_t i = 0; i < cf.links.size(); ++i) links.push_back(link_json(cf, cf.links[i], live.links.at(i)));
  return {{"name", cf.name},
          {"link_layer", config::to_string(cf.link_layer)},
          {"switches", std::move(switches)},
          {"hcas", std::move(hcas)},
          {"links", std::move(links)}};
}

void topology_show(DaemonState& d, control::Reply reply) {
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, reply] {
    reply.ok_with([dp, live = copy_live(*dp)] {
      json fabrics = json::array();
      for (size_t i = 0; i < dp->config().fabrics.size(); ++i)
        fabrics.push_back(fabric_json(dp->config().fabrics[i], live.fabrics[i], live));
      return json{{"fabrics", std::move(fabrics)}};
    });
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

}  // namespace

void register_topology_commands(control::ControlServer& server, DaemonState& daemon) {
  server.add_async_command(
      "topology.show", [&daemon](const json&, control::Reply reply) { topology_show(daemon, std::move(reply)); },
      "every fabric: switches, vHCAs (LID, state) and links (width, speed, rate, delay, MTU, state, faults)",
      control::Access::ReadOnly);
}

}  // namespace vf
