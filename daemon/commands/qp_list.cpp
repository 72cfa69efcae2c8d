// `fabricctl qp list [HCA]`: every QP of the vHCAs -- number, type, state,
// PSNs, what is outstanding, retries left and the process that owns it --
// rdma-tool's `rdma resource show qp` for the emulated HCAs. The lcore copies
// the numbers; the owner's command name is read from /proc here.
#include <fstream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "daemon/commands/control_commands.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/service/daemon_state.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/fabric/topology.hpp"

namespace vf {
namespace {
using control::json;

const char* type_name(ibv_qp_type t) {
  switch (t) {
    case IBV_QPT_RC: return "RC";
    case IBV_QPT_UC: return "UC";
    case IBV_QPT_UD: return "UD";
    default: return "OTHER";
  }
}

const char* state_name(ibv_qp_state s) {
  switch (s) {
    case IBV_QPS_RESET: return "RESET";
    case IBV_QPS_INIT: return "INIT";
    case IBV_QPS_RTR: return "RTR";
    case IBV_QPS_RTS: return "RTS";
    case IBV_QPS_SQD: return "SQD";
    case IBV_QPS_SQE: return "SQE";
    case IBV_QPS_ERR: return "ERR";
    default: return "UNKNOWN";
  }
}

// The process's command name (what ps shows), or "" once it is gone.
std::string comm_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
  std::string s;
  std::getline(f, s);
  return s;
}

struct HcaQps {
  std::string hca;
  std::vector<engine::Hca::QpView> qps;
};

json qp_json(const std::string& hca, const engine::Hca::QpView& q, std::map<pid_t, std::string>& comms) {
  auto [it, fresh] = comms.try_emplace(q.pid);
  if (fresh) it->second = comm_of(q.pid);
  json one = {{"hca", hca},
              {"qpn", q.qpn},
              {"type", type_name(q.type)},
              {"state", state_name(q.state)},
              {"pid", q.pid},
              {"comm", it->second},
              {"sq_psn", q.sq_psn},
              {"epsn", q.epsn},
              {"outstanding", q.outstanding},
              {"mtu", q.mtu}};
  if (q.type == IBV_QPT_RC || q.type == IBV_QPT_UC) {
    one["dest_qpn"] = q.dest_qpn;
    one["dlid"] = q.dlid;
  }
  if (q.type == IBV_QPT_RC) {
    one["snd_una"] = q.snd_una;
    one["retry_cnt"] = q.retry_cnt;
    one["retries_left"] = q.retries_left;
    one["rnr_retry"] = q.rnr_retry;
    one["rnr_retries_left"] = q.rnr_retries_left;
    one["timeout_ns"] = q.timeout_ns;
  }
  return one;
}

void qp_list(DaemonState& d, const json& args, control::Reply reply) {
  const std::string name = args.contains("hca") && args["hca"].is_string() ? args["hca"].get<std::string>() : "";
  std::vector<size_t> which;
  const auto& vhcas = d.topology().vhcas();
  for (size_t i = 0; i < vhcas.size(); ++i)
    if (name.empty() || vhcas[i].name == name) which.push_back(i);
  if (which.empty()) return reply.error("no vHCA named '" + name + "'", "fabricctl hca list shows the vHCAs");
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, which, reply] {
    std::vector<HcaQps> all;
    for (size_t i : which) all.push_back({dp->topology().vhcas()[i].name, dp->topology().engine(i).qp_views()});
    reply.ok_with([all = std::move(all)] {
      json out = json::array();
      std::map<pid_t, std::string> comms;
      for (const HcaQps& h : all)
        for (const auto& q : h.qps) out.push_back(qp_json(h.hca, q, comms));
      return out;
    });
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

}  // namespace

void register_qp_commands(control::ControlServer& server, DaemonState& daemon) {
  server.add_async_command(
      "qp.list", [&daemon](const json& args, control::Reply reply) { qp_list(daemon, args, std::move(reply)); },
      "{hca?}: every QP (of one vHCA): number, type, state, PSNs, outstanding WQEs, retries, owner",
      control::Access::ReadOnly);
}

}  // namespace vf
