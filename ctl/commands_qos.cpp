// `fabricctl qos show PORT` and `fabricctl qos set PORT [sl2vl SL:VL,...]
// [vlarb_high VL:W,...] [vlarb_low VL:W,...] [high_limit N]`: an IB port's
// VL record in the words of opensm's QoS policy; an Ethernet port's trust,
// DSCP map, PFC, ETS (prio_tc, tsa, tc_bw) and a vHCA's DCQCN in mlnx_qos's
// and mlx5's.
#include <cstdlib>
#include <memory>
#include <sstream>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"
#include "daemon/config/units.hpp"

namespace vf::ctl {
namespace {

int qos_usage(const std::string& why) {
  std::cerr << "fabricctl: qos set: " << why << "\n"
            << "hint: IB: fabricctl qos set PORT [sl2vl SL:VL,...] [vlarb_high VL:W,...] [vlarb_low VL:W,...] "
               "[high_limit N], e.g. qos set vib0 sl2vl 1:1 vlarb_low 0:32,1:32; Ethernet: [prio_tc TC,x8] "
               "[tsa ets|strict,x8] [tc_bw PCT,x8] [dcqcn on|off] [min_time_between_cnps T] [rpg_time_reset T] "
               "[rpg_ai_rate R] [rpg_hai_rate R], e.g. qos set sw/1 tc_bw 70,30,0,0,0,0,0,0\n";
  return 2;
}

// "A:B,C:D" -> pairs of whole numbers; false when malformed.
bool pairs(const std::string& s, std::vector<std::pair<unsigned long, unsigned long>>& out) {
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = std::min(s.find(',', at), s.size());
    const std::string item = s.substr(at, comma - at);
    const size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size()) return false;
    char* end = nullptr;
    const unsigned long a = std::strtoul(item.c_str(), &end, 10);
    if (end != item.c_str() + colon) return false;
    const unsigned long b = std::strtoul(item.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || item[colon + 1] == '-' || item[0] == '-') return false;
    out.push_back({a, b});
    at = comma + 1;
  }
  return !out.empty();
}

std::string vlarb_text(const json& list) {
  std::string s;
  for (const json& e : list) s += (s.empty() ? "" : " ") + std::string("VL") + text(e, "vl") + ":" + text(e, "weight");
  return s.empty() ? "-" : s;
}

std::string bytes_or_dash(const json& o, const char* key) { return o.contains(key) ? text(o, key) : "-"; }

// "100 ms", "1.5 ms", "500 us".
std::string time_text(double ns) {
  char b[32];
  if (ns >= 1e6)
    std::snprintf(b, sizeof b, "%g ms", ns / 1e6);
  else
    std::snprintf(b, sizeof b, "%g us", ns / 1e3);
  return b;
}

