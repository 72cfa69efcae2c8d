// The boundary between the link-layer-agnostic engine and the port that frames
// its packets as IB (LRH/GRH) or RoCEv2 (Ethernet/IP/UDP). The engine deals only
// in the transport part of a packet: BTH, extended headers, payload and pad.
#pragma once

#include <infiniband/verbs.h>
#include <rte_mbuf.h>

#include <cstdint>

namespace vf::engine {

// What the port learned from the headers it stripped, for the engine's checks
// and for UD work completions.
struct RxMeta {
  uint16_t slid = 0;
  uint16_t dlid = 0;
  uint8_t sl = 0;
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

class PacketIo {
 public:
  virtual ~PacketIo() = default;
  // An mbuf with headroom for any L2/L3 header; nullptr when the pool is dry.
  virtual rte_mbuf* alloc() = 0;
  // Whether the port's egress queue can take another packet now. The engine
  // stops producing when it cannot, so nothing is dropped at the source.
  virtual bool can_transmit() const = 0;
  // Takes ownership of `m`, whose data holds BTH + extended headers + payload +
  // pad (BTH PadCnt set). The port adds L2/L3 headers and the CRCs.
  virtual void transmit(rte_mbuf* m, const ibv_ah_attr& av) = 0;
};

}  // namespace vf::engine
