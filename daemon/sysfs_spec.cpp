#include "daemon/sysfs_spec.hpp"

#include <unistd.h>

#include <cstdio>

#include "daemon/link_attrs.hpp"

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

DeviceSpec make_device_spec(const config::Fabric& f, const config::Hca& h, const config::Link& l,
                            const sm::LidTable& lids) {
  DeviceSpec d;
  auto attrs = config::port_attrs(f, l);
  d.ibdev = h.name;
  d.index = h.index;
  d.link_layer = f.link_layer;
  d.node_guid = h.node_guid;
  d.sys_image_guid = h.node_guid;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || !host[0]) std::snprintf(host, sizeof host, "vfabric");
  d.node_desc = (std::string(host) + " " + h.name).substr(0, 64);  // IB NodeDescription is 64 bytes
  d.cap_mask = attrs.port_cap_flags;
  d.rate = attrs.rate_text;
  d.gid_table_len = attrs.gid_tbl_len;
  d.pkey_table_len = attrs.pkey_tbl_len;
  d.pkeys = {0xffff};  // default partition, full membership
  if (f.link_layer == config::LinkLayer::Infiniband) {
    d.lid = lids.lid(h.name);
    d.sm_lid = lids.sm_lid;
    d.lmc = lids.lmc;
    d.gids.push_back({addr::make_gid(f.subnet_prefix, h.node_guid), GidType::IbRoceV1});
  } else {
    d.gids.push_back({addr::make_gid(0xfe80000000000000ULL, addr::eui64_from_mac(h.mac)), GidType::RoceV2});
    if (h.ipv4) d.gids.push_back({addr::ipv4_mapped_gid(*h.ipv4), GidType::RoceV2});
  }
  d.device_attrs["vfabric_index"] = std::to_string(h.index);
  return d;
}

std::vector<DeviceSpec> make_device_specs(const config::Config& c) {
  std::vector<DeviceSpec> out;
  for (const auto& f : c.fabrics) {
    sm::LidTable lids = sm::assign_lids(f);
    for (const auto& h : f.hcas)
      if (const config::Link* l = f.link_of(h.name)) out.push_back(make_device_spec(f, h, *l, lids));
  }
  return out;
}

}  // namespace vf::runtime
