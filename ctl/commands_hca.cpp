// `fabricctl hca list`: one line per vHCA, like `ibstat -s` / `ip -br link`.
#include "ctl/commands_common.hpp"

namespace vf::ctl {
namespace {

// IB ports are addressed by LID; RoCE ports by GID, and the IPv4-mapped
// RoCE v2 GID is the one users pass to perftest's -x / pingpong's -g.
std::string lid_or_gid(const json& h) {
  if (text(h, "link_layer") == "infiniband") return text(h, "lid");
  if (h.contains("gids") && h["gids"].is_array()) {
    std::string first;
    for (const auto& g : h["gids"]) {
      if (!g.is_string()) continue;
      std::string s = g.get<std::string>();
      if (s.rfind("::ffff:", 0) == 0) return cell(s);
      if (first.empty()) first = cell(s);
    }
    return first;
  }
  return "";
}

std::string objects(const json& h, const char* key) {
  if (!h.contains("objects") || !h["objects"].is_object()) return "";
  return text(h["objects"], key);
}

}  // namespace

void print_hca_table(const json& hcas) {
  Table t({"NAME", "FABRIC", "LINK_LAYER", "PORT_STATE", "LID/GID", "MTU", "QPS"});
  for (const auto& h : hcas) {
    if (!h.is_object()) continue;
    t.add({text(h, "name"), text(h, "fabric"), text(h, "link_layer"), text(h, "port_state"), lid_or_gid(h),
           text(h, "active_mtu"), objects(h, "qps")});
  }
  t.print(std::cout);
}

int cmd_hca_list(const Globals& g) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json hcas = c.call("hca.list");
    if (g.json) {
      print_json(hcas);
      return 0;
    }
    if (!hcas.is_array()) throw std::runtime_error("fabricd's hca.list reply is not a list");
    print_hca_table(hcas);
    return 0;
  });
}

}  // namespace vf::ctl
