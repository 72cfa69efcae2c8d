// One management datagram (IBA 13.4): 256 bytes, the common header, the
// SMP's directed-route fields, and the bit fields of attributes, numbered as
// the IBA numbers them (bit 0 is the most significant bit of byte 0). Plain
// values and free functions: MADs are small and the tools send few.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace vf::mad {

inline constexpr size_t kMadSize = 256;
using Mad = std::array<uint8_t, kMadSize>;

// Management classes.
inline constexpr uint8_t kClassSmiLid = 0x01;
inline constexpr uint8_t kClassSmiDr = 0x81;
inline constexpr uint8_t kClassSubnAdm = 0x03;
inline constexpr uint8_t kClassPerf = 0x04;

// Methods.
inline constexpr uint8_t kGet = 0x01;
inline constexpr uint8_t kSet = 0x02;
inline constexpr uint8_t kGetResp = 0x81;
inline constexpr uint8_t kSend = 0x03;
inline constexpr uint8_t kTrap = 0x05;
inline constexpr uint8_t kReport = 0x06;
inline constexpr uint8_t kReportResp = 0x86;
inline constexpr uint8_t kTrapRepress = 0x07;
inline constexpr uint8_t kGetTable = 0x12;
inline constexpr uint8_t kResponseBit = 0x80;

// MAD status (the common header's, 16 bits): IBA 13.4.7.
inline constexpr uint16_t kStatusBadVersion = 0x0004;       // bad base or class version
inline constexpr uint16_t kStatusMethodUnsupported = 0x0008;
inline constexpr uint16_t kStatusMethodAttrUnsupported = 0x000C;
inline constexpr uint16_t kStatusBadAttrOrModifier = 0x001C;
inline constexpr uint16_t kStatusDrDirection = 0x8000;      // SMP only: the D bit
// SubnAdm's own codes, in the status' upper byte (IBA 15.2.1.1).
inline constexpr uint16_t kSaNoResources = 0x0100;
inline constexpr uint16_t kSaReqInvalid = 0x0200;
inline constexpr uint16_t kSaNoRecords = 0x0300;
inline constexpr uint16_t kSaTooManyRecords = 0x0400;
inline constexpr uint16_t kSaInvalidGid = 0x0500;
inline constexpr uint16_t kSaInsufficientComponents = 0x0600;

// Attributes.
inline constexpr uint16_t kAttrClassPortInfo = 0x0001;
inline constexpr uint16_t kAttrNodeDesc = 0x0010;
inline constexpr uint16_t kAttrNodeInfo = 0x0011;
inline constexpr uint16_t kAttrSwitchInfo = 0x0012;
inline constexpr uint16_t kAttrGuidInfo = 0x0014;
inline constexpr uint16_t kAttrPortInfo = 0x0015;
inline constexpr uint16_t kAttrPkeyTable = 0x0016;
inline constexpr uint16_t kAttrSlToVl = 0x0017;
inline constexpr uint16_t kAttrVlArb = 0x0018;
inline constexpr uint16_t kAttrLft = 0x0019;
inline constexpr uint16_t kAttrMft = 0x001B;
inline constexpr uint16_t kAttrSmInfo = 0x0020;
inline constexpr uint16_t kAttrPortCounters = 0x0012;     // PMA
inline constexpr uint16_t kAttrPortCountersExt = 0x001D;  // PMA

// Where attribute data starts: an SMP's 64 bytes at 64 (LID-routed too, after
// 32 reserved bytes), a PMA's at 64 (after 40 reserved bytes).
inline constexpr size_t kSmpData = 64;
inline constexpr size_t kSmpDataSize = 64;
inline constexpr size_t kPmaData = 64;
inline constexpr size_t kDrInitialPath = 128;
inline constexpr size_t kDrReturnPath = 192;
inline constexpr size_t kMaxHops = 63;

// ---- big-endian bytes
inline uint64_t get_be(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}
inline void put_be(uint8_t* p, size_t n, uint64_t v) {
  for (size_t i = n; i-- > 0; v >>= 8) p[i] = uint8_t(v);
}

// ---- bit fields, IBA numbering (off: bit offset from the start of `p`)
uint64_t get_bits(const uint8_t* p, unsigned off, unsigned width);
void put_bits(uint8_t* p, unsigned off, unsigned width, uint64_t v);

// ---- the common MAD header (IBA 13.4.2)
inline uint8_t base_version(const Mad& m) { return m[0]; }
inline uint8_t mgmt_class(const Mad& m) { return m[1]; }
inline uint8_t class_version(const Mad& m) { return m[2]; }
inline uint8_t method(const Mad& m) { return m[3]; }
inline uint16_t status(const Mad& m) { return uint16_t(get_be(&m[4], 2)); }
inline void set_status(Mad& m, uint16_t s) { put_be(&m[4], 2, s); }
inline uint64_t tid(const Mad& m) { return get_be(&m[8], 8); }
inline void set_tid(Mad& m, uint64_t t) { put_be(&m[8], 8, t); }
inline uint16_t attr_id(const Mad& m) { return uint16_t(get_be(&m[16], 2)); }
inline uint32_t attr_mod(const Mad& m) { return uint32_t(get_be(&m[20], 4)); }
inline bool is_response(const Mad& m) { return (method(m) & kResponseBit) != 0; }
// A method that expects a response (Get, Set, GetTable, ...; not Send,
// Trap, TrapRepress, Report's responses).
bool expects_response(const Mad& m);

// ---- the directed-route SMP (IBA 14.2.1.2)
inline bool dr_direction(const Mad& m) { return (m[4] & 0x80) != 0; }  // D: returning
inline uint8_t hop_ptr(const Mad& m) { return m[6]; }
inline uint8_t hop_cnt(const Mad& m) { return m[7]; }
inline void set_hop_ptr(Mad& m, uint8_t v) { m[6] = v; }
inline uint16_t dr_slid(const Mad& m) { return uint16_t(get_be(&m[32], 2)); }
inline uint16_t dr_dlid(const Mad& m) { return uint16_t(get_be(&m[34], 2)); }
inline uint8_t initial_path(const Mad& m, unsigned hop) { return m[kDrInitialPath + hop]; }
inline uint8_t return_path(const Mad& m, unsigned hop) { return m[kDrReturnPath + hop]; }
inline void set_return_path(Mad& m, unsigned hop, uint8_t port) { m[kDrReturnPath + hop] = port; }

inline constexpr uint16_t kPermissiveLid = 0xFFFF;

}  // namespace vf::mad
