// `fabricctl cm list` (rdma-tool's `rdma resource show cm_id`, for the
// vHCAs): the rdma_cm ids apps hold, with state, addresses and owner.
#include "ctl/commands_common.hpp"

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

}  // namespace vf::ctl
