// The CM messages as the IBA lays them out (12.6: the CM class 0x07, method
// Send, attributes REQ 0x10 .. SIDR_REP 0x18), with rdma_cm's IP header
// (the first 36 bytes of a REQ's or SIDR_REQ's private data: version, IP
// version, source port, source and destination addresses) as the kernel's
// rdma_cm writes it. What one end's agent sends on QP1 and the other's
// reads; a MAD that does not parse is dropped by the receiver, as ib_cm
// drops it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "daemon/cm/state.hpp"

namespace vf::cm {

inline constexpr uint8_t kClassCm = 0x07;
inline constexpr uint8_t kCmClassVersion = 2;
inline constexpr uint16_t kAttrReq = 0x0010;  // REQ; the others follow in MsgType's order

using CmMad = std::array<uint8_t, 256>;

// `m` as a MAD from `local_guid`'s port, with transaction ID `tid`.
CmMad encode(const Msg& m, uint64_t local_guid, uint64_t tid);
// The message a MAD carries; nullopt for anything that is not a CM message
// this end understands (another class or version, a method other than
// Send, an unknown attribute, a transport rdma_cm does not use).
// `from_vhca` is the receiver's to fill (the sender is known by its port).
std::optional<Msg> decode(const CmMad& mad);

}  // namespace vf::cm
