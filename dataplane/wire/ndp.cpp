#include "dataplane/wire/ndp.hpp"

#include <cstring>

#include "dataplane/wire/bytes.hpp"
#include "dataplane/wire/checksum.hpp"
#include "dataplane/wire/ipv6.hpp"

namespace vf::wire {
namespace {

constexpr unsigned kIcmpOff = kIpv6HdrLen;
constexpr uint8_t kOptSourceLla = 1, kOptTargetLla = 2;

// RFC 4443 §2.3: over the pseudo-header (addresses, upper-layer length, next
// header) and the message.
uint16_t icmpv6_sum(const uint8_t* ip6, size_t icmp_len) {
  uint8_t tail[8] = {};
  put32(tail, uint32_t(icmp_len));
  tail[7] = kIpProtoIcmpv6;
  uint16_t s = inet_sum(ip6 + 8, 32);
  s = inet_add(s, inet_sum(tail, 8));
  return inet_add(s, inet_sum(ip6 + kIcmpOff, icmp_len));
}

}  // namespace

void nd_put(uint8_t* h, const NdMsg& m) {
  std::memset(h, 0, kNdLen);
  ipv6_set_version(h, 6);
  ipv6_set_payload_len(h, kNdLen - kIpv6HdrLen);
  ipv6_set_next_header(h, kIpProtoIcmpv6);
  ipv6_set_hop_limit(h, 255);
  ipv6_set_src(h, m.src.data());
  ipv6_set_dst(h, m.dst.data());
  uint8_t* icmp = h + kIcmpOff;
  icmp[0] = m.type;
  if (m.type == kNdAdvert) put32(icmp + 4, m.flags);
  std::memcpy(icmp + 8, m.target.data(), 16);
  icmp[24] = m.type == kNdSolicit ? kOptSourceLla : kOptTargetLla;
  icmp[25] = 1;
  std::memcpy(icmp + 26, m.lla.data(), 6);
  put16(icmp + 2, uint16_t(~icmpv6_sum(h, kNdLen - kIpv6HdrLen)));
}

std::optional<NdMsg> nd_parse(const uint8_t* h, size_t len) {
  if (len < kIpv6HdrLen + 24 || ipv6_version(h) != 6 || ipv6_next_header(h) != kIpProtoIcmpv6) return std::nullopt;
  const size_t icmp_len = ipv6_payload_len(h);
  if (icmp_len < 24 || kIpv6HdrLen + icmp_len > len || ipv6_hop_limit(h) != 255) return std::nullopt;
  const uint8_t* icmp = h + kIcmpOff;
  if ((icmp[0] != kNdSolicit && icmp[0] != kNdAdvert) || icmp[1] != 0) return std::nullopt;
  // Options are 8-byte units, so the length is even (inet_sum chains only that).
  if (icmp_len % 2 || icmpv6_sum(h, icmp_len) != 0xFFFF) return std::nullopt;
  NdMsg m;
  m.type = icmp[0];
  std::memcpy(m.src.data(), ipv6_src(h), 16);
  std::memcpy(m.dst.data(), ipv6_dst(h), 16);
  if (m.type == kNdAdvert) m.flags = get32(icmp + 4);
  std::memcpy(m.target.data(), icmp + 8, 16);
  const uint8_t want = m.type == kNdSolicit ? kOptSourceLla : kOptTargetLla;
  for (size_t o = 24; o < icmp_len;) {
    if (o + 2 > icmp_len || icmp[o + 1] == 0 || o + 8u * icmp[o + 1] > icmp_len) return std::nullopt;
    if (icmp[o] == want && icmp[o + 1] == 1) {
      m.has_lla = true;
      std::memcpy(m.lla.data(), icmp + o + 2, 6);
    }
    o += 8u * icmp[o + 1];
  }
  return m;
}

Ipv6Addr solicited_node(const Ipv6Addr& target) {
  Ipv6Addr a{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff};
  std::memcpy(a.data() + 13, target.data() + 13, 3);
  return a;
}

MacAddr ipv6_multicast_mac(const Ipv6Addr& group) {
  return {0x33, 0x33, group[12], group[13], group[14], group[15]};
}

}  // namespace vf::wire
