#include "dataplane/wire/udp.hpp"

#include "dataplane/wire/checksum.hpp"
#include "dataplane/wire/ipv4.hpp"

namespace vf::wire {
namespace {

// Pseudo-header sums: addresses, protocol and the UDP length (RFC 768, RFC 8200 §8.1).
uint16_t pseudo_ipv4(const uint8_t* ip4, size_t udp_len) {
  uint16_t s = inet_sum(ip4 + 12, 8);
  s = inet_add(s, kIpProtoUdp);
  return inet_add(s, uint16_t(udp_len));
}

uint16_t pseudo_ipv6(const uint8_t* ip6, size_t udp_len) {
  uint16_t s = inet_sum(ip6 + 8, 32);
  s = inet_add(s, uint16_t(udp_len >> 16));
  s = inet_add(s, uint16_t(udp_len));
  return inet_add(s, kIpProtoUdp);
}

uint16_t finish(uint16_t pseudo, const uint8_t* u, size_t udp_len) {
  // Header without its checksum field, then the payload.
  uint16_t s = inet_add(pseudo, inet_sum(u, 6));
  s = inet_add(s, inet_sum(u + kUdpHdrLen, udp_len - kUdpHdrLen));
  const uint16_t c = uint16_t(~s);
  return c == 0 ? 0xFFFF : c;
}

bool verify(uint16_t pseudo, const uint8_t* u, size_t udp_len) {
  return inet_add(pseudo, inet_sum(u, udp_len)) == 0xFFFF;
}

}  // namespace

uint16_t udp_checksum_ipv4(const uint8_t* ip4, const uint8_t* u, size_t udp_len) {
  return finish(pseudo_ipv4(ip4, udp_len), u, udp_len);
}
uint16_t udp_checksum_ipv6(const uint8_t* ip6, const uint8_t* u, size_t udp_len) {
  return finish(pseudo_ipv6(ip6, udp_len), u, udp_len);
}
bool udp_checksum_ok_ipv4(const uint8_t* ip4, const uint8_t* u, size_t udp_len) {
  return verify(pseudo_ipv4(ip4, udp_len), u, udp_len);
}
bool udp_checksum_ok_ipv6(const uint8_t* ip6, const uint8_t* u, size_t udp_len) {
  return verify(pseudo_ipv6(ip6, udp_len), u, udp_len);
}

}  // namespace vf::wire
