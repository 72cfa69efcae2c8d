#include "daemon/umad/model_build.hpp"

#include <map>

#include "daemon/config/link_attrs.hpp"
#include "daemon/mad/sma.hpp"
#include "daemon/runtime/sysfs_spec.hpp"
#include "daemon/fabric/topology.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "dataplane/fabric/ib_switch.hpp"

namespace vf::mad {
namespace {

// ibv_port_attr's active_speed -> PortInfo LinkSpeedActive / LinkSpeedExtActive.
void set_speed(ModelPort& p, uint8_t ibv_speed) {
  switch (ibv_speed) {
    case 1: p.speed = 1; break;
    case 2: p.speed = 2; break;
    case 16: p.speed = 4, p.speed_ext = 1; break;  // FDR
    case 32: p.speed = 4, p.speed_ext = 2; break;  // EDR
    case 64: p.speed = 4, p.speed_ext = 4; break;  // HDR
    case 128: p.speed = 4, p.speed_ext = 8; break; // NDR
    default: p.speed = 4; break;                   // QDR, FDR10
  }
}

PortCounterValues counter_values(const dp::PortSnapshot& s) {
  PortCounterValues c;
  c.xmit_data = s.port_xmit_data;
  c.rcv_data = s.port_rcv_data;
  c.xmit_pkts = s.port_xmit_pkts;
  c.rcv_pkts = s.port_rcv_pkts;
  c.xmit_discards = s.port_xmit_discards;
  c.rcv_errors = s.port_rcv_errors;
  c.rcv_switch_relay_errors = s.port_rcv_switch_relay_errors;
  c.vl15_dropped = s.vl15_dropped;
  c.excessive_buffer_overruns = s.excessive_buffer_overrun_errors;
  c.link_downed = s.link_downed;
  c.xmit_wait_ticks = s.port_xmit_wait_ns;
  return c;
}

ModelNode ca_node(const PortInfo& pi, const config::Hca& h) {
  ModelNode n;
  n.name = h.name;
  n.desc = runtime::node_description(h.name);
  n.guid = h.node_guid;
  n.lid = pi.lid;
  n.lmc = pi.lmc;
  n.port_cap_flags = pi.port_cap_flags;
  n.pkeys = pi.pkeys;
  n.pkey_table_len = pi.pkey_table_len();
  n.qos = pi.qos;
  ModelPort p;
  p.state = pi.state;
  p.phys = pi.phys_state;
  p.width = pi.active_width;
  set_speed(p, pi.active_speed);
  p.mtu = mtu_code(pi.mtu);
  p.vl_cap = p.oper_vls = vl_cap_code(pi.qos.data_vls);
  n.ports.push_back(p);
  return n;
}

ModelNode switch_node(const Topology& t, size_t fabric, const config::Switch& s, uint16_t lid) {
  ModelNode n;
  n.is_switch = true;
  n.name = s.name;
  n.desc = s.name.substr(0, 64);  // fabricctl's name for it
  n.guid = s.node_guid;
  n.lid = lid;
  n.pkeys = {0xFFFF};
  n.pkey_table_len = 1;
  n.ports.resize(s.ports);
  const dp::Fabric& df = t.fabric(fabric);
  for (const auto& sw : df.switches())
    if (sw->name() == s.name) {
      const auto& ib = static_cast<const dp::IbSwitch&>(*sw);
      n.qos = ib.qos(1);
      for (unsigned i = 1; i <= s.ports; ++i) {
        const uint8_t vls = ib.qos(i).data_vls;
        n.ports[i - 1].vl_cap = n.ports[i - 1].oper_vls = vl_cap_code(vls);
      }
    }
  return n;
}

}  // namespace

MadModel build_model(const Topology& t, const config::Fabric& f, size_t fabric, bool with_counters) {
  MadModel m;
  m.subnet_prefix = f.subnet_prefix;
  const sm::SubnetManager* sm = t.subnet_manager(fabric);
  const dp::Fabric& df = t.fabric(fabric);
  const Nanos now = df.scheduler().now();
  std::map<std::string, size_t, std::less<>> index;

  for (const auto& h : f.hcas)
    for (size_t i = 0; i < t.vhcas().size(); ++i)
      if (t.vhcas()[i].name == h.name) {
        index[h.name] = m.nodes.size();
        m.nodes.push_back(ca_node(t.port_info(i), h));
      }
  for (const auto& s : f.switches) {
    index[s.name] = m.nodes.size();
    m.nodes.push_back(switch_node(t, fabric, s, sm ? sm->lids().lid(s.name) : 0));
  }

  uint16_t max_lid = 0;
  for (const auto& n : m.nodes) max_lid = std::max(max_lid, uint16_t(n.lid + (1u << n.lmc) - 1));
  for (const auto& sw : df.switches()) {
    auto it = index.find(sw->name());
    if (it == index.end()) continue;
    const auto& ib = static_cast<const dp::IbSwitch&>(*sw);
    auto& lft = m.nodes[it->second].lft;
    lft.resize(size_t(max_lid) + 1, 0xFF);
    for (uint16_t lid = 1; lid <= max_lid; ++lid) lft[lid] = ib.lft(lid);
  }

  for (size_t li = 0; li < f.links.size(); ++li) {
    const config::Link& l = f.links[li];
    const bool up = t.link_up(fabric, li);
    const config::Endpoint* ends[2] = {&l.a, &l.b};
    for (int e = 0; e < 2; ++e) {
      const config::Endpoint& me = *ends[e];
      const config::Endpoint& peer = *ends[1 - e];
      auto a = index.find(me.node), b = index.find(peer.node);
      if (a == index.end() || b == index.end()) continue;
      ModelNode& n = m.nodes[a->second];
      const unsigned num = me.is_switch ? me.port : 1;
      if (num < 1 || num > n.ports.size()) continue;
      ModelPort& p = n.ports[num - 1];
      p.linked = true;
      p.peer_node = int(b->second);
      p.peer_port = uint8_t(peer.is_switch ? peer.port : 1);
      if (me.is_switch) {  // a switch port is Active once its link trains (the SM's first sweep)
        p.state = up ? PortState::kActive : PortState::kDown;
        p.phys = up ? PhysState::kLinkUp : PhysState::kPolling;
        p.width = config::ibv_active_width(l.width);
        set_speed(p, config::ibv_active_speed(l.speed));
        p.mtu = mtu_code(config::active_mtu_bytes(f.link_layer, l));
      }
      if (with_counters) {
        const dp::Endpoint ep{me.node, me.is_switch ? me.port : 0};
        p.counters = counter_values(df.port(ep).snapshot(now));
      }
    }
  }

  if (sm) {
    m.sm_lid = sm->lids().sm_lid;
    m.sm_activity = uint32_t(sm->last().number);
    if (auto n = m.node_by_lid(m.sm_lid)) m.sm_node = int(*n);
  }
  return m;
}

}  // namespace vf::mad
