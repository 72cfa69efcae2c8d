// `fabricctl cm list` (rdma-tool's `rdma resource show cm_id`, for the
// vHCAs): the rdma_cm ids apps hold, with state, addresses and owner.
#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

namespace vf::ctl {

int cmd_cm_list(const Globals& g) {
  return guarded([&] {
    Client c(g.socket(), g.timeout);
    const json ids = c.call("cm.list");
    if (g.json) {
      print_json(ids);
      return 0;
    }
    if (!ids.is_array()) throw std::runtime_error("fabricd's cm.list reply is not a list");
    Table t({"ID", "HCA", "STATE", "PS", "TYPE", "SRC_ADDR", "DST_ADDR", "QPN", "DEST_QPN", "PID", "COMM"});
    for (const json& i : ids)
      t.add({text(i, "id"), cell(text(i, "hca")), text(i, "state"), text(i, "ps"), text(i, "qp_type"),
             text(i, "src_addr"), text(i, "dst_addr"), text(i, "qpn"), text(i, "dest_qpn"), text(i, "pid"),
             cell(text(i, "comm"), 16)});
    if (t.empty()) std::cout << "no rdma_cm ids\n";
    else t.print(std::cout);
    return 0;
  });
}

void add_cm_commands(CLI::App& app, Dispatch& d) {
  auto* cm = add_group(app, "cm", "The connection manager (rdma_cm) of the apps on the vHCAs.");
  auto* cm_list = cm->add_subcommand("list", "List the rdma_cm ids: state, addresses, QPs, owner.");
  cm_list->footer(
      "COLUMNS (`rdma resource show cm_id` for the vHCAs)\n"
      "  ID           the id's number (what librdmacm's commands name it by)\n"
      "  HCA          the vHCA it is bound or resolved to; empty: bound to a wildcard address\n"
      "  STATE        the kernel rdma_cm's names: IDLE, ADDR_BOUND, ADDR_QUERY, ADDR_RESOLVED,\n"
      "               ROUTE_QUERY, ROUTE_RESOLVED, LISTEN, CONNECT (REQ/REP on the wire),\n"
      "               CONNECT_REQUEST (a request the app has not accepted or rejected yet),\n"
      "               ESTABLISHED, DISCONNECT\n"
      "  PS / TYPE    port space (TCP, UDP, IB, IPOIB) and QP type (RC, UC, UD)\n"
      "  SRC_ADDR     the local address:port; DST_ADDR the peer's\n"
      "  QPN          the app's QP; DEST_QPN the peer's, once the handshake told it\n"
      "  PID / COMM   the process that opened the rdma_cm channel\n\n"
      "The CM messages each port sent and received are in `fabricctl hca show HCA --json`\n"
      "(cm_*) and /metrics (vfabric_cm_*).");
  set_handler(cm_list, d, cmd_cm_list);
}

}  // namespace vf::ctl
