#include "dataplane/fabric/ets.hpp"

namespace vf::dp {

EtsPlan make_ets_plan(const EtsConfig& c) {
  EtsPlan p;
  for (unsigned prio = 0; prio < 8; ++prio) p.tc_prios[c.prio2tc[prio] & 7] |= uint8_t(1u << prio);
  for (unsigned tc = 0; tc < 8; ++tc) {
    if (!p.tc_prios[tc]) continue;
    const uint8_t bit = uint8_t(1u << tc);
    if (c.tsa[tc] == Tsa::kStrict)
      p.strict |= bit;
    else if (c.bw[tc])
      p.shared |= bit;
    else
      p.leftover |= bit;
    p.quantum[tc] = int32_t(c.bw[tc]) * kQuantumPerPercent;
  }
  return p;
}

}  // namespace vf::dp
