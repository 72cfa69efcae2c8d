#include "daemon/ip/router_setup.hpp"

#include "daemon/ip/ip_routing.hpp"
#include "daemon/sm/subnet_manager.hpp"
#include "dataplane/fabric/eth_switch.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "dataplane/fabric/router.hpp"

namespace vf::routing {

void enable_routers(dp::Fabric& fabric, const config::Fabric& f) {
  for (std::size_t i = 0; i < f.switches.size(); ++i) {
    const auto& rt = f.switches[i].router;
    if (!rt) continue;
    dp::RouterConfig rc;
    rc.mac = rt->mac;
    rc.gateway = rt->gateway;
    rc.prefix_len = rt->prefix_len;
    rc.vid = rt->vlan;
    rc.routed_ports.assign(rt->routed_ports.begin(), rt->routed_ports.end());
    rc.hash_seed = uint32_t(i) * 0x9E3779B9u;  // per switch, or every tier hashes alike (polarisation)
    fabric.enable_routing(f.switches[i].name, rc);
  }
}

void program_routes(dp::Fabric& fabric, const config::Fabric& f) {
  const auto tables = ip_routes(f, [&](std::size_t i) {
    const dp::LinkInfo* l = fabric.find_link(sm::dp_endpoint(f.links[i].a));
    return l && l->up();
  });
  for (const auto& t : tables) {
    std::vector<dp::Ipv4Route> routes;
    for (const auto& r : t.routes) {
      dp::Ipv4Route& d = routes.emplace_back();
      d.prefix = r.prefix;
      d.len = r.len;
      for (const auto& h : r.hops) d.hops.push_back({h.port, h.mac});
    }
    fabric.eth_switch(f.switches[t.sw].name).router()->set_routes(std::move(routes));
  }
}

}  // namespace vf::routing
