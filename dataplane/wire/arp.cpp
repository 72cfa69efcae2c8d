#include "dataplane/wire/arp.hpp"

#include <cstring>

#include "dataplane/wire/bytes.hpp"

namespace vf::wire {

void arp_put(uint8_t* p, const ArpMsg& m) {
  put16(p, 1);
  put16(p + 2, 0x0800);
  p[4] = 6;
  p[5] = 4;
  put16(p + 6, m.op);
  std::memcpy(p + 8, m.sha.data(), 6);
  put32(p + 14, m.spa);
  std::memcpy(p + 18, m.tha.data(), 6);
  put32(p + 24, m.tpa);
}

std::optional<ArpMsg> arp_parse(const uint8_t* p, size_t len) {
  if (len < kArpLen || get16(p) != 1 || get16(p + 2) != 0x0800 || p[4] != 6 || p[5] != 4) return std::nullopt;
  ArpMsg m;
  m.op = get16(p + 6);
  if (m.op != kArpRequest && m.op != kArpReply) return std::nullopt;
  std::memcpy(m.sha.data(), p + 8, 6);
  m.spa = get32(p + 14);
  std::memcpy(m.tha.data(), p + 18, 6);
  m.tpa = get32(p + 24);
  return m;
}

}  // namespace vf::wire
