#include "daemon/commands/control_commands.hpp"

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include <rte_mempool.h>

#include "core/version.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/service/daemon_state.hpp"
#include "daemon/telemetry/counter_format.hpp"
#include "daemon/vhca/event_sink.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/commands/link_lookup.hpp"
#include "daemon/runtime/sysfs_spec.hpp"
#include "daemon/telemetry/metrics_text.hpp"
#include "daemon/ip/netdev.hpp"
#include "daemon/config/addr.hpp"
#include "daemon/fabric/topology.hpp"

namespace vf {
namespace {
using control::json;

// The vHCA's configured address (IB: the IPoIB-style one rdma_cm resolves)
// and the Linux interface holding it.
void add_addresses(json& out, const DaemonState& d, size_t vhca) {
  const std::string& name = out.value("name", "");
  for (const config::Fabric& f : d.config().fabrics)
    for (const config::Hca& h : f.hcas)
      if (h.name == name && h.ipv4)
        out["ip"] = fmt::format("{}/{}", addr::format_ipv4(*h.ipv4), h.prefix_len ? h.prefix_len : 32);
  const Netdev* n = d.netdev(vhca);
  if (!n) return;
  out["netdev"] = {{"name", n->spec().name},
                   {"ifindex", n->ifindex()},
                   {"mtu", n->spec().mtu},
                   {"discarded_packets", n->stats().discarded_packets},
                   {"discarded_bytes", n->stats().discarded_bytes}};
}

// The provider sits beside fabricd: <prefix>/bin/fabricd, <prefix>/lib/libvhca-rdmav34.so,
// and so does the preload shim, <prefix>/lib/libvhca-preload.so.
std::filesystem::path lib_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return exe.parent_path().parent_path() / "lib";
}
std::string provider_stem() { return (lib_dir() / "libvhca").string(); }
std::string preload_path() { return (lib_dir() / "libvhca-preload.so").string(); }

// The packet pool's fill, read from the control thread the way dpdk-proc-info
// reads it from another process: a snapshot, exact once the lcore is idle.
json mbufs(const rte_mempool* pool) {
  if (!pool) return nullptr;
  return {{"size", pool->size}, {"in_use", rte_mempool_in_use_count(pool)},
          {"available", rte_mempool_avail_count(pool)}};
}

json status(DaemonState& d) {
  const auto& cfg = d.config();
  json fabrics = json::array();
  for (const auto& f : cfg.fabrics)
    fabrics.push_back({{"name", f.name},
                       {"link_layer", config::to_string(f.link_layer)},
                       {"switches", f.switches.size()},
                       {"hcas", f.hcas.size()},
                       {"links", f.links.size()}});
  auto up = std::chrono::steady_clock::now() - d.started();
  const LcoreSnapshot ls = d.lcore().snapshot();
  json lcore = json::object();
  put_counters(lcore, kLcoreCounters, &ls);
  return {{"daemon",
           {{"pid", getpid()},
            {"version", kVersion},
            {"uptime_s", std::chrono::duration_cast<std::chrono::seconds>(up).count()},
            {"config", cfg.source},
            {"runtime_dir", cfg.daemon.runtime_dir},
            {"time_dilation", cfg.daemon.time_dilation},
            {"catch_up", cfg.daemon.exact_catch_up ? "exact" : "batched"},
            // GET /metrics: where it is served, or null (off, or the address was taken).
            {"metrics_listen", d.metrics_address().empty() ? json(nullptr) : json(d.metrics_address())}}},
          {"fabrics", fabrics},
          {"hca_count", d.topology().vhcas().size()},
          // How the dataplane spends its time: sleeps ~ wakeups when idle.
          {"lcore", lcore},
          {"clients", d.clients()},
          {"mbufs", mbufs(d.mbuf_pool())}};
}

json env(DaemonState& d) {
  const std::string run = d.config().daemon.runtime_dir;
  // LD_PRELOAD: completion channels and the sysfs device scan need the shim
  // (device/preload); fabricctl puts it before whatever the user preloads.
  return {{"SYSFS_PATH", run + "/sys"},
          {"RDMAV_DRIVERS", provider_stem()},
          {"LD_PRELOAD", preload_path()},
          {"VFABRIC_RUNTIME_DIR", run}};
}

// `fabricctl port set <hca> state down|up`, like `ip link set <dev> down`:
// the vHCA's link goes down (PhysState Disabled) or trains again. sysfs and
// query_port follow, the port passes no packets while down, and every
// context of the vHCA gets IBV_EVENT_PORT_ERR, then PORT_ACTIVE once the
// port is active again -- on IB when the subnet manager's sweep activates it.
// {hca, pfc_storm: [priorities]}: the vHCA's NIC holds XOFF on them, as a
// stuck receive pipeline does; [] ends it.
void pfc_storm(DaemonState& d, const std::string& name, const json& prios, control::Reply reply) {
  uint8_t mask = 0;
  if (!prios.is_array() || prios.size() > 8)
    return reply.error("pfc_storm must be a list of priorities", "e.g. fabricctl port set vroce0 pfc_storm 3");
  for (const json& p : prios) {
    if (!p.is_number_unsigned() || p.get<uint64_t>() > 7)
      return reply.error("pfc_storm: a priority is 0 to 7", "e.g. fabricctl port set vroce0 pfc_storm 3");
    mask = uint8_t(mask | 1u << p.get<unsigned>());
  }
  const auto& vhcas = d.topology().vhcas();
  size_t i = 0;
  while (i < vhcas.size() && vhcas[i].name != name) ++i;
  if (i == vhcas.size()) return reply.error("no vHCA named '" + name + "'", "fabricctl hca list shows the vHCAs");
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, i, mask, name, prios, reply] {
    if (!dp->topology().set_pfc_storm(i, mask))
      return reply.error(name + " has no PFC: a storm is an Ethernet (RoCE) fault",
                         "pick a RoCE vHCA (fabricctl hca list)");
    dp->fabric_event("port", mask ? fmt::format("{}: PFC storm injected: XOFF held on priorities {}", name, prios.dump())
                                  : name + ": PFC storm injection ended");
    reply.ok({{"hca", name}, {"pfc_storm", prios}});
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

void port_set(DaemonState& d, const json& args, control::Reply reply) {
  const auto str = [&](const char* k) {
    return args.contains(k) && args[k].is_string() ? args[k].get<std::string>() : std::string();
  };
  if (args.contains("pfc_storm")) return pfc_storm(d, str("hca"), args["pfc_storm"], std::move(reply));
  const std::string name = str("hca"), state = str("state");
  if (state != "down" && state != "up")
    return reply.error("port state must be 'down' or 'up'", "e.g. fabricctl port set vib0 state down");
  const auto& vhcas = d.topology().vhcas();
  size_t i = 0;
  while (i < vhcas.size() && vhcas[i].name != name) ++i;
  const auto ref = d.config().find_hca(name);
  if (i == vhcas.size() || !ref || !ref->link)
    return reply.error("no vHCA named '" + name + "'", "fabricctl hca list shows the vHCAs");
  const LinkRef link{size_t(ref->fabric - d.config().fabrics.data()), size_t(ref->link - ref->fabric->links.data())};
  const bool up = state == "up";
  DaemonState* dp = &d;
  const bool queued = d.lcore().post([dp, i, link, up, name, reply] {
    Topology& topo = dp->topology();
    const bool changed = topo.link_up(link.fabric, link.link) != up;
    for (size_t end : topo.set_link_up(link.fabric, link.link, up, PhysState::kDisabled))
      if (end != i) dp->port_changed(end, nullptr);
    const char* now = runtime::to_string(topo.port_info(i).state);
    dp->port_changed(i, [name, now, changed, reply](const std::string& error) {
      if (!error.empty()) return reply.error(std::string("the port is ") + now + " but " + error);
      reply.ok({{"hca", name}, {"port_state", now}, {"changed", changed}});
    });
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

}  // namespace

// The one place that says which commands change the fabric (Mutating: only
// for root, fabricd's user and daemon.admin_group; see control_server.hpp).
void register_control_commands(control::ControlServer& server, DaemonState& daemon) {
  using control::Access;
  server.add_command("status", [&daemon](const json&) { return status(daemon); },
                     "daemon, fabrics and vHCA summary", Access::ReadOnly);
  server.add_command("env", [&daemon](const json&) { return env(daemon); },
                     "environment that makes the vHCAs visible to unmodified programs", Access::ReadOnly);
  server.add_async_command(
      "hca.list",
      [&daemon](const json&, control::Reply reply) {
        Topology* topo = &daemon.topology();
        DaemonState* daemon_ptr = &daemon;
        bool queued = daemon.lcore().post([topo, daemon = daemon_ptr, reply] {
          // The lcore copies plain snapshots; JSON is built on the control thread.
          std::vector<VhcaSnapshot> snaps;
          snaps.reserve(topo->vhcas().size());
          for (size_t i = 0; i < topo->vhcas().size(); ++i) {
            snaps.push_back(topo->snapshot(i));
            snaps.back().events = daemon->events(i).stats();
          }
          reply.ok_with([topo, daemon, snaps = std::move(snaps)] {
            json out = json::array();
            for (size_t i = 0; i < snaps.size(); ++i) {
              out.push_back(hca_json(topo->vhcas()[i], snaps[i]));
              const UmadStats mad = daemon->umad_stats(i);
              put_counters(out.back()["mad"], kUmadCounters, &mad);
              const cm::CmStats cm = daemon->cm_stats(i);
              put_counters(out.back()["cm"], cm::kCmCounters, &cm);
              add_addresses(out.back(), *daemon, i);
            }
            return out;
          });
        });
        if (!queued) reply.error("the dataplane is busy", "retry in a moment");
      },
      "every vHCA: fabric, link layer, LID/GIDs, port state, objects and counters", Access::ReadOnly);
  server.add_async_command(
      "metrics",
      [&daemon](const json&, control::Reply reply) {
        const bool queued = daemon.collect_metrics([reply](std::string text) {
          reply.ok({{"content_type", "text/plain; version=0.0.4"}, {"text", std::move(text)}});
        });
        if (!queued) reply.error("the dataplane is busy", "retry in a moment");
      },
      "every counter in the Prometheus text format: {content_type, text}", Access::ReadOnly);
  server.add_command(
      "events",
      [&daemon](const json& args) {
        // No `since`: from now on (what a new `fabricctl events` wants);
        // `history`: everything still kept.
        const EventLog& log = daemon.event_log();
        uint64_t since = log.last_seq();
        if (args.contains("since") && args["since"].is_number_unsigned()) since = args["since"].get<uint64_t>();
        if (args.contains("history") && args["history"] == true) since = 0;
        const EventLog::Since got = log.since(since);
        json events = json::array();
        for (const FabricEvent& e : got.events)
          events.push_back({{"seq", e.seq}, {"time_ns", e.time_ns}, {"kind", e.kind}, {"text", e.text}});
        return json{{"events", std::move(events)}, {"missed", got.missed}, {"next", got.next}};
      },
      "{since?, history?}: what happened to the fabric after event `since` (ports, links, SM sweeps, "
      "deadlocks, captures, counter resets, qos changes, reloads)",
      Access::ReadOnly);
  server.add_async_command(
      "hca.port.set",
      [&daemon](const json& args, control::Reply reply) { port_set(daemon, args, std::move(reply)); },
      "{hca, state: down|up}: take a vHCA's port down or up (PORT_ERR / PORT_ACTIVE to its apps); "
      "{hca, pfc_storm: [priorities]}: make a RoCE vHCA's NIC hold XOFF on them ([] ends it)",
      Access::Mutating);
}

void register_all_commands(control::ControlServer& server, DaemonState& daemon, boost::asio::io_context& io) {
  register_control_commands(server, daemon);
  register_fabric_commands(server, daemon);
  register_topology_commands(server, daemon);
  register_counter_commands(server, daemon);
  register_qp_commands(server, daemon);
  register_cm_commands(server, daemon);
  register_qos_commands(server, daemon);
  register_capture_commands(server, daemon, io);
}

}  // namespace vf
