// QP0, the Subnet Management Interface (IBA 13.5.1, 14.2): where the daemon's
// subnet management agent receives and sends a vHCA port's SMPs. A datagram
// to QP0 counts only on VL15 -- an app's SL never maps to VL15, so no app can
// forge an SMP -- and goes, as one 256-byte MAD, to the hook the daemon set,
// on the lcore. SMPs leave on VL15 like any packet: captured, counted, and
// lost with a link that goes down.
#pragma once

#include <cstdint>
#include <functional>

namespace vf::engine {

inline constexpr uint32_t kSmiQpn = 0;

// The LIDs an SMP arrived with (the permissive LID 0xFFFF on a directed route).
struct SmiSource {
  uint16_t slid = 0;
  uint16_t dlid = 0;
};

// Called on the lcore with the 256 bytes of an SMP for QP0.
using SmiFn = std::function<void(const uint8_t* mad, const SmiSource& from)>;

}  // namespace vf::engine
