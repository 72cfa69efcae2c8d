// IBA BTH opcodes (Vol. 1 table 38) and what each carries: one constexpr
// table (kOps) of legality, header flags, header offsets and names, which
// parsing, packet building and tracing all read, so they cannot disagree on
// layout. The provider's and the engine's work-request checks are tested
// against it (device/engine/wr_ops.hpp).
#pragma once

#include <array>
#include <cstdint>

#include "dataplane/wire/transport.hpp"

namespace vf::wire {

enum class Transport : uint8_t { kRC = 0, kUC = 1, kRD = 2, kUD = 3, kCNP = 4 };

enum Op : uint8_t {
  kSendFirst = 0x00,
  kSendMiddle = 0x01,
  kSendLast = 0x02,
  kSendLastImm = 0x03,
  kSendOnly = 0x04,
  kSendOnlyImm = 0x05,
  kWriteFirst = 0x06,
  kWriteMiddle = 0x07,
  kWriteLast = 0x08,
  kWriteLastImm = 0x09,
  kWriteOnly = 0x0A,
  kWriteOnlyImm = 0x0B,
  kReadRequest = 0x0C,
  kReadRespFirst = 0x0D,
  kReadRespMiddle = 0x0E,
  kReadRespLast = 0x0F,
  kReadRespOnly = 0x10,
  kAck = 0x11,
  kAtomicAck = 0x12,
  kCompareSwap = 0x13,
  kFetchAdd = 0x14,
  kSendLastInv = 0x16,
  kSendOnlyInv = 0x17,
};

inline constexpr uint8_t opcode(Transport t, Op op) { return uint8_t(uint8_t(t) << 5 | op); }
inline constexpr Transport opcode_transport(uint8_t opc) { return Transport(opc >> 5); }
inline constexpr Op opcode_op(uint8_t opc) { return Op(opc & 0x1F); }
// RoCEv2 congestion notification packet (Annex A17): BTH opcode 0x81.
inline constexpr uint8_t kOpcodeCnp = 0x81;

// Header flags per opcode (low 5 bits), for RC/UC/UD alike.
enum HdrFlag : uint16_t {
  kHasReth = 1 << 0,
  kHasAeth = 1 << 1,
  kHasImm = 1 << 2,
  kHasIeth = 1 << 3,
  kHasAtomicEth = 1 << 4,
  kHasAtomicAckEth = 1 << 5,
  kHasPayload = 1 << 6,
  kIsFirst = 1 << 7,
  kIsMiddle = 1 << 8,
  kIsLast = 1 << 9,
  kIsRequest = 1 << 10,
  kIsResponse = 1 << 11,
  kIsSend = 1 << 12,
  kIsWrite = 1 << 13,
  kIsRead = 1 << 14,
  kIsAtomic = 1 << 15,
  kValid = 0,  // no flags and not in table = invalid, see op_valid
};

struct OpInfo {
  bool valid;
  uint16_t flags;
};

constexpr OpInfo op_info(uint8_t low5) {
  constexpr uint16_t F = kIsFirst, M = kIsMiddle, L = kIsLast, P = kHasPayload, Q = kIsRequest,
                     S = kIsSend, W = kIsWrite, R = kIsRead, A = kIsAtomic, Rsp = kIsResponse;
  switch (low5) {
    case kSendFirst: return {true, uint16_t(Q | S | F | P)};
    case kSendMiddle: return {true, uint16_t(Q | S | M | P)};
    case kSendLast: return {true, uint16_t(Q | S | L | P)};
    case kSendLastImm: return {true, uint16_t(Q | S | L | P | kHasImm)};
    case kSendOnly: return {true, uint16_t(Q | S | F | L | P)};
    case kSendOnlyImm: return {true, uint16_t(Q | S | F | L | P | kHasImm)};
    case kWriteFirst: return {true, uint16_t(Q | W | F | P | kHasReth)};
    case kWriteMiddle: return {true, uint16_t(Q | W | M | P)};
    case kWriteLast: return {true, uint16_t(Q | W | L | P)};
    case kWriteLastImm: return {true, uint16_t(Q | W | L | P | kHasImm)};
    case kWriteOnly: return {true, uint16_t(Q | W | F | L | P | kHasReth)};
    case kWriteOnlyImm: return {true, uint16_t(Q | W | F | L | P | kHasReth | kHasImm)};
    case kReadRequest: return {true, uint16_t(Q | R | F | L | kHasReth)};
    case kReadRespFirst: return {true, uint16_t(Rsp | R | F | P | kHasAeth)};
    case kReadRespMiddle: return {true, uint16_t(Rsp | R | M | P)};
    case kReadRespLast: return {true, uint16_t(Rsp | R | L | P | kHasAeth)};
    case kReadRespOnly: return {true, uint16_t(Rsp | R | F | L | P | kHasAeth)};
    case kAck: return {true, uint16_t(Rsp | F | L | kHasAeth)};
    case kAtomicAck: return {true, uint16_t(Rsp | A | F | L | kHasAeth | kHasAtomicAckEth)};
    case kCompareSwap: return {true, uint16_t(Q | A | F | L | kHasAtomicEth)};
    case kFetchAdd: return {true, uint16_t(Q | A | F | L | kHasAtomicEth)};
    case kSendLastInv: return {true, uint16_t(Q | S | L | P | kHasIeth)};
    case kSendOnlyInv: return {true, uint16_t(Q | S | F | L | P | kHasIeth)};
    default: return {false, 0};
  }
}

// Whether a full BTH opcode exists for its transport (table 38): RC has every
// operation; UC only SEND and RDMA WRITE; UD only SEND Only [with Immediate];
// RD and XRC opcodes count as invalid: vfabric offers neither transport, so
// such frames are dropped like any malformed one. 0x81 is the RoCEv2 CNP.
constexpr bool opcode_valid(uint8_t opc) {
  const uint8_t op = opc & 0x1F;
  switch (opcode_transport(opc)) {
    case Transport::kRC: return op_info(op).valid;
    case Transport::kUC: return op <= kWriteOnlyImm;
    case Transport::kUD: return op == kSendOnly || op == kSendOnlyImm;
    case Transport::kCNP: return opc == kOpcodeCnp;
    default: return false;
  }
}

// Where each extended header starts, in bytes after the BTH, in the IBA's
// order (DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt/IETH); kAbsent
// where the opcode has none. `payload` is also the headers' total length.
inline constexpr uint8_t kAbsent = 0xFF;
struct HdrLayout {
  uint8_t deth = kAbsent, reth = kAbsent, atomic_eth = kAbsent, aeth = kAbsent,
          atomic_ack_eth = kAbsent, imm = kAbsent;
  uint8_t payload = 0;
};

// One full BTH opcode (transport bits included).
struct OpDesc {
  bool valid = false;
  uint16_t flags = 0;  // HdrFlag
  HdrLayout at;
  const char* name = "reserved";  // IBA table 38, e.g. "SEND First"
};

constexpr const char* op_name(uint8_t low5) {
  constexpr const char* kNames[32] = {
      "SEND First", "SEND Middle", "SEND Last", "SEND Last with Immediate", "SEND Only",
      "SEND Only with Immediate", "RDMA WRITE First", "RDMA WRITE Middle", "RDMA WRITE Last",
      "RDMA WRITE Last with Immediate", "RDMA WRITE Only", "RDMA WRITE Only with Immediate",
      "RDMA READ Request", "RDMA READ response First", "RDMA READ response Middle",
      "RDMA READ response Last", "RDMA READ response Only", "Acknowledge", "ATOMIC Acknowledge",
      "CmpSwap", "FetchAdd", "reserved", "SEND Last with Invalidate",
      "SEND Only with Invalidate", "reserved", "reserved", "reserved", "reserved", "reserved",
      "reserved", "reserved", "reserved"};
  return kNames[low5 & 0x1F];
}

constexpr const char* transport_name(Transport t) {
  switch (t) {
    case Transport::kRC: return "RC";
    case Transport::kUC: return "UC";
    case Transport::kRD: return "RD";
    case Transport::kUD: return "UD";
    case Transport::kCNP: return "CNP";
    default: return "reserved";
  }
}

constexpr OpDesc describe_opcode(uint8_t opc) {
  OpDesc d;
  if (!opcode_valid(opc)) return d;
  d.valid = true;
  if (opc == kOpcodeCnp) {
    d.name = "CNP";
    return d;
  }
  const OpInfo info = op_info(opc & 0x1F);
  d.flags = info.flags;
  d.name = op_name(opc & 0x1F);
  uint8_t at = 0;
  auto place = [&](bool present, uint8_t& field, unsigned len) {
    if (!present) return;
    field = at;
    at = uint8_t(at + len);
  };
  place(opcode_transport(opc) == Transport::kUD, d.at.deth, kDethLen);
  place(info.flags & kHasReth, d.at.reth, kRethLen);
  place(info.flags & kHasAtomicEth, d.at.atomic_eth, kAtomicEthLen);
  place(info.flags & kHasAeth, d.at.aeth, kAethLen);
  place(info.flags & kHasAtomicAckEth, d.at.atomic_ack_eth, kAtomicAckEthLen);
  place(info.flags & (kHasImm | kHasIeth), d.at.imm, kImmDtLen);
  d.at.payload = at;
  return d;
}

inline constexpr std::array<OpDesc, 256> kOps = [] {
  std::array<OpDesc, 256> t{};
  for (unsigned o = 0; o < 256; ++o) t[o] = describe_opcode(uint8_t(o));
  return t;
}();

constexpr const OpDesc& op_desc(uint8_t opc) { return kOps[opc]; }
constexpr const HdrLayout& layout(uint8_t opc) { return kOps[opc].at; }
// Bytes of transport headers after the BTH (0 for an invalid opcode).
constexpr unsigned ext_headers_len(uint8_t opc) { return kOps[opc].at.payload; }

}  // namespace vf::wire
