// `fabricctl qp list [HCA]` (rdma-tool's `rdma resource show qp`, for the
// vHCAs) and `fabricctl hca show HCA` (one vHCA: identity, port, objects in
// use against the device's limits).
#include "ctl/commands_common.hpp"

namespace vf::ctl {

int cmd_qp_list(const Globals& g, const std::string& hca) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    json args = json::object();
    if (!hca.empty()) args["hca"] = hca;
    const json qps = c.call("qp.list", args);
    if (g.json) {
      print_json(qps);
      return 0;
    }
    if (!qps.is_array()) throw std::runtime_error("fabricd's qp.list reply is not a list");
    Table t({"HCA", "QPN", "TYPE", "STATE", "DEST_QPN", "SQ_PSN", "UNACKED", "EPSN", "OUTSTANDING", "RETRIES",
             "PID", "COMM"});
    for (const json& q : qps) {
      // RC: retries left of retry_cnt, as a requester would count them down.
      const std::string retries =
          q.contains("retry_cnt") ? text(q, "retries_left") + "/" + text(q, "retry_cnt") : std::string();
      t.add({cell(text(q, "hca")), text(q, "qpn"), text(q, "type"), text(q, "state"), text(q, "dest_qpn"),
             text(q, "sq_psn"), text(q, "snd_una"), text(q, "epsn"), text(q, "outstanding"), retries,
             text(q, "pid"), cell(text(q, "comm"), 16)});
    }
    if (t.empty()) std::cout << "no QPs" << (hca.empty() ? "" : " on " + cell(hca)) << '\n';
    else t.print(std::cout);
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

}  // namespace vf::ctl
