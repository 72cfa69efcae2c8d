#include "dataplane/wire/pfc.hpp"

#include <cstring>

#include "dataplane/wire/bytes.hpp"
#include "dataplane/wire/eth.hpp"

namespace vf::wire {

void pfc_put(uint8_t* f, const uint8_t* src_mac, const PfcFrame& p) {
  std::memset(f, 0, kPfcFrameLen);
  eth_set_dst(f, kPfcDst);
  eth_set_src(f, src_mac);
  eth_set_type(f, kEtherTypeMacControl);
  uint8_t* b = f + kEthHdrLen;
  put16(b, kMacControlPfc);
  put16(b + 2, p.enable);
  for (unsigned i = 0; i < 8; ++i) put16(b + 4 + 2 * i, p.quanta[i]);
}

const char* pfc_error_name(PfcError e) {
  switch (e) {
    case PfcError::kOk: return "ok";
    case PfcError::kLength: return "too short for a PFC frame";
    case PfcError::kDst: return "not sent to 01:80:c2:00:00:01";
    case PfcError::kTagged: return "802.1Q-tagged MAC Control frame";
    case PfcError::kEtherType: return "not a MAC Control frame";
    case PfcError::kOpcode: return "MAC Control opcode other than PFC";
  }
  return "?";
}

PfcError pfc_parse(const uint8_t* f, size_t len, PfcFrame& out) {
  if (len < kEthHdrLen) return PfcError::kLength;
  const uint16_t type = eth_type(f);
  if (type == kEtherTypeVlan) {
    if (len >= kEthHdrLen + kVlanLen && get16(f + kEthTypeOffset + kVlanLen) == kEtherTypeMacControl)
      return PfcError::kTagged;
    return PfcError::kEtherType;
  }
  if (type != kEtherTypeMacControl) return PfcError::kEtherType;
  if (len < kEthHdrLen + 2) return PfcError::kLength;
  const uint8_t* b = f + kEthHdrLen;
  if (get16(b) != kMacControlPfc) return PfcError::kOpcode;
  if (len < kEthHdrLen + kPfcBodyLen) return PfcError::kLength;
  if (std::memcmp(eth_dst(f), kPfcDst, kEthAddrLen) != 0) return PfcError::kDst;
  out.enable = uint8_t(get16(b + 2));
  for (unsigned i = 0; i < 8; ++i) out.quanta[i] = get16(b + 4 + 2 * i);
  return PfcError::kOk;
}

}  // namespace vf::wire
