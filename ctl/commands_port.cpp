// `fabricctl port set <hca> state down|up`: the operator's switch on a vHCA's
// port, in `ip link set <dev> down` style. Prints the resulting state.
// `fabricctl port show PORT`: one vHCA or switch port, as `ibportstate` and
// `perfquery` would show it, with the queue, wait and credits of every class.
#include "ctl/commands_common.hpp"

namespace vf::ctl {

namespace {
// "3", "3,4" or "off" -> [3], [3, 4], []; throws on anything else.
json priority_list(const std::string& v) {
  json out = json::array();
  if (v == "off") return out;
  size_t at = 0;
  while (at <= v.size()) {
    const size_t comma = std::min(v.find(',', at), v.size());
    const std::string p = v.substr(at, comma - at);
    if (p.size() != 1 || p[0] < '0' || p[0] > '7')
      throw std::runtime_error("pfc_storm takes priorities 0 to 7 (3 or 3,4) or off, not '" + v + "'");
    out.push_back(p[0] - '0');
    at = comma + 1;
  }
  return out;
}
}  // namespace

int cmd_port_set(const Globals& g, const std::string& hca, const std::string& attr, const std::string& value) {
  // The value is checked before fabricd is asked (a usage error, exit 2).
  json prios;
  try {
    if (attr == "pfc_storm") prios = priority_list(value);
    else if (value != "down" && value != "up") throw std::runtime_error("state is down or up, not '" + value + "'");
  } catch (const std::exception& e) {
    std::cerr << "fabricctl: port set: " << e.what() << '\n';
    return 2;
  }
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    if (attr == "pfc_storm") {
      json r = c.call("hca.port.set", {{"hca", hca}, {"pfc_storm", prios}});
      if (g.json) {
        print_json(r);
        return 0;
      }
      const json& p = r["pfc_storm"];
      std::cout << text(r, "hca") << ": "
                << (p.empty() ? std::string("PFC storm off") : "holding XOFF on priorities " + p.dump()) << '\n';
      return 0;
    }
    json r = c.call("hca.port.set", {{"hca", hca}, {"state", value}});
    if (g.json) {
      print_json(r);
      return 0;
    }
    std::cout << text(r, "hca") << ": port 1 " << text(r, "port_state");
    // IB: the link trained; the subnet manager's sweep makes the port ACTIVE.
    if (text(r, "port_state") == "INIT") std::cout << " (the subnet manager activates it)";
    std::cout << '\n';
    return 0;
  });
}

namespace {

std::string rate_text(uint64_t bps) {
  char b[32];
  if (bps % 1'000'000'000 == 0) std::snprintf(b, sizeof b, "%llu Gb/s", (unsigned long long)(bps / 1'000'000'000));
  else std::snprintf(b, sizeof b, "%.3g Gb/s", double(bps) / 1e9);
  return b;
}

std::string micros(const json& ns) {
  if (!ns.is_number()) return "";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", ns.get<double>() / 1000);
  return b;
}

}  // namespace

int cmd_port_show(const Globals& g, const std::string& port) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json r = c.call("port.show", {{"port", port}});
    if (g.json) {
      print_json(r);
      return 0;
    }
    const json link = r.value("link", json::object());
    std::cout << text(r, "port") << " (fabric " << text(r, "fabric") << "): " << text(r, "state");
    if (r.contains("phys_state")) std::cout << " (" << text(r, "phys_state") << ")";
    if (r.value("linked", false)) {
      std::cout << ", link to " << text(r, "peer") << (r.value("link_up", false) ? "" : " (down)") << ", "
                << rate_text(link.value("rate_bps", uint64_t(0))) << ", " << text(link, "delay_ns") << " ns, MTU "
                << text(link, "mtu");
    } else {
      std::cout << ", not cabled";
    }
    std::cout << '\n';
    const json k = r.value("counters", json::object());
    std::cout << "  PortXmitPkts " << text(k, "PortXmitPkts") << "  PortRcvPkts " << text(k, "PortRcvPkts")
              << "  PortXmitDiscards " << text(k, "PortXmitDiscards") << "  PortRcvErrors " << text(k, "PortRcvErrors")
              << "  PortXmitWait " << micros(k.value("PortXmitWait", json())) << " us  LinkDownedCounter "
              << text(k, "LinkDownedCounter") << "\n";
    Table t({"CLASS", "QUEUED", "XMIT_PKTS", "DISCARDS", "WAIT_US", "CREDITS", "BUFFER", "USED", "PEAK"});
    const json classes = r.value("classes", json::array());
    for (const json& cls : classes) {
      const json cr = cls.value("credits", json::object());
      t.add({text(cls, "class"), text(cls, "depth_pkts"), text(cls, "xmit_pkts"), text(cls, "xmit_discards"),
             micros(cls.value("xmit_wait", json())), text(cr, "credits"), text(cr, "buffer_blocks"),
             text(cr, "used_blocks"), text(cr, "peak_blocks")});
    }
    t.print(std::cout);
    return 0;
  });
}

}  // namespace vf::ctl
