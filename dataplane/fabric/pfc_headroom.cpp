#include "dataplane/fabric/pfc_headroom.hpp"

#include <algorithm>

#include "dataplane/wire/pfc.hpp"
#include "dataplane/wire/wire_bytes.hpp"

namespace vf::dp {

// core's copy of the Ethernet framing costs must be the wire's.
static_assert(headroom_detail::wire_bytes(1000) == wire::eth_wire_bytes(1000));
static_assert(headroom_detail::wire_bytes(wire::kPfcFrameLen) == wire::eth_wire_bytes(wire::kPfcFrameLen));
static_assert(eth_max_frame(1500) == max_frame_bytes(LinkLayer::kEthernet, 1500));

PfcThresholds default_pfc_thresholds(uint64_t headroom, uint32_t max_frame, const PfcSettings& s) {
  PfcThresholds t;
  t.headroom = s.headroom_bytes ? s.headroom_bytes : uint32_t(headroom);
  t.xoff = s.xoff_bytes ? s.xoff_bytes : uint32_t(std::max<uint64_t>(2 * headroom, 4ULL * max_frame));
  t.xon = s.xon_bytes ? s.xon_bytes : (t.xoff > 2 * max_frame ? t.xoff - 2 * max_frame : 0);
  return t;
}

}  // namespace vf::dp
