// Parsing a received transport packet (BTH at data offset 0, ICRC removed) and
// building one to transmit. Header fields are read through dataplane/wire
// accessors only; nothing is cast to a struct.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/wire/opcode.hpp"
#include "dataplane/wire/transport.hpp"

namespace vf::engine {

struct Pkt {
  uint8_t* bth = nullptr;
  uint8_t opcode = 0;
  uint16_t flags = 0;  // wire::HdrFlag
  uint32_t psn = 0;
  uint32_t dqpn = 0;
  bool ackreq = false;
  bool se = false;
  uint8_t* ext = nullptr;  // first extended header (after BTH)
  uint8_t* imm = nullptr;  // ImmDt/IETH when present
  uint8_t* aeth = nullptr;
  uint8_t* payload = nullptr;
  uint32_t paylen = 0;
};

// Validates lengths and opcode (valid for its transport, kOps); false for
// anything malformed and for CNPs, which carry no transport payload.
inline bool parse_packet(rte_mbuf* m, Pkt& p) {
  using namespace vf::wire;
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (len < kBthLen) return false;
  uint8_t* b = rte_pktmbuf_mtod(m, uint8_t*);
  p.bth = b;
  p.opcode = bth_opcode(b);
  const OpDesc& d = op_desc(p.opcode);
  if (!d.valid || bth_tver(b) != 0 || p.opcode == kOpcodeCnp) return false;
  p.flags = d.flags;
  const unsigned ext = d.at.payload;
  const unsigned pad = bth_padcnt(b);
  if (len < kBthLen + ext + pad) return false;
  p.psn = bth_psn(b);
  p.dqpn = bth_dqpn(b);
  p.ackreq = bth_ackreq(b);
  p.se = bth_se(b);
  uint8_t* h = b + kBthLen;
  p.ext = h;
  p.aeth = d.at.aeth == kAbsent ? nullptr : h + d.at.aeth;
  p.imm = d.at.imm == kAbsent ? nullptr : h + d.at.imm;
  h += ext;
  p.payload = h;
  p.paylen = len - kBthLen - ext - pad;
  if (!(d.flags & kHasPayload) && p.paylen != 0) return false;
  return true;
}

// Fills a BTH (TVer 0, no FECN/BECN, MigReq 0) with the sending QP's P_Key.
inline void put_bth(uint8_t* b, uint8_t opcode, bool se, unsigned pad, uint32_t dqpn, bool ackreq,
                    uint32_t psn, uint16_t pkey) {
  using namespace vf::wire;
  b[1] = 0;
  b[4] = 0;
  bth_set_opcode(b, opcode);
  bth_set_se(b, se);
  bth_set_padcnt(b, pad);
  bth_set_tver(b, 0);
  bth_set_pkey(b, pkey);
  bth_set_dqpn(b, dqpn);
  bth_set_ackreq(b, ackreq);
  bth_set_psn(b, psn);
}

// IBA 10.9.3: two P_Keys match when their partitions (low 15 bits) are equal
// and at least one of them is a full member (bit 15); two limited members
// cannot talk.
inline bool pkeys_match(uint16_t a, uint16_t b) {
  return (a & 0x7FFF) == (b & 0x7FFF) && (a & 0x7FFF) != 0 && ((a | b) & 0x8000);
}

}  // namespace vf::engine
