#include "daemon/runtime/sysfs_spec.hpp"

#include <unistd.h>

#include <cstdio>

#include "daemon/config/link_attrs.hpp"

namespace vf::runtime {

const char* to_string(PortState s) {
  switch (s) {
    case PortState::kDown: return "DOWN";
    case PortState::kInit: return "INIT";
    case PortState::kArmed: return "ARMED";
    case PortState::kActive: return "ACTIVE";
  }
  return "NOP";
}

const char* to_string(PhysState s) {
  switch (s) {
    case PhysState::kSleep: return "Sleep";
    case PhysState::kPolling: return "Polling";
    case PhysState::kDisabled: return "Disabled";
    case PhysState::kLinkUp: return "LinkUp";
    case PhysState::kLinkErrorRecovery: return "LinkErrorRecovery";
  }
  return "<unknown>";
}

std::string node_description(const std::string& ibdev) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || !host[0]) std::snprintf(host, sizeof host, "vfabric");
  return (std::string(host) + " " + ibdev).substr(0, 64);  // IB NodeDescription is 64 bytes
}

DeviceSpec make_device_spec(const config::Fabric& f, const config::Hca& h, const config::Link& l,
                            const sm::LidTable& lids) {
  DeviceSpec d;
  const auto attrs = config::port_attrs(f, l);
  d.ibdev = h.name;
  d.index = h.index;
  d.node_guid = h.node_guid;
  d.sys_image_guid = h.node_guid;
  d.node_desc = node_description(h.name);
  d.pkey_table_len = attrs.pkey_tbl_len;
  d.pkeys = h.pkeys;
  PortInfo& p = d.port;
  p.pkeys = h.pkeys;
  p.pkey_tbl_len = attrs.pkey_tbl_len;
  p.link_layer = config::to_core(f.link_layer);
  p.mac = h.mac;
  p.mtu = attrs.active_mtu_bytes;
  p.active_speed = attrs.active_speed;
  p.active_width = attrs.active_width;
  p.gid_tbl_len = attrs.gid_tbl_len;
  p.port_cap_flags = attrs.port_cap_flags;
  if (f.link_layer == config::LinkLayer::Infiniband) {
    p.lid = lids.lid(h.name);
    p.sm_lid = lids.sm_lid;
    p.lmc = lids.lmc;
    p.gids.push_back(addr::make_gid(f.subnet_prefix, h.node_guid));
  } else {
    p.gids.push_back(addr::make_gid(0xfe80000000000000ULL, addr::eui64_from_mac(h.mac)));
    if (h.ipv4) p.gids.push_back(addr::ipv4_mapped_gid(*h.ipv4));
  }
  d.device_attrs["vfabric_index"] = std::to_string(h.index);
  return d;
}

std::vector<DeviceSpec> make_device_specs(const config::Config& c) {
  std::vector<DeviceSpec> out;
  for (const auto& f : c.fabrics) {
    sm::LidTable lids = sm::assign_lids(f);
    for (const auto& h : f.hcas)
      if (const config::Link* l = f.link_of(h.name)) {
        out.push_back(make_device_spec(f, h, *l, lids));
        // A RoCE GID's netdev (IB GIDs have none, as in the kernel).
        if (c.daemon.netdevs && f.link_layer == config::LinkLayer::Ethernet) out.back().netdev = h.netdev;
      }
  }
  return out;
}

}  // namespace vf::runtime
