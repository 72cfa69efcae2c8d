// `fabricctl qos show PORT` and `fabricctl qos set PORT [sl2vl SL:VL,...]
// [vlarb_high VL:W,...] [vlarb_low VL:W,...] [high_limit N]`: an IB port's
// VL record in the words of opensm's QoS policy.
#include <cstdlib>

#include "ctl/commands_common.hpp"

namespace vf::ctl {
namespace {

int usage(const std::string& why) {
  std::cerr << "fabricctl: qos set: " << why << "\n"
            << "hint: fabricctl qos set PORT [sl2vl SL:VL,...] [vlarb_high VL:W,...] [vlarb_low VL:W,...] "
               "[high_limit N], e.g. qos set vib0 sl2vl 1:1 vlarb_low 0:32,1:32\n";
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

void print_qos(const json& r) {
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

int cmd_qos_set(const Globals& g, const std::vector<std::string>& words) {
  if (words.size() < 3 || words.size() % 2 == 0) return usage("give the port, then attribute value pairs");
  json args = {{"port", words[0]}};
  for (size_t i = 1; i + 1 < words.size(); i += 2) {
    const std::string& key = words[i];
    const std::string& v = words[i + 1];
    std::vector<std::pair<unsigned long, unsigned long>> p;
    if (key == "high_limit") {
      char* end = nullptr;
      const unsigned long n = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || v[0] == '-' || n > 255) return usage("high_limit is 0..255");
      args["high_limit"] = n;
    } else if (key == "sl2vl") {
      if (!pairs(v, p)) return usage("sl2vl is SL:VL[,SL:VL...]");
      json m = json::object();
      for (const auto& [sl, vl] : p) m[std::to_string(sl)] = vl;
      args["sl2vl"] = m;
    } else if (key == "vlarb_high" || key == "vlarb_low") {
      if (!pairs(v, p)) return usage(key + " is VL:WEIGHT[,VL:WEIGHT...]");
      json list = json::array();
      for (const auto& [vl, w] : p) list.push_back({{"vl", vl}, {"weight", w}});
      args[key] = list;
    } else {
      return usage("unknown attribute '" + key + "'");
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

}  // namespace vf::ctl
