// `fabricctl cm list`: every rdma_cm id of the apps on the vHCAs -- state,
// addresses, QPs, owner -- as `rdma resource show cm_id` lists the kernel's.
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "daemon/cm/service.hpp"
#include "daemon/commands/control_commands.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/service/daemon_state.hpp"

namespace vf {
namespace {
using json = nlohmann::json;

std::string ps_name(uint16_t ps) {
  switch (ps) {
    case 0x0106: return "TCP";
    case 0x0111: return "UDP";
    case 0x013F: return "IB";
    case 0x0002: return "IPOIB";
    default: return std::to_string(ps);
  }
}

std::string comm_of(pid_t pid, std::map<pid_t, std::string>& cache) {
  auto [it, fresh] = cache.try_emplace(pid);
  if (fresh && pid > 0) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
    std::getline(f, it->second);
  }
  return it->second;
}

json cm_list(const DaemonState& d) {
  json out = json::array();
  const cm::Service* s = d.cm();
  if (!s) return out;
  std::map<pid_t, std::string> comms;
  for (const cm::IdView& v : s->list()) {
    json one{{"id", v.handle}, {"state", v.state}, {"ps", ps_name(v.ps)},
             {"qp_type", v.qp_type == 4 ? "UD" : v.qp_type == 3 ? "UC" : "RC"}};
    if (!v.hca.empty()) one["hca"] = v.hca;
    if (!v.src.empty()) one["src_addr"] = v.src;
    if (!v.dst.empty()) one["dst_addr"] = v.dst;
    if (v.qpn) one["qpn"] = v.qpn;
    if (v.remote_qpn) one["dest_qpn"] = v.remote_qpn;
    if (v.pid) {
      one["pid"] = v.pid;
      one["comm"] = comm_of(v.pid, comms);
    }
    out.push_back(std::move(one));
  }
  return out;
}
}  // namespace

void register_cm_commands(control::ControlServer& server, DaemonState& daemon) {
  server.add_command("cm.list", [&daemon](const json&) { return cm_list(daemon); },
                     "every rdma_cm id: state, port space, vHCA, addresses, QPs, owner", control::Access::ReadOnly);
}

}  // namespace vf