// mlnx_qos's layout: the PFC vector by priority, the DSCP map by priority,
// then what only an emulator can show -- each lossless group's thresholds
// and use, and the delay model behind its headroom.
void print_eth_qos(const json& r) {
  std::cout << cell(text(r, "port")) << " (fabric " << cell(text(r, "fabric")) << "): Ethernet, trust "
            << text(r, "trust") << '\n';
  const json pfc = r.value("pfc", json::object());
  auto row = [&](const char* title, const char* key) {
    std::string line = std::string("\t") + title;
    line.append(12 - std::string(title).size(), ' ');
    std::vector<bool> on(8, false);
    for (const json& p : pfc.value(key, json::array()))
      if (p.is_number_unsigned() && p.get<unsigned>() < 8) on[p.get<unsigned>()] = true;
    for (unsigned i = 0; i < 8; ++i) line += std::string(i ? "   " : "") + (on[i] ? "1" : "0");
    std::cout << line << '\n';
  };
  std::cout << "PFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n";
  row("enabled", "enable");
  row("paused", "paused");
  row("xoff sent", "xoff");
  if (!pfc.value("stormed", json::array()).empty()) row("stormed", "stormed");
  std::cout << "dscp2prio mapping:\n";
  const json map = r.value("dscp2prio", json::array());
  for (unsigned prio = 0; prio < 8; ++prio) {
    std::string line = "\tprio:" + std::to_string(prio) + " dscp:";
    for (size_t d = map.size(); d-- > 0;)
      if (map[d].is_number_unsigned() && map[d].get<unsigned>() == prio) {
        char b[24];
        std::snprintf(b, sizeof b, "%02zu,", d);
        line += b;
      }
    std::cout << line << '\n';
  }
  for (const json& tc : r.value("ets", json::object()).value("tcs", json::array())) {
    std::cout << "tc: " << text(tc, "tc") << " ratelimit: unlimited, tsa: " << text(tc, "tsa");
    if (tc.value("tsa", "") == "ets") std::cout << ", bw: " << text(tc, "bw") << '%';
    std::cout << "\n\t priority: ";
    for (const json& p : tc.value("priorities", json::array())) std::cout << ' ' << p.dump();
    std::cout << '\n';
  }
  if (r.contains("dcqcn")) {
    const json& d = r["dcqcn"];
    std::cout << "DCQCN " << (d.value("enabled", false) ? "on" : "off") << ": line rate "
              << text(d, "line_rate_mbps") << " Mb/s, min_time_between_cnps " << time_text(d.value("min_time_between_cnps_ns", 0.0))
              << ", rpg_time_reset " << time_text(d.value("rpg_time_reset_ns", 0.0)) << ", rpg_ai_rate "
              << text(d, "rpg_ai_rate_mbps") << " Mb/s, rpg_hai_rate " << text(d, "rpg_hai_rate_mbps")
              << " Mb/s, CNPs on DSCP " << text(d, "cnp_dscp") << '\n';
  }
  const double pause_us = r.value("pause_time_ns", 0.0) / 1e3;
  const double watchdog = r.value("pfc_watchdog_ns", 0.0);
  std::cout << "pause_quanta " << text(r, "pause_quanta") << " (" << pause_us << " us at the link's rate), response "
            << r.value("pfc_response_ns", 0.0) << " ns, watchdog "
            << (watchdog > 0 ? time_text(watchdog) : std::string("off")) << '\n';
  Table t({"PRIO", "XOFF", "XON", "HEADROOM", "USED", "HEADROOM_USED", "PEAK", "TX_PAUSE", "RX_PAUSE", "OVERFLOW"});
  for (const json& p : pfc.value("priorities", json::array()))
    if (p.value("lossless", false) || p.value("rx_pause", 0) || p.value("buffer_used", 0))
      t.add({text(p, "priority"), bytes_or_dash(p, "xoff_bytes"), bytes_or_dash(p, "xon_bytes"),
             bytes_or_dash(p, "headroom_bytes"), text(p, "buffer_used"), text(p, "headroom_used"),
             text(p, "buffer_peak"), text(p, "tx_pause"), text(p, "rx_pause"), text(p, "headroom_overflow")});
  if (!t.empty()) t.print(std::cout);
  const json h = r.value("headroom_model", json::object());
  if (!h.empty())
    std::cout << "headroom model (802.1Qbb, bytes): frame " << text(h, "trigger") << " + wait " << text(h, "wait")
              << " + PFC " << text(h, "pause") << " + cable " << text(h, "cable") << " + interface "
              << text(h, "interface") << " + response " << text(h, "response") << " + last frame " << text(h, "last")
              << " = " << text(h, "total") << '\n';
  if (r.value("headroom_below_model", false))
    std::cout << "warning: the configured headroom is below the model: expect headroom-overflow drops under load\n";
}

void print_qos(const json& r) {
  if (r.value("link_layer", "") == "ethernet") return print_eth_qos(r);
  std::cout << cell(text(r, "port")) << " (fabric " << cell(text(r, "fabric")) << "): " << text(r, "operational_vls")
            << " operational data VLs\n";
  std::string sls = "  SL  ", vls = "  VL  ";
  const json map = r.value("sl2vl", json::array());
  for (size_t sl = 0; sl < map.size(); ++sl) {
    char a[32], b[32];
    std::snprintf(a, sizeof a, "%3zu", sl);
    std::snprintf(b, sizeof b, "%3s", map[sl].is_number() && map[sl].get<int>() == 15 ? "-" : map[sl].dump().c_str());
    sls += a;
    vls += b;
  }
  std::cout << sls << '\n' << vls << "   (-: VL15, the SL may not use this port)\n";
  const json arb = r.value("vl_arbitration", json::object());
  std::cout << "  vlarb_high " << vlarb_text(arb.value("high", json::array())) << "  (high_limit "
            << text(arb, "high_limit") << ")\n  vlarb_low  " << vlarb_text(arb.value("low", json::array())) << '\n';
}

}  // namespace

