// `fabricctl qp list [HCA]`: rdma-tool's `rdma resource show qp`, for the
// vHCAs.
#include <memory>

#include "ctl/commands_common.hpp"
#include "ctl/subcommands.hpp"

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

void add_qp_commands(CLI::App& app, Dispatch& d) {
  auto* qp = add_group(app, "qp", "Queue pairs of the vHCAs.");
  auto qp_hca = std::make_shared<std::string>();
  auto* qp_list = qp->add_subcommand("list", "List the QPs (of one vHCA): state, PSNs, outstanding work, retries, owner.");
  qp_list->add_option("hca", *qp_hca, "only this vHCA's QPs");
  qp_list->footer(
      "COLUMNS (`rdma resource show qp` for the vHCAs)\n"
      "  QPN          the QP number; TYPE RC, UC or UD; STATE RESET, INIT, RTR, RTS, SQD, SQE, ERR\n"
      "  DEST_QPN     RC/UC: the remote QP\n"
      "  SQ_PSN       the next PSN the requester sends; UNACKED (RC) the oldest PSN not yet\n"
      "               acknowledged: SQ_PSN - UNACKED packets are in flight\n"
      "  EPSN         the PSN the responder expects next\n"
      "  OUTSTANDING  send WRs taken from the send queue and not completed yet\n"
      "  RETRIES      RC: retries left of retry_cnt (counts down while a timeout or NAK repeats)\n"
      "  PID / COMM   the process that created the QP and its command name");
  set_handler(qp_list, d, [qp_hca](const Globals& g) { return cmd_qp_list(g, *qp_hca); });
}

}  // namespace vf::ctl
