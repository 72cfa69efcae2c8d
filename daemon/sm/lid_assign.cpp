#include "daemon/sm/lid_assign.hpp"

namespace vf::sm {

uint16_t LidTable::lid(std::string_view node) const {
  auto it = lids.find(node);
  return it == lids.end() ? 0 : it->second;
}

LidTable assign_lids(const config::Fabric& f) {
  LidTable t;
  if (f.link_layer != config::LinkLayer::Infiniband) return t;
  // Unicast LIDs are 0x0001..0xbfff; the config caps nodes far below that.
  uint16_t next = 1;
  for (const auto& h : f.hcas) t.lids.emplace(h.name, next++);
  for (const auto& s : f.switches) t.lids.emplace(s.name, next++);
  if (!f.switches.empty()) t.sm_lid = t.lid(f.switches.front().name);
  else if (!f.hcas.empty()) t.sm_lid = t.lid(f.hcas.front().name);
  return t;
}

}  // namespace vf::sm
