// Vocabulary shared by every fabric element: traffic classes and link
// parameters (link layer, GID, MAC and VL15 come from core/types.hpp).
#pragma once

#include <array>
#include <cstddef>  // before scheduler.hpp, which uses size_t unqualified
#include <cstdint>

#include "core/scheduler.hpp"
#include "core/types.hpp"

namespace vf::dp {

using vf::Gid;
using vf::kVl15;
using vf::LinkLayer;
using vf::Mac;

// Egress/ingress classes of a port. IB: data VLs 0-7 are classes 0-7 and VL15
// (subnet management, never flow controlled) is kMgmtClass. Ethernet: the eight
// 802.1p priorities are classes 0-7; kMgmtClass stays empty. kCtrlClass carries
// link-level control frames (IB flow-control packets, 802.3x/802.1Qbb PAUSE):
// they jump every data queue and are never gated, as on real links.
inline constexpr unsigned kNumDataClasses = 8;
inline constexpr unsigned kMgmtClass = 8;
inline constexpr unsigned kCtrlClass = 9;
inline constexpr unsigned kNumClasses = 10;

// One direction's worth of physical parameters; both directions of a link share
// them. `rate_bps` is the data rate after line coding (4x EDR = 100 Gb/s; the
// daemon derives it from width x speed, daemon/config/link_attrs.hpp). `mtu` is the IBA path MTU (256..4096, payload bytes) on IB and
// the IP MTU (e.g. 1500) on Ethernet; the largest frame a port accepts is
// derived from it (max_frame_bytes).
struct LinkParams {
  uint64_t rate_bps = 100'000'000'000ULL;
  Nanos delay_ns = 0;
  uint32_t mtu = 4096;
};

// Largest frame (as stored in the mbuf, i.e. without Ethernet FCS) a port with
// this MTU sends. IB: LRH 8 + GRH 40 + BTH 12 + the largest extended headers
// (DETH 8 + RETH 16 + ImmDt 4, or AtomicETH 28) + pad 3 + ICRC 4 + VCRC 2, with
// slack; Ethernet: the IP MTU plus a VLAN-tagged L2 header.
inline constexpr uint32_t max_frame_bytes(LinkLayer ll, uint32_t mtu) {
  return ll == LinkLayer::kInfiniBand ? mtu + 128 : mtu + 14 + 4;
}

}  // namespace vf::dp
