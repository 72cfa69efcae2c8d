// A FabricLab laid out as a config's IB fabric: its switches, its cables, host
// i on the switch port config HCA i is linked to, and (optionally) the LFTs of
// `routes`. Host i is "vhca<i>" with LID i + 1, which is what sm::assign_lids
// gives config HCA i; as_lab_names() renames a config to match.
#pragma once

#include "daemon/config/config.hpp"
#include "daemon/sm/routing.hpp"
#include "sim/lab.hpp"

namespace vf::sim {

inline LabTopology lab_topology(const config::Fabric& f, const Routes& routes = {}) {
  LabTopology t;
  if (f.link_layer == config::LinkLayer::Ethernet) t.link_layer = LinkLayer::kEthernet;
  for (const auto& s : f.switches) t.switches.push_back({s.name, s.ports});
  for (const auto& h : f.hcas) {
    const config::Link& l = *f.link_of(h.name);
    const config::Endpoint& sw = l.a.is_switch ? l.a : l.b;
    t.hosts.push_back({sw.node, sw.port, {l.rate_bps, l.delay_ns, l.mtu}, h.ipv4.value_or(0), h.prefix_len, h.gateway});
  }
  for (const auto& l : f.links)
    if (l.a.is_switch && l.b.is_switch)
      t.cables.push_back({l.a.node, l.a.port, l.b.node, l.b.port, {l.rate_bps, l.delay_ns, l.mtu}, l.vl_buffer_bytes});
  for (const auto& [sw, table] : routes)
    for (const auto& [hca, port] : table) t.lft[sw][unsigned(f.find_hca(hca) - f.hcas.data())] = uint8_t(port);
  return t;
}

// The config with HCA i named "vhca<i>", as the lab names its hosts.
inline config::Fabric as_lab_names(config::Fabric f) {
  for (size_t i = 0; i < f.hcas.size(); ++i) {
    const std::string old = f.hcas[i].name, now = "vhca" + std::to_string(i);
    f.hcas[i].name = now;
    for (auto& l : f.links)
      for (config::Endpoint* e : {&l.a, &l.b})
        if (!e->is_switch && e->node == old) e->node = now;
  }
  return f;
}

}  // namespace vf::sim
