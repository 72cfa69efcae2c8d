// What decapsulation learned from the link and network headers it stripped:
// the addressing the engine checks a packet against and a UD work completion
// reports. Filled by ib_decapsulate / roce_decapsulate.
#pragma once

#include <cstdint>

namespace vf::wire {

// A RoCEv2 completion's sl, as mlx5 reports it (PRM: "L3 header type").
constexpr uint8_t kRoceCqeSlUdp = 0x8, kRoceCqeSlIpv6 = 0x1, kRoceCqeSlIpv4 = 0x2;

struct RxMeta {
  uint16_t slid = 0;
  uint16_t dlid = 0;
  uint8_t sl = 0;        // IB: the LRH's SL; RoCEv2: mlx5's packet type (below)
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
