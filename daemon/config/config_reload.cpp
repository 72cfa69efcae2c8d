#include "daemon/config/config_reload.hpp"

#include <fmt/format.h>

#include "daemon/config/units.hpp"

namespace vf {
namespace {

void daemon_changes(const config::Daemon& a, const config::Daemon& b, std::vector<std::string>& out) {
  if (a.runtime_dir != b.runtime_dir) out.push_back("daemon.runtime_dir");
  if (a.eal_args != b.eal_args) out.push_back("daemon.eal_args");
  if (a.time_dilation != b.time_dilation) out.push_back("daemon.time_dilation");
  if (a.exact_catch_up != b.exact_catch_up) out.push_back("daemon.catch_up");
  if (a.admin_group != b.admin_group) out.push_back("daemon.admin_group");
  if (a.metrics != b.metrics) out.push_back("daemon.metrics_listen");
  if (a.netdevs != b.netdevs) out.push_back("daemon.netdevs");
}

std::string link_name(const config::Fabric& f, const config::Link& l) {
  return fmt::format("fabric {}: link {} - {}", f.name, l.a.text(), l.b.text());
}

void link_changes(size_t fi, size_t li, const config::Fabric& f, const config::Link& a, const config::Link& b,
                  ReloadPlan& plan) {
  const std::string name = link_name(f, a);
  if (a.width != b.width || a.speed != b.speed || a.eth_speed_gbps != b.eth_speed_gbps)
    plan.restart.push_back(name + ": width or speed");
  if (a.mtu != b.mtu) plan.restart.push_back(fmt::format("{}: mtu {} -> {}", name, a.mtu, b.mtu));
  if (a.vl_buffer_bytes != b.vl_buffer_bytes) plan.restart.push_back(name + ": vl_buffer");
  if (a.rate_bps == b.rate_bps && a.delay_ns == b.delay_ns) return;
  std::string what = name + ":";
  if (a.rate_bps != b.rate_bps)
    what += fmt::format(" rate {} -> {}", units::format_rate(a.rate_bps), units::format_rate(b.rate_bps));
  if (a.delay_ns != b.delay_ns)
    what += fmt::format(" delay {} -> {}", units::format_delay(a.delay_ns), units::format_delay(b.delay_ns));
  plan.live.push_back({fi, li, b.rate_bps, b.delay_ns, std::move(what)});
}

void fabric_changes(size_t fi, const config::Fabric& a, const config::Fabric& b, ReloadPlan& plan) {
  const std::string f = "fabric " + a.name;
  if (a.link_layer != b.link_layer) plan.restart.push_back(f + ": link_layer");
  if (a.subnet_prefix != b.subnet_prefix) plan.restart.push_back(f + ": subnet_prefix");
  if (!(a.sm == b.sm)) plan.restart.push_back(f + ": sm (routing)");
  if (!(a.qos == b.qos)) plan.restart.push_back(f + ": qos (SL to VL, VL arbitration)");
  if (!(a.eth_qos == b.eth_qos)) plan.restart.push_back(f + ": qos (trust, DSCP map, PFC, ECN, DCQCN, ETS)");
  if (!(a.adaptive == b.adaptive))
    plan.restart.push_back(fmt::format("{}: adaptive_routing {} -> {}", f, config::to_string(a.adaptive.mode),
                                       config::to_string(b.adaptive.mode)));
  if (a.switches != b.switches) plan.restart.push_back(f + ": switches");
  if (a.hcas != b.hcas) plan.restart.push_back(f + ": hcas");
  bool same_cabling = a.links.size() == b.links.size();
  for (size_t i = 0; same_cabling && i < a.links.size(); ++i)
    same_cabling = a.links[i].a == b.links[i].a && a.links[i].b == b.links[i].b;
  if (!same_cabling) {
    plan.restart.push_back(f + ": links (cabling)");
    return;  // link by link means nothing when the list changed
  }
  for (size_t i = 0; i < a.links.size(); ++i) link_changes(fi, i, a, a.links[i], b.links[i], plan);
}

}  // namespace

ReloadPlan plan_reload(const config::Config& running, const config::Config& next) {
  ReloadPlan plan;
  daemon_changes(running.daemon, next.daemon, plan.restart);
  if (running.fabrics.size() != next.fabrics.size()) {
    plan.restart.push_back("fabrics (how many)");
    return plan;
  }
  for (size_t i = 0; i < running.fabrics.size(); ++i) {
    if (running.fabrics[i].name != next.fabrics[i].name) {
      plan.restart.push_back("fabrics (names or order)");
      return ReloadPlan{{}, plan.restart};
    }
    fabric_changes(i, running.fabrics[i], next.fabrics[i], plan);
  }
  return plan;
}

}  // namespace vf
