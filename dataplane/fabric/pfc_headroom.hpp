// How much a lossless priority group must still take after it decided to send
// XOFF: the IEEE 802.1Qbb (Annex N) delay model, in the terms of this
// emulator's own timing so the figure is an upper bound of what really
// arrives. From the arrival that crosses XOFF (itself up to a frame):
//   wait       the PFC frame waits for the frame this port is sending (the
//              largest frame on the link, on the wire: FCS, preamble, IFG);
//   pause      the PFC frame's own 64 bytes + preamble + IFG;
//   cable      the link's propagation delay, there and back;
//   interface  PHY/MAC delay per direction (0 on emulated ports, which have none);
//   response   the peer's reaction time before it stops starting frames;
//   last       the largest lossless frame the peer started just before that.
// Data keeps arriving at the link rate through wait..response, so those terms
// are their time times the rate; every term is in bytes.
#pragma once

#include <cstdint>

#include "dataplane/fabric/types.hpp"

namespace vf::dp {

struct HeadroomInputs {
  uint64_t rate_bps = 0;
  Nanos cable_delay_ns = 0;      // one way: the link's configured delay
  uint32_t max_frame = 0;        // largest frame on the link (as stored: no FCS)
  uint32_t lossless_frame = 0;   // largest frame of the lossless priority
  Nanos response_ns = 0;         // the peer's
  Nanos interface_delay_ns = 0;  // per direction
};

struct HeadroomTerms {
  uint64_t trigger, wait, pause, cable, interface, response, last;
  uint64_t total;
};

HeadroomTerms pfc_headroom(const HeadroomInputs& in);

struct PfcSettings;
struct PfcThresholds;
// A lossless group's thresholds: the settings' where they are non-zero, else
// headroom = the model's total, XOFF = twice that (at least four frames: room
// for the bottleneck to keep sending through an XON's round trip) and XON two
// frames below XOFF.
PfcThresholds default_pfc_thresholds(uint64_t headroom, uint32_t max_frame, const PfcSettings& s);

}  // namespace vf::dp
