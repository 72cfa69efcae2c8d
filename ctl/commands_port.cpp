// `fabricctl port set <hca> state down|up`: the operator's switch on a vHCA's
// port, in `ip link set <dev> down` style. Prints the resulting state.
// `fabricctl port show PORT`: one vHCA or switch port, as `ibportstate` and
// `perfquery` would show it, with the queue, wait and credits of every class.
#include <memory>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

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

namespace {
struct PortSetArgs {
  std::string hca, attribute, value;
};
}  // namespace

void add_port_commands(CLI::App& app, Dispatch& d) {
  auto* port = add_group(app, "port", "Ports: vHCA ports (set, show) and switch ports (show).");
  auto set_args = std::make_shared<PortSetArgs>();
  auto* port_set = port->add_subcommand(
      "set", "Take a vHCA's port down or up, or make its NIC storm PFC: fabricctl port set HCA state down|up | "
             "pfc_storm PRIOS|off");
  port_set->add_option("hca", set_args->hca, "the vHCA (see fabricctl hca list)")->required();
  port_set->add_option("attribute", set_args->attribute, "state or pfc_storm")
      ->required()
      ->check(CLI::IsMember({"state", "pfc_storm"}));
  port_set->add_option("value", set_args->value, "state: down or up; pfc_storm: priorities (3 or 3,4) or off")->required();
  port_set->footer(
      "Like `ip link set DEV down|up` on a real port: while down the port passes no packets (RC\n"
      "QPs time out as on hardware), ibv_query_port and sysfs ports/1/state say DOWN, and every\n"
      "program with the vHCA open gets IBV_EVENT_PORT_ERR. Back up, an InfiniBand port trains\n"
      "to INIT and the subnet manager's next sweep (about a millisecond later) makes it ACTIVE,\n"
      "then IBV_EVENT_PORT_ACTIVE; a RoCE port is ACTIVE at once. The switch port at the\n"
      "other end goes down and up with it (LinkDownedCounter on both).\n\n"
      "pfc_storm PRIOS|off (RoCE vHCAs) injects the classic PFC storm: the vHCA's NIC behaves\n"
      "as if its receive pipeline were stuck and holds XOFF on those priorities, refreshed,\n"
      "whatever it holds, until `pfc_storm off`. Its switch port stops sending them; with\n"
      "qos: {pfc_watchdog: T} the switch port's watchdog declares a storm after T paused,\n"
      "ignores the pauses and sends (a real NIC would drop what it cannot take; the emulated one\n"
      "takes everything), logs it and sends a pfc-storm event, and\n"
      "recovers once no pause came for T (prioN_pause_storm_events in fabricctl counters counts it).\n\n"
      "EXAMPLES\n"
      "  fabricctl port set vib0 state down\n"
      "  fabricctl port set vib0 state up\n"
      "  fabricctl port set vroce0 pfc_storm 3\n"
      "  fabricctl port set vroce0 pfc_storm off");
  set_handler(port_set, d, [set_args](const Globals& g) {
    return cmd_port_set(g, set_args->hca, set_args->attribute, set_args->value);
  });

  auto port_show_name = std::make_shared<std::string>();
  auto* port_show = port->add_subcommand("show", "Show one port: state, link, counters, and per class its queue, wait and credits.");
  port_show->add_option("port", *port_show_name, "a vHCA (vib0) or a switch port (leaf0/3)")->required();
  port_show->footer(
      "The first line: state (a vHCA's IBA PortState and PhysState; a switch port is ACTIVE or\n"
      "DOWN with its link), the port at the other end of the link, rate, delay and MTU. The\n"
      "second: the PMA counters an operator looks at first (PortXmitWait in microseconds).\n\n"
      "COLUMNS (one row per class: IB the link's data VLs, vl15 and link_ctrl; Ethernet the\n"
      "priorities)\n"
      "  QUEUED     frames waiting in the egress queue now\n"
      "  XMIT_PKTS  frames sent; DISCARDS: dropped on the way out\n"
      "  WAIT_US    time the port waited with this class held by flow control (PortVLXmitWait)\n"
      "  CREDITS    IB: 64-byte blocks this port may still send on the VL (FCCL - FCTBS)\n"
      "  BUFFER     IB: this port's receive buffer for the VL, in 64-byte blocks; USED now,\n"
      "             PEAK the most ever held\n\n"
      "EXAMPLES\n"
      "  fabricctl port show vib0\n"
      "  fabricctl port show leaf0/5\n"
      "  fabricctl --json port show leaf0/5    # also FCTBS/FCCL/ABR per VL and FCP counts");
  set_handler(port_show, d, [port_show_name](const Globals& g) { return cmd_port_show(g, *port_show_name); });
}

}  // namespace vf::ctl
