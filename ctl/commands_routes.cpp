// `fabricctl routes SWITCH`: the forwarding programmed over the fabric's
// cabling -- an IB switch's LFT and MFT, as the subnet manager set them; an
// Ethernet switch's FDB and, on a routing switch, its IPv4 routes.
#include <memory>

#include <fmt/format.h>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

namespace vf::ctl {

namespace {
// A routing switch: `ip route` and `ip neigh` as tables, then what it counted.
void print_ip_routes(const json& ip) {
  std::cout << "\nIPv4 router, MAC " << text(ip, "mac");
  if (ip.contains("gateway")) std::cout << ", gateway " << text(ip, "gateway") << " on VLAN " << text(ip, "vlan");
  std::cout << ", routed ports " << text(ip, "routed_ports") << "\n";
  Table t({"DESTINATION", "TYPE", "VIA PORT", "NEXT HOP", "LINK"});
  for (const json& r : ip.value("routes", json::array())) {
    if (!r.contains("nexthops")) {
      t.add({text(r, "dst"), text(r, "type"), "-", "(on the gateway's VLAN)", "-"});
      continue;
    }
    bool first = true;
    for (const json& h : r["nexthops"]) {
      t.add({first ? text(r, "dst") : "", first ? text(r, "type") : "", text(h, "port"),
             fmt::format("{} {}", text(h, "router"), text(h, "mac")), text(h, "link")});
      first = false;
    }
  }
  t.print(std::cout);
  const json& n = ip["neighbours"];
  if (n.is_array() && !n.empty()) {
    Table nt({"NEIGHBOUR", "MAC", "STATION"});
    for (const json& e : n) nt.add({text(e, "ip"), text(e, "mac"), text(e, "station")});
    nt.print(std::cout);
  }
  const json c = ip.value("counters", json::object());
  std::cout << "routed " << text(c, "routed") << "; dropped: no route " << text(c, "no_route")
            << ", every next hop down " << text(c, "no_next_hop") << ", TTL exceeded " << text(c, "ttl_exceeded")
            << ", bad IPv4 header " << text(c, "header_errors") << ", to the router itself " << text(c, "to_router")
            << ", not routable " << text(c, "not_routable") << "; ARP: " << text(c, "arp_requests")
            << " requests, " << text(c, "arp_replies") << " replies, " << text(c, "arp_resolved") << " resolved, "
            << text(c, "arp_failed") << " failed, " << text(c, "unresolved_discards") << " packets discarded unresolved\n";
}

// An Ethernet switch: `bridge fdb show` in a table, then what the bridge counted.
int print_fdb(const json& r) {
  const json& fdb = r["fdb"];
  std::cout << text(r, "switch") << " (fabric " << text(r, "fabric") << ", learning bridge, ageing "
            << text(r, "ageing_s") << " s): " << (fdb.is_array() ? fdb.size() : 0) << " FDB entries\n";
  Table t({"VLAN", "MAC", "PORT", "TYPE", "AGE", "STATION"});
  for (const json& e : r.value("fdb", json::array()))
    t.add({text(e, "vlan"), text(e, "mac"), text(e, "port"), text(e, "type"),
           e.contains("age_s") ? fmt::format("{:.1f}s", e.value("age_s", 0.0)) : "-", text(e, "station")});
  t.print(std::cout);
  const json c = r.value("counters", json::object());
  std::cout << "learned " << text(c, "learned") << ", moved " << text(c, "moved") << ", aged " << text(c, "aged")
            << ", not learned (table full) " << text(c, "table_full") << "; flooded " << text(c, "flooded")
            << " frames as " << text(c, "flood_copies") << " copies (" << text(c, "flood_no_room")
            << " not made: queue full); dropped: VLAN filter "
            << text(c, "vlan_filtered") << ", destination on the ingress port " << text(c, "same_port")
            << ", egress unusable " << text(c, "no_egress") << ", no room for a tag " << text(c, "no_tag_room") << "\n";
  if (r.contains("ip")) print_ip_routes(r["ip"]);
  return 0;
}
}  // namespace

int cmd_routes(const Globals& g, const std::string& sw) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json r = c.call("routes", {{"switch", sw}});
    if (g.json) {
      print_json(r);
      return 0;
    }
    if (r.contains("fdb")) return print_fdb(r);
    const json sweep = r.value("sweep", json::object());
    std::cout << text(r, "switch") << " (fabric " << text(r, "fabric") << ", " << text(r, "routing")
              << " routing, sweep " << text(sweep, "number") << ": " << text(sweep, "links_up") << " of "
              << text(sweep, "links") << " links up)\n";
    Table t({"LID", "DESTINATION", "PORT"});
    for (const json& e : r.value("lft", json::array()))
      t.add({text(e, "lid"), text(e, "destination"), e.contains("port") && e["port"].is_null() ? "none" : text(e, "port")});
    t.print(std::cout);
    const json mft = r.value("mft", json::array());
    if (!mft.empty()) {
      // ibroute -M's view: which ports a multicast LID leaves by.
      Table m({"MLID", "PORTS", "MEMBERS"});
      for (const json& e : mft) {
        std::string ports, members;
        for (const json& p : e.value("ports", json::array())) ports += (ports.empty() ? "" : ",") + p.dump();
        for (const json& h : e.value("members", json::array()))
          members += (members.empty() ? "" : ",") + h.get<std::string>();
        m.add({fmt::format("0x{:04x}", e.value("mlid", 0)), ports.empty() ? "none" : ports, members});
      }
      m.print(std::cout);
    }
    return 0;
  });
}

