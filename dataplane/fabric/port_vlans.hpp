// A bridge port's VLAN membership, as `bridge vlan` shows it: the VLANs the
// port carries, which of them leave untagged, and the PVID that untagged and
// priority-tagged (VID 0) frames join on ingress. A frame whose VLAN the
// ingress port is not a member of is dropped (ingress filtering), and one is
// never sent out of a port that is not a member of its VLAN.
//
// The default is every port an untagged member of VLAN 1 with PVID 1 (Linux's
// default_pvid), i.e. a plain unaware bridge for untagged traffic.
#pragma once

#include <bitset>
#include <cstdint>

namespace vf::dp {

inline constexpr uint16_t kDefaultVid = 1;
inline constexpr uint16_t kMaxVid = 4094;  // 0 = priority tag, 4095 reserved

struct PortVlans {
  uint16_t pvid = kDefaultVid;  // 0: untagged frames are dropped
  std::bitset<4096> member;
  std::bitset<4096> untagged;

  PortVlans() { set_access(kDefaultVid); }
  // Untagged member of `vid` only, which is also the PVID.
  void set_access(uint16_t vid) {
    member.reset();
    untagged.reset();
    member.set(vid);
    untagged.set(vid);
    pvid = vid;
  }
  // Also carries `vid`, tagged.
  void add_tagged(uint16_t vid) {
    member.set(vid);
    untagged.reset(vid);
  }
  bool carries(uint16_t vid) const { return vid >= 1 && vid <= kMaxVid && member.test(vid); }
};

}  // namespace vf::dp
