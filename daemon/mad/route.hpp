// How a MAD crosses the fabric (IBA 14.2.2, 18.2.4.3): a directed-route SMP
// hop by hop along its initial path, out of the port each hop names, whether
// or not a switch has routes yet; anything LID-routed through the switches'
// linear forwarding tables. Only cables that are up carry anything; LID
// routing also needs both ends Active (data packets) or, for an SMP on VL15,
// just the link up. A CA never forwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "daemon/mad/mad.hpp"
#include "daemon/mad/model.hpp"

namespace vf::mad {

struct Arrival {
  size_t node = 0;
  uint8_t in_port = 0;  // the port it came in on (a CA's 1 when it never left)
  unsigned hops = 0;
  uint8_t mtu = 5;       // the smallest MTU code of the links crossed (4096 when none)
  double gbps = 1e9;     // the slowest of them, nominal Gb/s (huge when none)
};

// A port's nominal data rate: lanes x the speed's lane rate (SDR 2.5 .. NDR 100).
double port_gbps(const ModelPort& p);

// A directed-route SMP from CA `src` (pure DR: permissive DrSLID and DrDLID).
// Fills the return path as it goes. nullopt: dropped on the way.
std::optional<Arrival> walk_directed(const MadModel& model, size_t src, Mad& m);

// A LID-routed packet from node `src` (a CA, or a switch answering) to
// `dlid`. `smp`: VL15 (links only need to be up).
std::optional<Arrival> walk_lid(const MadModel& model, size_t src, uint16_t dlid, bool smp);

}  // namespace vf::mad