int cmd_qos_show(const Globals& g, const std::string& port) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    const json r = c.call("qos.show", {{"port", port}});
    if (g.json) print_json(r);
    else print_qos(r);
    return 0;
  });
}

namespace {
std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; std::getline(in, w, ',');) out.push_back(w);
  return out;
}

// prio_tc / tc_bw: eight whole numbers; tsa: eight of ets|strict; dcqcn and
// its parameters with units (sent as ns and Mb/s). False: not one of them,
// or a malformed value.
bool eth_attr(const std::string& key, const std::string& v, json& args) {
  const auto parts = split(v);
  if (key == "prio_tc" || key == "tc_bw") {
    if (parts.size() != 8) return false;
    json list = json::array();
    for (const auto& p : parts) {
      const auto n = units::parse_uint(p, key == "prio_tc" ? 7 : 100);
      if (!n) return false;
      list.push_back(*n);
    }
    args[key] = list;
  } else if (key == "tsa") {
    if (parts.size() != 8) return false;
    for (const auto& p : parts)
      if (p != "ets" && p != "strict") return false;
    args[key] = parts;
  } else if (key == "dcqcn") {
    if (v != "on" && v != "off") return false;
    args[key] = v;
  } else if (key == "min_time_between_cnps" || key == "rpg_time_reset") {
    const auto ns = units::parse_delay_ns(v, 100'000'000);
    if (!ns || !*ns) return false;
    args[key + "_ns"] = *ns;
  } else if (key == "rpg_ai_rate" || key == "rpg_hai_rate") {
    const auto bps = units::parse_rate_bps(v);
    if (!bps || *bps < 1'000'000) return false;
    args[key + "_mbps"] = *bps / 1'000'000;
  } else {
    return false;
  }
  return true;
}
}  // namespace

int cmd_qos_set(const Globals& g, const std::vector<std::string>& words) {
  if (words.size() < 3 || words.size() % 2 == 0) return qos_usage("give the port, then attribute value pairs");
  json args = {{"port", words[0]}};
  for (size_t i = 1; i + 1 < words.size(); i += 2) {
    const std::string& key = words[i];
    const std::string& v = words[i + 1];
    std::vector<std::pair<unsigned long, unsigned long>> p;
    if (key == "high_limit") {
      char* end = nullptr;
      const unsigned long n = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || v[0] == '-' || n > 255) return qos_usage("high_limit is 0..255");
      args["high_limit"] = n;
    } else if (key == "sl2vl") {
      if (!pairs(v, p)) return qos_usage("sl2vl is SL:VL[,SL:VL...]");
      json m = json::object();
      for (const auto& [sl, vl] : p) m[std::to_string(sl)] = vl;
      args["sl2vl"] = m;
    } else if (key == "vlarb_high" || key == "vlarb_low") {
      if (!pairs(v, p)) return qos_usage(key + " is VL:WEIGHT[,VL:WEIGHT...]");
      json list = json::array();
      for (const auto& [vl, w] : p) list.push_back({{"vl", vl}, {"weight", w}});
      args[key] = list;
    } else if (!eth_attr(key, v, args)) {
      return qos_usage("unknown attribute or bad value: '" + key + " " + v + "'");
    }
  }
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    const json r = c.call("qos.set", args);
    if (g.json) print_json(r);
    else print_qos(r);
    return 0;
  });
}

