// 802.1Qaz Enhanced Transmission Selection on an Ethernet port's egress, in
// mlnx_qos words: prio_tc maps each priority to a traffic class, tsa makes a
// class strict or ETS, tc_bw gives the ETS classes their share.
//
// Strict classes go first, the highest TC first. What they leave is shared by
// the ETS classes with deficit weighted round robin: each turn a class with
// something to send gets bw x kQuantumPerPercent bytes of credit and sends
// while its head fits; credit left over carries to its next turn (so shares
// hold for any frame size) and a class with nothing to send keeps none. ETS
// classes with 0 % send only when no other class can. Inside a class its
// priorities take turns, one frame each.
//
// Queues stay per priority -- PFC pauses one priority, never its neighbours
// in the class, and counters are per priority as mlx5's are -- the class is
// how they are scheduled.
#pragma once

#include <array>
#include <cstdint>

#include "dataplane/fabric/eth_qos.hpp"

namespace vf::dp {

// Large enough that 1 % moves a 1500-byte frame in two turns; small enough
// that a class's burst (100 % = 100 KiB) stays short next to a pause.
inline constexpr int32_t kQuantumPerPercent = 1024;

// EtsConfig in the form the arbiter walks (computed once per port).
struct EtsPlan {
  std::array<uint8_t, 8> tc_prios{};  // bit p: priority p is in the class
  uint8_t strict = 0;                 // bit tc: strict class with priorities
  uint8_t shared = 0;                 // bit tc: ETS class with a share and priorities
  uint8_t leftover = 0;               // bit tc: ETS class with 0 % and priorities
  std::array<int32_t, 8> quantum{};
};

EtsPlan make_ets_plan(const EtsConfig& c);

// Where the DWRR stands.
struct EtsCursor {
  uint8_t tc = 0;        // the class whose turn it is
  bool granted = false;  // it got its quantum this turn
  int8_t charged = -1;   // the class the last pick is charged to (-1: none)
  std::array<int32_t, 8> deficit{};
  std::array<uint8_t, 8> next_prio{};  // round robin inside each class
};

}  // namespace vf::dp
