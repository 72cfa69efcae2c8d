// What decapsulation learned from the link and network headers it stripped:
// the addressing the engine checks a packet against and a UD work completion
// reports. Filled by ib_decapsulate / roce_decapsulate.
#pragma once

#include <cstdint>

namespace vf::wire {

struct RxMeta {
  uint16_t slid = 0;
  uint16_t dlid = 0;
  uint8_t sl = 0;
  uint8_t vl = 0;        // IB: the LRH's VL (QP0 takes VL15 only)
  bool has_grh = false;  // IB GRH present, or always for RoCEv2
  uint8_t sgid[16] = {};
  uint8_t dgid[16] = {};
  uint8_t traffic_class = 0;  // incl. ECN bits for RoCEv2
  // When has_grh: the 40 bytes a UD receive finds at the head of its buffer,
  // as the port received them -- the IB GRH, the RoCEv2 IPv6 header, or for
  // RoCEv2 over IPv4 20 zero bytes then the IPv4 header (as mlx5 scatters
  // it, and as ibv_init_ah_from_wc parses it).
  uint8_t grh[40] = {};
};

}  // namespace vf::wire
