#include "dataplane/wire/fcp.hpp"

#include "dataplane/wire/bytes.hpp"
#include "dataplane/wire/crc.hpp"

namespace vf::wire {

void fcp_put(uint8_t* b, const Fcp& f) {
  put16(b, uint16_t(uint16_t(f.op) << 12 | (f.fctbs & kCreditMask)));
  put16(b + 2, uint16_t((f.vl & 0xF) << 12 | (f.fccl & kCreditMask)));
  put_le16(b + 4, crc16_iba(0, b, 4));
}

FcpError fcp_parse(const uint8_t* b, size_t len, Fcp& out) {
  if (len != kFcpLen) return FcpError::kLength;
  if (get_le16(b + 4) != crc16_iba(0, b, 4)) return FcpError::kLpcrc;
  const uint8_t op = b[0] >> 4;
  if (op > uint8_t(FcpOp::kInit)) return FcpError::kOp;
  out.op = FcpOp(op);
  out.fctbs = get16(b) & kCreditMask;
  out.vl = b[2] >> 4;
  out.fccl = get16(b + 2) & kCreditMask;
  return FcpError::kOk;
}

}  // namespace vf::wire
