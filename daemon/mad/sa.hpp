// The subnet administrator on the SM's node (IBA 15): SubnAdmGet and
// SubnAdmGetTable of the records the tools and the CM ask for -- NodeRecord,
// PortInfoRecord, SwitchInfoRecord, LinearForwardingTableRecord, LinkRecord,
// SMInfoRecord, PathRecord, MCMemberRecord -- built from what the SMAs report and filtered
// by the request's ComponentMask, as opensm does. A GetTable response is one
// reassembled RMPP payload, as ib_mad hands it to an app.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "daemon/mad/mad.hpp"
#include "daemon/mad/model.hpp"
#include "daemon/mad/sa_mcast.hpp"

namespace vf::mad {

inline constexpr uint8_t kSaClassVersion = 2;
inline constexpr uint8_t kGetTableResp = 0x92;
inline constexpr size_t kSaData = 56;     // records start here
inline constexpr size_t kSaMaxResponse = 128 * 1024;


// SA attributes.
inline constexpr uint16_t kAttrNodeRecord = 0x0011;
inline constexpr uint16_t kAttrPortInfoRecord = 0x0012;
inline constexpr uint16_t kAttrSwitchInfoRecord = 0x0014;
inline constexpr uint16_t kAttrLftRecord = 0x0015;
inline constexpr uint16_t kAttrSmInfoRecord = 0x0018;
inline constexpr uint16_t kAttrLinkRecord = 0x0020;
inline constexpr uint16_t kAttrPathRecord = 0x0035;

// The response to SA request `req` from CA `requester`: the whole MAD, 256
// bytes or, for GetTable, the header and every record; empty: no response.
// MCMemberRecord requests read and change `groups` and report what changed
// in `changes` (without `groups`, multicast records are not served).
std::vector<uint8_t> sa_process(const MadModel& model, size_t requester, const Mad& req, SaGroups* groups,
                                std::vector<McChange>& changes);

}  // namespace vf::mad
