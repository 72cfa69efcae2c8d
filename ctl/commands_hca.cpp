// `fabricctl hca list`: one line per vHCA, like `ibstat -s` / `ip -br link`;
// `fabricctl hca show HCA`: one vHCA, its identity, port, and objects in use
// against the device's limits.
#include <memory>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

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

int cmd_hca_show(const Globals& g, const std::string& name) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    const json hcas = c.call("hca.list");
    if (!hcas.is_array()) throw std::runtime_error("fabricd's hca.list reply is not a list");
    const json* h = nullptr;
    for (const json& x : hcas)
      if (x.value("name", "") == name) h = &x;
    if (!h) {
      std::cerr << "fabricctl: no vHCA named '" << cell(name) << "'\nhint: fabricctl hca list shows the vHCAs\n";
      return 1;
    }
    if (g.json) {
      print_json(*h);
      return 0;
    }
    std::cout << cell(text(*h, "name")) << " (fabric " << cell(text(*h, "fabric")) << ", " << text(*h, "link_layer")
              << ")\n  node_guid " << text(*h, "node_guid") << "  fw_ver " << cell(text(*h, "fw_ver"))
              << "\n  port 1: " << text(*h, "port_state") << "  LID " << text(*h, "lid") << "  active_mtu "
              << text(*h, "active_mtu") << '\n';
    for (const json& gid : h->value("gids", json::array()))
      if (gid.is_string()) std::cout << "  gid " << cell(gid.get<std::string>()) << '\n';
    if (h->contains("ip")) {
      std::cout << "  ip " << text(*h, "ip");
      if (const json nd = h->value("netdev", json::object()); !nd.empty())
        std::cout << " on interface " << cell(text(nd, "name")) << " (mtu " << text(nd, "mtu") << ", "
                  << text(nd, "discarded_packets") << " packets from the host discarded)";
      std::cout << '\n';
    }
    const json objects = h->value("objects", json::object()), limits = h->value("limits", json::object());
    std::cout << "  clients (open contexts): " << text(objects, "clients") << '\n';
    Table t({"OBJECT", "IN_USE", "LIMIT"});
    for (const char* k : {"pds", "mrs", "cqs", "qps", "srqs", "ahs"}) t.add({k, text(objects, k), text(limits, k)});
    t.print(std::cout);
    std::cout << "  per object: qp_wr " << text(limits, "qp_wr") << ", cqe " << text(limits, "cqe") << ", srq_wr "
              << text(limits, "srq_wr") << ", mr_size " << text(limits, "mr_size") << ", msg_size "
              << text(limits, "msg_size") << '\n';
    return 0;
  });
}

void add_hca_commands(CLI::App& app, Dispatch& d) {
  auto* hca = add_group(app, "hca", "Virtual HCAs.");
  auto* hca_list = hca->add_subcommand("list", "List the vHCAs: fabric, link layer, port state, LID/GID, MTU.");
  hca_list->footer(
      "COLUMNS\n"
      "  NAME        RDMA device name (ibv_devices, -d options)\n"
      "  FABRIC      the fabric it is in (the config's fabrics: name)\n"
      "  LINK_LAYER  infiniband or ethernet (RoCEv2)\n"
      "  PORT_STATE  IB port state of port 1 (ACTIVE, DOWN, ...)\n"
      "  LID/GID     IB: the port's LID. RoCE: the IPv4-mapped RoCE v2 GID (use its index,\n"
      "              1, with perftest -x or pingpong -g)\n"
      "  MTU         active path MTU in bytes (RoCE: what fits the Ethernet MTU)\n"
      "  QPS         queue pairs open on the vHCA");
  set_handler(hca_list, d, cmd_hca_list);

  auto hca_show_name = std::make_shared<std::string>();
  auto* hca_show = hca->add_subcommand("show", "Show one vHCA: identity, port, GIDs, and objects in use against its limits.");
  hca_show->add_option("hca", *hca_show_name, "the vHCA (see fabricctl hca list)")->required();
  hca_show->footer(
      "The objects its programs hold now (PDs, MRs, CQs, QPs, SRQs, AHs) beside the limits\n"
      "ibv_query_device reports, and the per-object ceilings (WRs per QP, CQEs per CQ, ...).\n"
      "--json prints the vHCA's hca.list entry: also every counter.");
  set_handler(hca_show, d, [hca_show_name](const Globals& g) { return cmd_hca_show(g, *hca_show_name); });
}

}  // namespace vf::ctl
