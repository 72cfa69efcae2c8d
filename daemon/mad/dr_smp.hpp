// A directed-route SMP hop by hop (IBA 14.2.2, C14-9 to C14-13), for the
// pure directed routes fabricd's vHCAs send (DrSLID and DrDLID permissive):
// what a node does with one it starts, receives or answers. The hop pointer
// and the return path change on the MAD itself, as they do on the wire:
// outgoing, each node writes the port it came in by at return_path[hop] and
// sends by initial_path[hop + 1]; at the end the hop pointer is hop_cnt + 1;
// the response retraces return_path down to hop pointer 0 at the requester.
#pragma once

#include <cstdint>

#include "daemon/mad/mad.hpp"

namespace vf::mad {

enum class DrStep : uint8_t {
  kDrop,   // a path that cannot be followed: discarded, as C14-9 says
  kOut,    // sent out of `port`
  kLocal,  // for this node: its SMA (outgoing) or the requester (returning)
};

struct DrAction {
  DrStep step = DrStep::kDrop;
  uint8_t port = 0;
};

// The requester starts `m` (hop pointer 0, D clear). hop_cnt 0: its own SMA.
DrAction dr_start(Mad& m);
// A node with `nports` ports received `m` on `in_port`.
DrAction dr_receive(Mad& m, bool is_switch, uint8_t in_port, unsigned nports);
// The SMA answered `m` (now a response with D set): where it leaves from.
DrAction dr_respond(Mad& m);

}  // namespace vf::mad