void add_qos_commands(CLI::App& app, Dispatch& d) {
  auto* qos = add_group(app, "qos", "Port QoS: IB VL records (SL to VL, VL arbitration); Ethernet trust, PFC, ETS, DCQCN.");
  auto qos_show_port = std::make_shared<std::string>();
  auto* qos_show = qos->add_subcommand("show", "Show a port's QoS: IB VLs and arbitration; Ethernet trust, PFC, ETS, DCQCN.");
  qos_show->add_option("port", *qos_show_port, "a vHCA (vib0) or a switch port (leaf0/3)")->required();
  qos_show->footer(
      "What the subnet manager programmed from the config's qos: section (or qos set since):\n"
      "  SL / VL       the SL to VL table: the VL an SL's packets take out of this port (for a\n"
      "                switch port, from every input); '-' is VL15: the SL may not use the port\n"
      "  vlarb_high    the high-priority arbitration list, VL:weight (64-byte units per turn)\n"
      "  high_limit    4 KiB units the high list may send before the low list's turn (255: no limit)\n"
      "  vlarb_low     the low-priority list\n"
      "An Ethernet port shows mlnx_qos's view: trust, the PFC vector and pause state, the DSCP\n"
      "map, each traffic class (tc: N, tsa, bw, its priorities), a RoCE vHCA's DCQCN knobs,\n"
      "each lossless priority's thresholds and use, and the 802.1Qbb headroom model.");
  set_handler(qos_show, d, [qos_show_port](const Globals& g) { return cmd_qos_show(g, *qos_show_port); });
  auto qos_words = std::make_shared<std::vector<std::string>>();
  auto* qos_set = qos->add_subcommand(
      "set", "Program a port: IB fabricctl qos set PORT [sl2vl SL:VL,...] [vlarb_high VL:W,...] [vlarb_low VL:W,...] "
             "[high_limit N]; Ethernet [prio_tc ...] [tsa ...] [tc_bw ...] [dcqcn on|off] [DCQCN knob VALUE]");
  qos_set->add_option("words", *qos_words, "PORT, then attribute value pairs")->required()->expected(3, 17);
  qos_set->footer(
      "Like an SMP from an operator's tool: sl2vl changes the listed SLs only; vlarb_high and\n"
      "vlarb_low replace their list (at most 8 entries); every VL must be one of the port's\n"
      "operational data VLs (sl2vl may also name 15: the SL may not use the port). As on a real\n"
      "subnet, the subnet manager programs a vHCA port from the config again when a sweep\n"
      "activates it (after its link went down and up); a switch port keeps what was set until\n"
      "fabricd restarts. Privileged: root, fabricd's user or daemon.admin_group.\n\n"
      "EXAMPLES\n"
      "  fabricctl qos set vib0 sl2vl 1:1,2:1\n"
      "  fabricctl qos set leaf0/5 vlarb_low 0:192,1:64\n"
      "  fabricctl qos set vib0 vlarb_high 1:16 high_limit 4\n\n"
      "ETHERNET (as mlnx_qos --prio_tc/--tsa/--tcbw and mlx5's ecn knobs, at run time)\n"
      "  prio_tc TC,x8     the traffic class of priorities 0..7\n"
      "  tsa ets|strict,x8 each class's selection: strict goes first (highest class first),\n"
      "                    ets shares what is left\n"
      "  tc_bw PCT,x8      the ets classes' shares, summing to 100 (a strict class: 0)\n"
      "  dcqcn on|off      a RoCE vHCA's DCQCN (reaction and notification point)\n"
      "  min_time_between_cnps T, rpg_time_reset T, rpg_ai_rate R, rpg_hai_rate R\n"
      "                    a vHCA's DCQCN parameters, e.g. 50us, 5Mbps\n"
      "  Trust, the DSCP map and PFC stay the config's (restart to change them).\n"
      "  fabricctl qos set sw/1 tsa ets,ets,ets,ets,ets,ets,strict,ets tc_bw 13,13,13,13,24,12,0,12\n"
      "  fabricctl qos set vroce0 dcqcn off\n"
      "  fabricctl qos set vroce0 rpg_ai_rate 10Mbps min_time_between_cnps 20us");
  set_handler(qos_set, d, [qos_words](const Globals& g) { return cmd_qos_set(g, *qos_words); });
}

}  // namespace vf::ctl
