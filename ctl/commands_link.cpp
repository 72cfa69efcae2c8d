// `fabricctl link set A [B] [state down|up] [rate R] [delay D] [loss P]
// [corrupt P] [seed N]` and
// `fabricctl routes SWITCH`: the fabric's cabling, its faults, and the
// forwarding the subnet manager programs over it.
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "ctl/commands_common.hpp"

namespace vf::ctl {

namespace {

bool is_key(const std::string& w) {
  return w == "state" || w == "rate" || w == "delay" || w == "loss" || w == "corrupt" || w == "duplicate" ||
         w == "reorder" || w == "seed";
}

// "1%" or "0.01" -> 0.01; nullopt unless a probability.
std::optional<double> parse_probability(const std::string& w) {
  const bool percent = !w.empty() && w.back() == '%';
  const std::string num = percent ? w.substr(0, w.size() - 1) : w;
  char* end = nullptr;
  const double v = std::strtod(num.c_str(), &end);
  if (num.empty() || *end != '\0') return std::nullopt;
  const double p = percent ? v / 100 : v;
  if (!(p >= 0 && p <= 1)) return std::nullopt;
  return p;
}

int usage(const std::string& why) {
  std::cerr << "fabricctl: link set: " << why << "\n"
            << "hint: fabricctl link set A [B] [state down|up] [rate R] [delay D] [loss P] [corrupt P] "
               "[duplicate P] [reorder P] [seed N], "
               "e.g. link set leaf0/5 state down, link set vib0 rate 10G delay 5us, link set vib0 loss 1% seed 7\n";
  return 2;
}

}  // namespace

int cmd_link_set(const Globals& g, const std::vector<std::string>& words) {
  // A [B] then attribute/value pairs: an odd count names the link by one end.
  const size_t k = words.size() % 2 ? 1 : 2;
  if (words.size() <= k) return usage("nothing to set");
  if (is_key(words[0]) || (k == 2 && is_key(words[1])))
    return usage("name the link first, by one end or by its two nodes; each attribute needs a value");
  json args = {{"a", words[0]}};
  if (k == 2) args["b"] = words[1];
  for (size_t i = k; i < words.size(); i += 2) {
    const std::string& key = words[i];
    if (!is_key(key)) return usage("unknown attribute '" + key + "'");
    if (i + 1 == words.size()) return usage(key + " needs a value");
    const std::string& v = words[i + 1];
    if (key == "state") {
      if (v != "up" && v != "down") return usage("state is up or down");
      args["state"] = v;
    } else if (key == "rate" || key == "delay") {
      args[key] = v;  // units are the daemon's to check ("10G", "5us"), as in the config
    } else if (key == "seed") {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || v[0] == '-') return usage("seed is a whole number");
      args["seed"] = uint64_t(n);
    } else {
      const auto p = parse_probability(v);
      if (!p) return usage(key + " is a probability: 0..1 or 0%..100%");
      args[key] = *p;
    }
  }
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json r = c.call("link.set", args);
    if (g.json) {
      print_json(r);
      return 0;
    }
    std::cout << text(r, "fabric") << ": link " << text(r, "a") << " - " << text(r, "b");
    if (r.contains("state")) {
      std::cout << ' ' << (text(r, "state") == "up" ? "UP" : "DOWN");
      if (r.value("changed", true) == false) std::cout << " (it already was)";
      else if (r.value("subnet_manager_sweeps", false)) std::cout << " (the subnet manager sweeps and reroutes)";
    }
    if (r.contains("rate_bps")) {
      char b[96];
      std::snprintf(b, sizeof b, ", %g Gb/s, delay %s ns", r.value("rate_bps", 0.0) / 1e9, text(r, "delay_ns").c_str());
      std::cout << b;
    }
    if (r.contains("impairment")) {
      const json im = r["impairment"];
      const double loss = im.value("loss", 0.0), corrupt = im.value("corrupt", 0.0),
                   dup = im.value("duplicate", 0.0), reorder = im.value("reorder", 0.0);
      if (loss == 0 && corrupt == 0 && dup == 0 && reorder == 0) {
        std::cout << ", clean (no loss, corruption, duplication or reordering)";
      } else {
        char b[192];
        std::snprintf(b, sizeof b, ", loss %g%% corrupt %g%%", loss * 100, corrupt * 100);
        std::cout << b;
        if (dup > 0 || reorder > 0) {
          std::snprintf(b, sizeof b, " duplicate %g%% reorder %g%%", dup * 100, reorder * 100);
          std::cout << b;
        }
        std::cout << " each way (seed " << text(im, "seed") << ")";
      }
    }
    std::cout << '\n';
    return 0;
  });
}

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

int cmd_sm_show(const Globals& g) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json r = c.call("sm.show", json::object());
    if (g.json) {
      print_json(r);
      return 0;
    }
    Table t({"FABRIC", "STATE", "SM_LID", "ON", "ROUTING", "SWEEPS", "LINKS_UP", "LFT_CHANGES", "UNROUTED"});
    for (const json& f : r) {
      const json last = f.value("last_sweep", json::object());
      std::string routing = text(f, "routing");
      if (f.contains("roots")) {
        routing += " (roots";
        for (const json& root : f["roots"]) routing += " " + (root.is_string() ? root.get<std::string>() : "?");
        routing += ")";
      }
      t.add({text(f, "fabric"), text(f, "state"), text(f, "sm_lid"), text(f, "sm_node"), routing, text(f, "sweeps"),
             text(last, "links_up") + "/" + text(last, "links"), text(last, "lft_changes"), text(last, "unrouted")});
    }
    if (t.empty()) {
      std::cout << "no InfiniBand fabric: Ethernet fabrics have no subnet manager\n";
      return 0;
    }
    t.print(std::cout);
    // The SA's multicast groups (saquery -g, in short).
    Table groups({"FABRIC", "MGID", "MLID", "Q_KEY", "P_KEY", "MEMBERS"});
    for (const json& f : r)
      for (const json& grp : f.value("mcast_groups", json::array())) {
        std::string members;
        for (const json& m : grp.value("members", json::array()))
          members += (members.empty() ? "" : ",") + text(m, "hca");
        groups.add({text(f, "fabric"), text(grp, "mgid"), fmt::format("0x{:04x}", grp.value("mlid", 0)),
                    text(grp, "qkey"), text(grp, "pkey"), members});
      }
    if (!groups.empty()) {
      std::cout << "\nSA multicast groups\n";
      groups.print(std::cout);
    }
    return 0;
  });
}

}  // namespace vf::ctl
