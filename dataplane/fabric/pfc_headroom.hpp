// A lossless priority group's thresholds from the 802.1Qbb delay model
// (core/pfc_headroom.hpp) and a port's PFC settings.
#pragma once

#include <cstdint>

#include "core/pfc_headroom.hpp"
#include "dataplane/fabric/eth_qos.hpp"
#include "dataplane/fabric/pfc.hpp"

namespace vf::dp {

// The settings' values where they are non-zero, else headroom = the model's
// total, XOFF = twice that (at least four frames: room for the bottleneck to
// keep sending through an XON's round trip) and XON two frames below XOFF.
PfcThresholds default_pfc_thresholds(uint64_t headroom, uint32_t max_frame, const PfcSettings& s);

}  // namespace vf::dp