void add_routes_commands(CLI::App& app, Dispatch& d) {
  auto routes_switch = std::make_shared<std::string>();
  auto* routes = app.add_subcommand(
      "routes", "Show a switch's forwarding table: an IB switch's LFT, an Ethernet switch's FDB and IPv4 routes.");
  routes->add_option("switch", *routes_switch, "the switch (as named in the config)")->required();
  routes->footer(
      "COLUMNS\n"
      "  LID          a vHCA's base LID (with LMC > 0 its whole range is routed alike)\n"
      "  DESTINATION  the vHCA that LID belongs to\n"
      "  PORT         the egress port the subnet manager programmed; none: no route (the\n"
      "               vHCA's link is down), a packet to it is a PortRcvSwitchRelayErrors drop\n\n"
      "The header line names the routing algorithm and the subnet manager's last sweep.\n"
      "With UD multicast groups joined (ibv_attach_mcast), the MFT follows, as `ibroute -M`:\n"
      "  MLID         the group's multicast LID\n"
      "  PORTS        the ports a packet to it leaves by (never its ingress port); none: off the tree\n"
      "  MEMBERS      the vHCAs joined (an SA MCMemberRecord join, or attaching a UD QP)\n\n"
      "ETHERNET SWITCHES\n"
      "  An Ethernet switch is a learning bridge: its FDB is what it learned from source\n"
      "  addresses (and the config's static entries), as `bridge fdb show` lists it.\n"
      "  VLAN         the 802.1Q VLAN the entry is for (1: untagged hosts)\n"
      "  MAC          the station's address\n"
      "  PORT         where frames to it go; unknown destinations are flooded in their VLAN\n"
      "  TYPE         learned (ages out after the switch's ageing time of silence) or static\n"
      "  AGE          time since the station last sent a frame\n"
      "  STATION      the vHCA with that MAC, if any\n"
      "  The last line counts learning, moves, ageing, flooding and the frames dropped by\n"
      "  VLAN ingress filtering or because the destination sits behind the ingress port.\n\n"
      "ROUTING ETHERNET SWITCHES\n"
      "  A switch with a router (a leaf or spine of configs/leaf-spine.yaml) then shows its\n"
      "  IPv4 table, as `ip route` lists it, longest prefix first:\n"
      "  DESTINATION  the prefix (- on the further members of an ECMP group)\n"
      "  TYPE         connected (the gateway's subnet: hosts found by ARP), via (one next\n"
      "               hop) or ecmp (a hash of addresses and UDP ports picks the member, so a\n"
      "               RoCE QP keeps one path)\n"
      "  VIA PORT     the routed port to the next hop\n"
      "  NEXT HOP     the neighbouring router and its MAC\n"
      "  LINK         up, or down (the router skips a member whose link is down)\n"
      "  then the hosts the gateway resolved (ip neigh) and what the router counted: packets\n"
      "  routed, dropped by cause, and its ARP.");
  set_handler(routes, d, [routes_switch](const Globals& g) { return cmd_routes(g, *routes_switch); });
}

}  // namespace vf::ctl
