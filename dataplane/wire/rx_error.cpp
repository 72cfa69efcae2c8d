#include "dataplane/wire/rx_error.hpp"

namespace vf::wire {

const char* rx_error_name(RxError e) {
  switch (e) {
    case RxError::kOk: return "ok";
    case RxError::kTruncated: return "truncated";
    case RxError::kNonContiguous: return "non_contiguous";
    case RxError::kBadLength: return "bad_length";
    case RxError::kBadVersion: return "bad_version";
    case RxError::kBadLnh: return "bad_lnh";
    case RxError::kBadNextHeader: return "bad_next_header";
    case RxError::kBadVcrc: return "bad_vcrc";
    case RxError::kBadIcrc: return "bad_icrc";
    case RxError::kBadEtherType: return "bad_ethertype";
    case RxError::kBadIpChecksum: return "bad_ip_checksum";
    case RxError::kFragmented: return "fragmented";
    case RxError::kNotRoce: return "not_roce";
    case RxError::kBadUdpChecksum: return "bad_udp_checksum";
  }
  return "unknown";
}

}  // namespace vf::wire
