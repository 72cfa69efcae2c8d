// Why a received frame was refused. Ports count these per reason, as real
// HCAs and switches do (PortRcvErrors and friends), so a lab can see why.
#pragma once

#include <cstdint>

namespace vf::wire {

enum class RxError : uint8_t {
  kOk = 0,
  kTruncated,       // shorter than its own length fields (or than any header)
  kNonContiguous,   // multi-segment mbuf: framing needs one flat buffer
  kBadLength,       // length fields inconsistent with each other or too small
  kBadVersion,      // LRH LVer != 0, GRH IPVer != 6, IP version wrong
  kBadLnh,          // LRH LNH is raw or non-IBA IP
  kBadNextHeader,   // GRH NxtHdr is not an IBA transport header
  kBadVcrc,
  kBadIcrc,
  kBadEtherType,    // neither IPv4 nor IPv6 (after an optional 802.1Q tag)
  kBadIpChecksum,
  kFragmented,      // IPv4 fragment: RoCEv2 is never fragmented
  kNotRoce,         // not UDP, or UDP not to port 4791
  kBadUdpChecksum,  // a non-zero UDP checksum that does not match
};
inline constexpr unsigned kRxErrorCount = unsigned(RxError::kBadUdpChecksum) + 1;

// Stable snake_case names for counters and logs ("ok", "bad_icrc", ...).
const char* rx_error_name(RxError e);

}  // namespace vf::wire
