#include "dataplane/wire/icrc.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "dataplane/wire/crc.hpp"
#include "dataplane/wire/grh.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "dataplane/wire/ipv6.hpp"
#include "dataplane/wire/lrh.hpp"
#include "dataplane/wire/transport.hpp"
#include "dataplane/wire/udp.hpp"

namespace vf::wire {
namespace {

constexpr unsigned kBthResv8aOffset = 4;  // FECN, BECN, resv6

// IPv6 header / GRH: TClass (low nibble of byte 0 and high nibble of byte 1),
// FlowLabel (rest of bytes 1..3) and HopLmt (byte 7) become ones.
void mask_ipv6(uint8_t* h) {
  h[0] |= 0x0F;
  h[1] = h[2] = h[3] = 0xFF;
  h[7] = 0xFF;
}

// CRCs a packet whose first `n` bytes are headers with variant fields, after
// `ones` (eight 0xFF bytes standing for the LRH) if set. The headers are
// masked in a copy on the stack and the payload is read in place. Short
// packets are copied whole and longer ones with some payload, so that each
// CRC run is long enough for the carry-less-multiply engine (>= 64 bytes).
// A caller that broke the length precondition gets a wrong CRC, never a read
// past `len`.
template <class Mask>
uint32_t masked_crc(bool ones, const uint8_t* p, size_t n, size_t len, Mask mask) {
  constexpr size_t kWhole = 256, kHeadRun = 128;
  alignas(16) uint8_t buf[8 + kWhole];  // IPv4 with options + UDP + BTH <= 80
  assert(n <= len);
  const size_t pre = ones ? 8 : 0;
  if (ones) std::memset(buf, 0xFF, 8);
  const size_t copy = len <= kWhole ? len : std::max(std::min(n, len), kHeadRun);
  std::memcpy(buf + pre, p, copy);
  mask(buf + pre);  // positions < 80, inside buf even when copy is shorter
  const uint32_t crc = crc32_ieee(0, buf, pre + copy);
  return crc32_ieee(crc, p + copy, len - copy);
}

}  // namespace

uint32_t icrc_ib(const uint8_t* lrh, size_t len) {
  if (lrh_lnh(lrh) == kLnhIbaGlobal) {
    constexpr size_t n = kGrhLen + kBthLen;
    assert(len >= kLrhLen + n);
    if (len < kLrhLen) len = kLrhLen;
    return masked_crc(true, lrh + kLrhLen, n, len - kLrhLen, [](uint8_t* h) {
      mask_ipv6(h);
      h[kGrhLen + kBthResv8aOffset] = 0xFF;
    });
  }
  constexpr size_t n = kLrhLen + kBthLen;
  assert(len >= n);
  return masked_crc(false, lrh, n, len, [](uint8_t* h) {
    h[0] |= 0xF0;  // VL
    h[kLrhLen + kBthResv8aOffset] = 0xFF;
  });
}

uint32_t icrc_roce(const uint8_t* l3, size_t len) {
  if (ipv4_version(l3) == 4) {
    const size_t ihl = ipv4_ihl(l3) * 4u;
    const size_t n = ihl + kUdpHdrLen + kBthLen;
    assert(ihl >= kIpv4HdrLen && len >= n);
    return masked_crc(true, l3, n, len, [ihl](uint8_t* h) {
      h[1] = 0xFF;                  // TOS
      h[8] = 0xFF;                  // TTL
      h[10] = h[11] = 0xFF;         // header checksum
      h[ihl + 6] = h[ihl + 7] = 0xFF;  // UDP checksum
      h[ihl + kUdpHdrLen + kBthResv8aOffset] = 0xFF;
    });
  }
  constexpr size_t n = kIpv6HdrLen + kUdpHdrLen + kBthLen;
  assert(len >= n);
  return masked_crc(true, l3, n, len, [](uint8_t* h) {
    mask_ipv6(h);
    h[kIpv6HdrLen + 6] = h[kIpv6HdrLen + 7] = 0xFF;
    h[kIpv6HdrLen + kUdpHdrLen + kBthResv8aOffset] = 0xFF;
  });
}

uint16_t vcrc(const uint8_t* lrh, size_t len) { return crc16_iba(0, lrh, len); }

}  // namespace vf::wire
