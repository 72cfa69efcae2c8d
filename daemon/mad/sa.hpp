// The subnet administrator on the SM's node (IBA 15): SubnAdmGet and
// SubnAdmGetTable of the records the tools and the CM ask for -- NodeRecord,
// PortInfoRecord, SwitchInfoRecord, LinearForwardingTableRecord, LinkRecord,
// SMInfoRecord, PathRecord -- built from what the SMAs report and filtered
// by the request's ComponentMask, as opensm does. A GetTable response is one
// reassembled RMPP payload, as ib_mad hands it to an app.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "daemon/mad/mad.hpp"
#include "daemon/mad/model.hpp"

namespace vf::mad {

inline constexpr uint8_t kSaClassVersion = 2;
inline constexpr uint8_t kGetTableResp = 0x92;
inline constexpr size_t kSaData = 56;     // records start here
inline constexpr size_t kSaMaxResponse = 128 * 1024;

// SA status codes (in the upper byte of the MAD status).
inline constexpr uint16_t kSaNoResources = 0x0100;
inline constexpr uint16_t kSaReqInvalid = 0x0200;
inline constexpr uint16_t kSaNoRecords = 0x0300;
inline constexpr uint16_t kSaTooManyRecords = 0x0400;

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
std::vector<uint8_t> sa_process(const MadModel& model, size_t requester, const Mad& req);

}  // namespace vf::mad
