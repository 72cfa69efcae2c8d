// The boundary between a host's transport (the vHCA engine above) and the port
// that frames its packets as IB (LRH/GRH) or RoCEv2 (Ethernet/IP/UDP). The
// host deals only in the transport part of a packet -- BTH, extended headers,
// payload and pad -- and in a Route: the parts of an address vector the port
// needs, in the dataplane's own vocabulary (no libibverbs types down here).
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <functional>

#include "core/port_info.hpp"
#include "core/types.hpp"
#include "dataplane/wire/rx_meta.hpp"

namespace vf::dp {

struct Route {
  uint16_t dlid = 0;          // IB destination LID
  uint8_t sl = 0;             // IB service level; Ethernet priority (802.1Q PCP) = sl & 7
  uint8_t src_path_bits = 0;  // IB: low SLID bits within the port's LMC
  bool is_global = false;     // IB: carry a GRH; RoCEv2 requires it
  uint8_t sgid_index = 0;
  uint8_t hop_limit = 64;
  uint8_t traffic_class = 0;  // DSCP << 2 | ECN on RoCEv2
  uint32_t flow_label = 0;    // 20 bits
  Gid dgid{};
  // A multicast datagram with members on this port: the port also loops a
  // copy back to its own receive side, as an HCA does (never via the switch,
  // which does not send a packet back out of its ingress port).
  bool mcast_loopback = false;
  // IB subnet management (QP0): VL15 whatever the SL map says, SL 0, and
  // the permissive SLID when the port has no LID yet (IBA 14.2.2).
  bool vl15 = false;
};

class HostPort {
 public:
  virtual ~HostPort() = default;
  // An mbuf with headroom for any L2/L3 header; nullptr when the pool is dry.
  virtual rte_mbuf* alloc() = 0;
  // Whether the egress class that packets on `route` use (IB: the VL of its
  // SL; Ethernet: the priority of its DSCP or PCP) can take another packet now. Per class, so a VL
  // without credit or a paused priority stalls only the QPs that use it. The
  // host stops producing for that class when it cannot: nothing is dropped at
  // the source.
  virtual bool can_transmit(const Route& route) const = 0;
  // Takes ownership of `m`, whose data holds BTH + extended headers + payload +
  // pad (BTH PadCnt set). The port adds L2/L3 headers and the CRCs.
  virtual void transmit(rte_mbuf* m, const Route& route) = 0;
  // The port's attributes (LID, state, MTU, GIDs, ...): the one record the
  // host's query_port reports, kept current by the port's owner.
  virtual const PortInfo& info() const = 0;
  // Control path: what packets on `route` need before the first can leave,
  // resolved now -- a RoCE next hop's MAC, as the kernel resolves it when
  // modify_qp sets an address vector or create_ah makes one. `done(0)` once
  // known (at once when nothing is needed, as on IB), ETIMEDOUT when the
  // neighbour does not answer within a second, ENETUNREACH with no route.
  virtual void resolve(const Route& route, std::function<void(int err)> done) {
    (void)route;
    done(0);
  }
};

}  // namespace vf::dp
