// IPv6 Neighbour Discovery (RFC 4861): Neighbour Solicitation and
// Advertisement, the IPv6 counterpart of ARP. An NS goes to the target's
// solicited-node multicast address (ff02::1:ffXX:XXXX, MAC 33:33:ff:XX:XX:XX)
// with the sender's link-layer address as an option; the NA answers with the
// target's. Both travel with hop limit 255, which a receiver checks: a
// message that crossed a router is forged.
//
//   IPv6 header (40, next header 58) | Type(8) Code 0(8) Checksum(16)
//   | R S O flags(3) Reserved(29) [NA] or Reserved(32) [NS] | Target(128)
//   | option: Type 1 (source) / 2 (target) LLA, Length 1 (8 bytes), MAC
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace vf::wire {

using Ipv6Addr = std::array<uint8_t, 16>;
using MacAddr = std::array<uint8_t, 6>;

inline constexpr uint8_t kIpProtoIcmpv6 = 58;
inline constexpr uint8_t kNdSolicit = 135;
inline constexpr uint8_t kNdAdvert = 136;
inline constexpr unsigned kNdLen = 40 + 32;  // IPv6 header + NS/NA with one LLA option
inline constexpr uint32_t kNdRouter = 1u << 31, kNdSolicited = 1u << 30, kNdOverride = 1u << 29;

struct NdMsg {
  uint8_t type = kNdSolicit;
  Ipv6Addr src{}, dst{}, target{};
  uint32_t flags = 0;  // NA: kNdSolicited | kNdOverride ...
  bool has_lla = false;
  MacAddr lla{};  // the source (NS) or target (NA) link-layer address
};

// Writes the IPv6 header and the message (kNdLen bytes) with its checksum.
void nd_put(uint8_t* ip6, const NdMsg& m);
// nullopt unless `ip6` holds a valid NS or NA: hop limit 255, code 0, a good
// checksum, the options well formed.
std::optional<NdMsg> nd_parse(const uint8_t* ip6, size_t len);

Ipv6Addr solicited_node(const Ipv6Addr& target);
MacAddr ipv6_multicast_mac(const Ipv6Addr& group);  // 33:33 + the group's last 32 bits

}  // namespace vf::wire
