// RoCEv2 framing: the engine's transport packet (BTH .. pad) in an mbuf becomes
// Ethernet [+ 802.1Q] + IPv4/IPv6 + UDP(4791) + BTH .. pad + ICRC, and back.
// Frames in mbufs carry no FCS and no padding to 60 bytes (see wire_bytes.hpp);
// received frames may carry padding, which decapsulation ignores.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/wire/rx_error.hpp"
#include "dataplane/wire/rx_meta.hpp"

namespace vf::wire {

struct RoceRoute {
  uint8_t src_mac[6] = {}, dst_mac[6] = {};
  bool vlan = false;  // add an 802.1Q tag carrying vid and pcp
  uint16_t vid = 0;
  uint8_t pcp = 0;
  uint8_t sgid[16] = {}, dgid[16] = {};
  uint8_t traffic_class = 0;  // DSCP << 2 | ECN
  uint8_t hop_limit = 64;     // IPv4 TTL / IPv6 hop limit
  uint16_t udp_sport = 0xC000;
};

// Whether a GID is an IPv4-mapped IPv6 address (::ffff:a.b.c.d).
bool gid_is_ipv4_mapped(const uint8_t* gid);

// Frames the single-segment mbuf `m`, whose data is BTH .. pad. IPv4 when
// both GIDs are IPv4-mapped (DF set, ID 0, header checksum set, UDP checksum
// 0), IPv6 otherwise (flow label 0, UDP checksum computed). Appends the ICRC.
// Returns false, leaving `m` untouched, when `m` is segmented, shorter than a
// BTH, too long for the IP length fields, or short of headroom/tailroom.
bool roce_encapsulate(rte_mbuf* m, const RoceRoute& route);

// Checks a received RoCEv2 frame in `m` and strips it to BTH .. pad (L2, L3,
// UDP, ICRC and any Ethernet padding removed). Every field is distrusted;
// nothing past the mbuf's data is read. On success fills `meta` (if not null):
// has_grh = true, sgid/dgid = the IP addresses (IPv4 as ::ffff:a.b.c.d),
// traffic_class = TOS / traffic class including ECN, sl = the 802.1Q PCP
// (0 untagged), LIDs 0. A non-zero UDP checksum is verified; zero is accepted.
// On failure neither `m` nor `meta` changes.
RxError roce_decapsulate(rte_mbuf* m, RxMeta* meta);

// What an ECN-marking switch does: sets CE in an ECN-capable IPv4/IPv6 frame
// (fixing the IPv4 header checksum; the ICRC does not cover ECN). True when
// the frame now carries CE; false when it is not ECN-capable or not IP.
bool roce_frame_mark_ce(rte_mbuf* m);

}  // namespace vf::wire
