// ARP for IPv4 over Ethernet (RFC 826): what an emulated host sends to learn
// a neighbour's MAC and answers for its own address.
//
//   HTYPE 1(16) | PTYPE 0x0800(16) | HLEN 6(8) | PLEN 4(8) | OPER(16)
//   | SHA(48) | SPA(32) | THA(48) | TPA(32)                 = 28 bytes
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace vf::wire {

inline constexpr unsigned kArpLen = 28;
inline constexpr uint16_t kArpRequest = 1;
inline constexpr uint16_t kArpReply = 2;

struct ArpMsg {
  uint16_t op = kArpRequest;
  std::array<uint8_t, 6> sha{};
  uint32_t spa = 0;  // host byte order
  std::array<uint8_t, 6> tha{};
  uint32_t tpa = 0;
};

void arp_put(uint8_t* p, const ArpMsg& m);
// nullopt unless `p` holds an Ethernet/IPv4 request or reply.
std::optional<ArpMsg> arp_parse(const uint8_t* p, size_t len);

}  // namespace vf::wire
