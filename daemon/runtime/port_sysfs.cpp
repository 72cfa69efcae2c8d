#include "daemon/runtime/port_sysfs.hpp"

#include <fmt/format.h>

#include "daemon/config/addr.hpp"
#include "daemon/config/link_attrs.hpp"
#include "daemon/runtime/sysfs_spec.hpp"

namespace vf::runtime {

uint32_t gid_table_len(const PortInfo& p) { return p.gid_tbl_len ? p.gid_tbl_len : uint32_t(p.gids.size()); }

PortFiles port_info_files(const PortInfo& p) {
  const bool ib = p.link_layer == LinkLayer::kInfiniBand;
  PortFiles f;
  f["state"] = fmt::format("{}: {}\n", int(p.state), to_string(p.state));
  f["phys_state"] = fmt::format("{}: {}\n", int(p.phys_state), to_string(p.phys_state));
  f["link_layer"] = ib ? "InfiniBand\n" : "Ethernet\n";
  f["rate"] = config::sysfs_rate_text_ibv(p.active_width, p.active_speed) + "\n";
  // A RoCE port has no LID or SM; the kernel shows 0 there too.
  f["lid"] = fmt::format("0x{:x}\n", ib ? p.lid : 0);
  f["sm_lid"] = fmt::format("0x{:x}\n", ib ? p.sm_lid : 0);
  f["lid_mask_count"] = fmt::format("{}\n", ib ? p.lmc : 0);
  f["sm_sl"] = fmt::format("{}\n", p.sm_sl);
  f["cap_mask"] = fmt::format("0x{:08x}\n", p.port_cap_flags);
  const uint32_t n = gid_table_len(p);
  for (uint32_t i = 0; i < n; ++i) {
    const bool used = i < p.gids.size();
    f[fmt::format("gids/{}", i)] = addr::format_gid_sysfs(used ? p.gids[i] : Gid{}) + "\n";
    f[fmt::format("gid_attrs/types/{}", i)] = used && !ib ? "RoCE v2\n" : "IB/RoCE v1\n";
  }
  return f;
}

}  // namespace vf::runtime
