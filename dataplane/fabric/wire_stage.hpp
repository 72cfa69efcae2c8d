// What a frame meets on the wire of one link direction, with its exact times:
// the seam where a capture tap (sees every frame as the sender put it on the
// wire) and impairments (loss, corruption) plug in, per direction, without
// the ports or the link's timing knowing about them.
//
// A stage is a context pointer and a plain function (null = nothing there),
// called once per frame as it departs, after its wire time is booked: a frame
// an impairment loses still occupied the wire, as on a real link. The tap
// runs first and sees what the sender sent; the impairment then decides.
#pragma once

#include <rte_mbuf.h>

#include "dataplane/fabric/wire_time.hpp"

namespace vf::dp {

// What becomes of a frame on the wire (the link carries it out).
enum class WireVerdict : uint8_t {
  kLose,       // never arrives (the link frees it and counts it)
  kPass,       // arrives as sent
  kDuplicate,  // arrives twice, back to back
  kHold,       // arrives after the next frame sent on this direction (reordered)
};

struct WireStage {
  void* ctx = nullptr;
  // `depart`: first bit on the wire; `arrive`: last bit at the far end. May
  // change the frame's bytes in place (corruption); must not keep `m`.
  WireVerdict (*on_frame)(void* ctx, rte_mbuf* m, const WireTime& depart, const WireTime& arrive) = nullptr;

  WireVerdict pass(rte_mbuf* m, const WireTime& depart, const WireTime& arrive) const {
    return on_frame ? on_frame(ctx, m, depart, arrive) : WireVerdict::kPass;
  }
};

}  // namespace vf::dp
