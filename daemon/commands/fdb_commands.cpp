// `routes` on an Ethernet switch: its FDB as `bridge fdb show` would list it
// (VLAN, MAC, port, static or learned and how long ago the station last
// sent), the stations the MACs belong to, and what the bridge counted; on a
// router also its IPv4 table (ip_route_json.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "daemon/config/addr.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/service/daemon_state.hpp"
#include "daemon/commands/fdb_commands.hpp"
#include "daemon/ip/ip_route_json.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/fabric/topology.hpp"
#include "dataplane/fabric/fabric.hpp"

namespace vf {
namespace {

using control::json;

struct FdbView {
  std::vector<dp::FdbEntry> entries;
  Nanos now = 0, ageing = 0;
  dp::BridgeSnapshot c{};
};

FdbView read_fdb(const dp::EthSwitch& sw, Nanos now) {
  FdbView v;
  v.entries = sw.fdb().entries(now);
  std::sort(v.entries.begin(), v.entries.end(),
            [](const dp::FdbEntry& a, const dp::FdbEntry& b) { return std::tie(a.vid, a.mac) < std::tie(b.vid, b.mac); });
  v.now = now;
  v.ageing = sw.fdb().ageing();
  v.c = sw.snapshot();
  return v;
}

json fdb_json(const config::Fabric& f, const std::string& name, const FdbView& v) {
  json entries = json::array();
  for (const dp::FdbEntry& e : v.entries) {
    json j{{"vlan", e.vid}, {"mac", addr::format_mac(e.mac)}, {"port", e.port}, {"type", e.is_static ? "static" : "learned"}};
    if (!e.is_static) j["age_s"] = double(v.now - e.last_seen) / 1e9;
    for (const auto& h : f.hcas)
      if (h.mac == e.mac) j["station"] = h.name;
    entries.push_back(std::move(j));
  }
  return json{{"switch", name},
              {"fabric", f.name},
              {"ageing_s", double(v.ageing) / 1e9},
              {"fdb", std::move(entries)},
              {"counters",
               {{"learned", v.c.fdb_learned},
                {"moved", v.c.fdb_moved},
                {"aged", v.c.fdb_aged},
                {"table_full", v.c.fdb_table_full},
                {"flooded", v.c.flooded},
                {"flood_copies", v.c.flood_copies},
                {"flood_no_mbuf", v.c.flood_no_mbuf},
                {"flood_no_room", v.c.flood_no_room},
                {"vlan_filtered", v.c.vlan_filtered},
                {"same_port", v.c.same_port},
                {"no_egress", v.c.no_egress},
                {"no_tag_room", v.c.no_tag_room}}}};
}

}  // namespace

void ethernet_routes(DaemonState& d, size_t fi, const std::string& name, control::Reply reply) {
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, fi, name, reply] {
    const dp::Fabric& fabric = dp->topology().fabric(fi);
    const dp::EthSwitch* sw = nullptr;
    for (const auto& s : fabric.switches())
      if (s->name() == name) sw = static_cast<const dp::EthSwitch*>(s.get());
    const FdbView v = read_fdb(*sw, dp->lcore().scheduler().now());
    std::optional<IpRouteView> ip;
    if (sw->router()) ip = read_ip_routes(*sw);
    reply.ok_with([dp, fi, name, v, ip] {
      const config::Fabric& f = dp->config().fabrics[fi];
      json j = fdb_json(f, name, v);
      if (ip) j["ip"] = ip_routes_json(f, *f.find_switch(name), *ip);
      return j;
    });
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

}  // namespace vf
