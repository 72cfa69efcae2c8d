// LID assignment for an InfiniBand fabric — the subnet manager's job. Kept in
// its own file so the daemon's SM can own and replace it (sweeps, LMC, port
// up/down) without touching the config loader.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "daemon/config/config.hpp"

namespace vf::sm {

struct LidTable {
  // The SM's LID: it runs on the fabric's first switch (a managed switch),
  // or on the first HCA of a fabric without switches. 0 on Ethernet.
  uint16_t sm_lid = 0;
  uint8_t lmc = 0;
  std::map<std::string, uint16_t, std::less<>> lids;  // node name -> base LID

  uint16_t lid(std::string_view node) const;  // 0 when the node has none
};

// One subnet per IB fabric, so LIDs restart at 1 in each. HCAs first, in
// config order, then switches (the switch LID is its management port 0);
// deterministic, so LIDs are stable across restarts. Ethernet fabrics get an
// empty table (RoCE has no LIDs).
LidTable assign_lids(const config::Fabric& fabric);

}  // namespace vf::sm
