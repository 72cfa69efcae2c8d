#include "dataplane/fabric/pfc_headroom.hpp"

#include <algorithm>

#include "dataplane/fabric/eth_qos.hpp"
#include "dataplane/fabric/pfc.hpp"
#include "dataplane/wire/pfc.hpp"
#include "dataplane/wire/wire_bytes.hpp"

namespace vf::dp {

namespace {
// Bytes the link delivers in `ns`, rounded up.
uint64_t bytes_in(Nanos ns, uint64_t rate_bps) { return (uint64_t(ns) * rate_bps + 7'999'999'999ULL) / 8'000'000'000ULL; }
}  // namespace

HeadroomTerms pfc_headroom(const HeadroomInputs& in) {
  HeadroomTerms t{};
  t.trigger = in.lossless_frame;
  t.wait = wire::eth_wire_bytes(in.max_frame);
  t.pause = wire::eth_wire_bytes(wire::kPfcFrameLen);
  t.cable = bytes_in(2 * in.cable_delay_ns, in.rate_bps);
  t.interface = bytes_in(2 * in.interface_delay_ns, in.rate_bps);
  t.response = bytes_in(in.response_ns, in.rate_bps);
  t.last = in.lossless_frame;
  t.total = t.trigger + t.wait + t.pause + t.cable + t.interface + t.response + t.last;
  return t;
}

PfcThresholds default_pfc_thresholds(uint64_t headroom, uint32_t max_frame, const PfcSettings& s) {
  PfcThresholds t;
  t.headroom = s.headroom_bytes ? s.headroom_bytes : uint32_t(headroom);
  t.xoff = s.xoff_bytes ? s.xoff_bytes : uint32_t(std::max<uint64_t>(2 * headroom, 4ULL * max_frame));
  t.xon = s.xon_bytes ? s.xon_bytes : (t.xoff > 2 * max_frame ? t.xoff - 2 * max_frame : 0);
  return t;
}

}  // namespace vf::dp
