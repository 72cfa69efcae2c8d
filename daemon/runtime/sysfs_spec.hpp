// What the runtime tree publishes for one vHCA: the values the kernel would
// show in sysfs for a real single-port HCA. Built from the validated config
// (make_device_specs) or by hand in tests.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/port_info.hpp"
#include "daemon/config/addr.hpp"
#include "daemon/config/config.hpp"
#include "daemon/sm/lid_assign.hpp"

namespace vf::runtime {

// IBA PortState / PortPhysicalState values, as sysfs prints them.
// The IBA states of core/port_info.hpp, in the sysfs text the kernel writes.
using vf::PhysState;
using vf::PortState;
const char* to_string(PortState s);  // "ACTIVE"
const char* to_string(PhysState s);  // "LinkUp"

struct DeviceSpec {
  std::string ibdev;                  // "vib0"
  uint32_t index = 0;                 // HCA index; preferred uverbs number
  uint64_t node_guid = 0;
  uint64_t sys_image_guid = 0;
  std::string fw_ver = "1.0.0";       // provider's query_device must report the same
  std::string hca_type = "vHCA";
  std::string hw_rev = "0x1";  // the engine's hw_ver (engine::kHwVer), as the kernel prints it
  std::string board_id = "VFABRIC_VHCA";
  std::string node_desc;              // "<host> <ibdev>" like rdma-ndd writes
  // Port 1's attributes (port_sysfs.hpp renders them). make_device_spec
  // derives the record the port starts with; the daemon then publishes the
  // HcaPort's own record, and RuntimeTree::update_port each change of it.
  PortInfo port;
  std::vector<uint16_t> pkeys;        // by index; the rest are 0x0000
  uint32_t pkey_table_len = 0;
  // Extra files under <ibdev>/device/ for the provider (e.g. a socket path).
  std::map<std::string, std::string> device_attrs;
  // fabricd's socket for the port's umad device (umad_server.hpp); empty:
  // the port has no class/infiniband_mad entry.
  std::string umad_socket;
  // RoCE: the Linux interface every GID in use belongs to (netdev.hpp), shown
  // as gid_attrs/ndevs/<i>; empty: none (IB, or daemon.netdevs off).
  std::string netdev;
};

// IB: GID[0] = subnet_prefix : node GUID (the port GUID). RoCE: GID[0] =
// fe80::EUI-64(MAC), GID[1] = ::ffff:<ip>, both RoCE v2. (mlx5 lists each
// address twice, v1 then v2, so its IPv4 RoCEv2 GID is index 3; vHCAs only
// speak RoCEv2, so they list each address once and the IPv4 GID is index 1.)
// "<host> <ibdev>", as rdma-ndd writes it: sysfs node_desc and the SMA's
// NodeDescription alike.
std::string node_description(const std::string& ibdev);

DeviceSpec make_device_spec(const config::Fabric& f, const config::Hca& h, const config::Link& l,
                            const sm::LidTable& lids);
std::vector<DeviceSpec> make_device_specs(const config::Config& c);

}  // namespace vf::runtime
