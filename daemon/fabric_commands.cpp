// The fabric's control commands: links down/up (`fabricctl link set`) and a
// switch's forwarding table as the subnet manager programmed it
// (`fabricctl routes`). Requests are resolved against the config on the
// control thread, so a bad one is refused before anything reaches the lcore.
#include <nlohmann/json.hpp>

#include "daemon/control_commands.hpp"
#include "daemon/control_server.hpp"
#include "daemon/daemon_state.hpp"
#include "daemon/lcore.hpp"
#include "daemon/link_lookup.hpp"
#include "daemon/topology.hpp"
#include "dataplane/fabric/fabric.hpp"

namespace vf {
namespace {
using control::json;

std::string arg(const json& args, const char* k) {
  return args.contains(k) && args[k].is_string() ? args[k].get<std::string>() : std::string();
}

// {a, b?, state: down|up}: both ends of the link go down (PhysState Polling
// at a vHCA end, as with a pulled cable) or train again; on IB the subnet
// manager sweeps and routes around it.
void link_set(DaemonState& d, const json& args, control::Reply reply) {
  const std::string a = arg(args, "a"), b = arg(args, "b"), state = arg(args, "state");
  if (state != "down" && state != "up")
    return reply.error("link state must be 'down' or 'up'", "e.g. fabricctl link set leaf0/3 state down");
  const auto found = find_link(d.config(), a, b);
  if (const auto* e = std::get_if<LinkLookupError>(&found)) return reply.error(e->message, e->hint);
  const LinkRef ref = std::get<LinkRef>(found);
  const config::Fabric& f = d.config().fabrics[ref.fabric];
  const config::Link& l = f.links[ref.link];
  const bool up = state == "up";
  json result = {{"fabric", f.name}, {"a", l.a.text()}, {"b", l.b.text()}, {"state", state}};
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, ref, up, result, reply]() mutable {
    Topology& topo = dp->topology();
    result["changed"] = topo.link_up(ref.fabric, ref.link) != up;
    result["subnet_manager_sweeps"] = topo.subnet_manager(ref.fabric) != nullptr;
    for (size_t end : topo.set_link_up(ref.fabric, ref.link, up, PhysState::kPolling))
      dp->port_changed(end, nullptr);
    reply.ok(std::move(result));
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

struct LftEntry {
  uint16_t lid;
  std::string hca;
  uint8_t port;
};

// {switch}: the switch's LFT entries for every vHCA LID, read from the
// dataplane, and the SM's last sweep.
void routes(DaemonState& d, const json& args, control::Reply reply) {
  const std::string name = arg(args, "switch");
  const auto& fabrics = d.config().fabrics;
  size_t fi = 0;
  while (fi < fabrics.size() && !fabrics[fi].find_switch(name)) ++fi;
  if (fi == fabrics.size())
    return reply.error("no switch named '" + name + "'", "the config's switches: sections name them");
  if (fabrics[fi].link_layer != config::LinkLayer::Infiniband)
    return reply.error("switch '" + name + "' is an Ethernet switch: it has an FDB, not an LFT",
                       "fabricctl routes shows InfiniBand switches");
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, fi, name, reply] {
    const sm::SubnetManager& sm = *dp->topology().subnet_manager(fi);
    const dp::Fabric& fabric = dp->topology().fabric(fi);
    const dp::IbSwitch* sw = nullptr;
    for (const auto& s : fabric.switches())
      if (s->name() == name) sw = static_cast<const dp::IbSwitch*>(s.get());
    std::vector<LftEntry> lft;
    for (const auto& [hca, lid] : sm.lids().lids)
      if (!dp->config().fabrics[fi].find_switch(hca)) lft.push_back({lid, hca, sw->lft(lid)});
    const sm::SweepReport r = sm.last();
    reply.ok_with([dp, fi, name, lft = std::move(lft), r] {
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
                    {"unrouted", r.unrouted}}},
                  {"lft", std::move(entries)}};
    });
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

}  // namespace

void register_fabric_commands(control::ControlServer& server, DaemonState& daemon) {
  using control::Access;
  server.add_async_command(
      "link.set", [&daemon](const json& args, control::Reply reply) { link_set(daemon, args, std::move(reply)); },
      "{a, b?, state: down|up}: take a link down or up (a: leaf0/3 or vib0; or a and b: its two nodes)",
      Access::Mutating);
  server.add_async_command(
      "routes", [&daemon](const json& args, control::Reply reply) { routes(daemon, args, std::move(reply)); },
      "{switch}: an IB switch's LFT for every vHCA LID and the subnet manager's last sweep", Access::ReadOnly);
}

}  // namespace vf
