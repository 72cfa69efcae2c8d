// How much a lossless priority group must still take after it decided to send
// XOFF: the IEEE 802.1Qbb (Annex N) delay model, in the terms of vfabric's own
// link timing so the figure is an upper bound of what really arrives. From the
// arrival that crosses XOFF (itself up to one lossless frame):
//   wait       the PFC frame waits for the frame this port is sending (the
//              largest frame on the link, on the wire: FCS, preamble, IFG);
//   pause      the PFC frame's own 64 bytes + preamble + IFG;
//   cable      the link's propagation delay, there and back;
//   interface  PHY/MAC delay per direction (0 on emulated ports, which have none);
//   response   the peer's reaction time before it stops starting frames;
//   last       the largest lossless frame the peer started just before that.
// Data keeps arriving at the link rate through wait..response, so those terms
// are their time times the rate. Every term is in bytes. Plain arithmetic in
// core/ because the config check (no dataplane) and the dataplane both use it.
#pragma once

#include <cstdint>

namespace vf {

struct HeadroomInputs {
  uint64_t rate_bps = 0;
  uint64_t cable_delay_ns = 0;      // one way: the link's configured delay
  uint32_t max_frame = 0;           // largest frame on the link (as stored: no FCS)
  uint32_t lossless_frame = 0;      // largest frame of the lossless priority
  uint64_t response_ns = 0;         // the peer's
  uint64_t interface_delay_ns = 0;  // per direction
};

struct HeadroomTerms {
  uint64_t trigger, wait, pause, cable, interface, response, last;
  uint64_t total;
};

namespace headroom_detail {
inline constexpr uint64_t kEthOverhead = 4 + 8 + 12;  // FCS, preamble + SFD, IFG
inline constexpr uint64_t kPfcFrame = 60;             // without FCS: the minimum frame
constexpr uint64_t wire_bytes(uint64_t frame) { return (frame + 4 < 64 ? 60 : frame) + kEthOverhead; }
constexpr uint64_t bytes_in(uint64_t ns, uint64_t rate_bps) {
  return (ns * rate_bps + 7'999'999'999ULL) / 8'000'000'000ULL;
}
}  // namespace headroom_detail

constexpr HeadroomTerms pfc_headroom(const HeadroomInputs& in) {
  using namespace headroom_detail;
  HeadroomTerms t{};
  t.trigger = in.lossless_frame;
  t.wait = wire_bytes(in.max_frame);
  t.pause = wire_bytes(kPfcFrame);
  t.cable = bytes_in(2 * in.cable_delay_ns, in.rate_bps);
  t.interface = bytes_in(2 * in.interface_delay_ns, in.rate_bps);
  t.response = bytes_in(in.response_ns, in.rate_bps);
  t.last = in.lossless_frame;
  t.total = t.trigger + t.wait + t.pause + t.cable + t.interface + t.response + t.last;
  return t;
}

// The largest Ethernet frame (as stored, without FCS) of an IP MTU: a
// VLAN-tagged L2 header on top (dp::max_frame_bytes agrees).
constexpr uint32_t eth_max_frame(uint32_t ip_mtu) { return ip_mtu + 14 + 4; }

}  // namespace vf
