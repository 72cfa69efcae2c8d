// One line describing a frame for a person reading a capture, in tcpdump's
// spirit: IB flow-control packets, LRH addressing, and for IB and RoCEv2 alike
// the BTH (transport, opcode, destination QP, PSN). Reads only what `len`
// bytes hold (a snapped or hostile frame gives a shorter line, never a read
// past it). Slow path: the control thread formats captures with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace vf::wire {

// `ib`: the frame starts with an LRH or is an FCP; else with an Ethernet header.
std::string frame_summary(const uint8_t* p, size_t len, bool ib);

}  // namespace vf::wire
