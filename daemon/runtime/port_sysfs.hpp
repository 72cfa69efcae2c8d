// The files of a vHCA's sysfs ports/1/ that come from its PortInfo: rendered
// from the live record (the HcaPort's) at start-up and again whenever its
// owner changes it, so sysfs, query_port and fabricctl never disagree.
// Formats as the kernel's ib_core writes them (drivers/infiniband/core/sysfs.c).
#pragma once

#include <map>
#include <string>

#include "core/port_info.hpp"

namespace vf::runtime {

// Relative to ports/1 -> content: state, phys_state, link_layer, rate, lid,
// sm_lid, lid_mask_count, sm_sl, cap_mask, gids/<i> and gid_attrs/types/<i>
// for every index below the GID table length (unused entries are zero GIDs
// of type "IB/RoCE v1", as the kernel's EINVAL reads to libibverbs). A RoCE
// port's populated GIDs are "RoCE v2": vHCAs speak RoCEv2 only.
using PortFiles = std::map<std::string, std::string>;
PortFiles port_info_files(const PortInfo& p);

// The GID table length a port reports: gid_tbl_len, or gids.size() when 0.
uint32_t gid_table_len(const PortInfo& p);

}  // namespace vf::runtime
