#include "daemon/mad/sa.hpp"

#include <algorithm>
#include <cstring>

#include "daemon/mad/path_record.hpp"
#include "daemon/mad/sma.hpp"

namespace vf::mad {
namespace {

// A component of a record: its bits, IBA-numbered from the record's start.
struct Field {
  uint16_t off, width;
};

struct RecordType {
  uint16_t attr;
  size_t size;                 // bytes of one record (unpadded)
  std::vector<Field> comps;    // by ComponentMask bit
};

// ClassPortInfo CapabilityMask: IsSubnetOptionalRecordsSupported (the
// LinkRecords, SwitchInfo and LFT records here are optional ones).
constexpr uint16_t kSaCapOptionalRecords = 1u << 9;

const RecordType kNodeRecord{kAttrNodeRecord, 108,
                             {{0, 16}, {16, 16}, {32, 8}, {40, 8}, {48, 8}, {56, 8}, {64, 64}, {128, 64},
                              {192, 64}, {256, 16}, {272, 16}, {288, 32}, {320, 8}, {328, 24}, {352, 512}}};
const RecordType kPortInfoRecord{
    kAttrPortInfoRecord, 68,
    {{0, 16},   {16, 8},   {24, 8},   {32, 64},  {96, 64},  {160, 16}, {176, 16}, {192, 32},
     {224, 16}, {240, 16}, {256, 8},  {264, 8},  {272, 8},  {280, 8},  {288, 4},  {292, 4},
     {296, 4},  {300, 4},  {304, 2},  {306, 3},  {309, 3},  {312, 4},  {316, 4},  {320, 4}}};
const RecordType kSwitchInfoRecord{kAttrSwitchInfoRecord, 24, {{0, 16}, {16, 16}}};
const RecordType kLftRecord{kAttrLftRecord, 72, {{0, 16}, {16, 16}}};
const RecordType kSmInfoRecord{kAttrSmInfoRecord, 25,
                               {{0, 16}, {16, 16}, {32, 64}, {96, 64}, {160, 32}, {192, 4}, {196, 4}}};
const RecordType kLinkRecord{kAttrLinkRecord, 8, {{0, 16}, {16, 8}, {24, 8}, {32, 16}}};

using Record = std::vector<uint8_t>;

// Every record of `t` the fabric has.
std::vector<Record> node_records(const MadModel& m) {
  std::vector<Record> out;
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const ModelNode& n = m.nodes[i];
    if (!n.lid) continue;
    Record r(kNodeRecord.size);
    put_be(r.data(), 2, n.lid);
    uint8_t attr[kSmpDataSize];
    sma_attribute(m, i, kAttrNodeInfo, 0, n.is_switch ? 0 : 1, attr);
    std::memcpy(r.data() + 4, attr, 40);
    sma_attribute(m, i, kAttrNodeDesc, 0, 0, attr);
    std::memcpy(r.data() + 44, attr, 64);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Record> port_info_records(const MadModel& m) {
  std::vector<Record> out;
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const ModelNode& n = m.nodes[i];
    if (!n.lid) continue;
    for (unsigned p = n.is_switch ? 0 : 1; p <= n.num_ports(); ++p) {
      Record r(kPortInfoRecord.size);
      put_be(r.data(), 2, n.lid);
      r[2] = uint8_t(p);
      uint8_t attr[kSmpDataSize];
      if (sma_attribute(m, i, kAttrPortInfo, p, n.is_switch ? 0 : 1, attr) != 0) continue;
      std::memcpy(r.data() + 4, attr, 64);
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<Record> switch_records(const MadModel& m, uint16_t attr_id) {
  std::vector<Record> out;
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const ModelNode& n = m.nodes[i];
    if (!n.is_switch || !n.lid) continue;
    uint8_t attr[kSmpDataSize];
    if (attr_id == kAttrSwitchInfoRecord) {
      Record r(kSwitchInfoRecord.size);
      put_be(r.data(), 2, n.lid);
      sma_attribute(m, i, kAttrSwitchInfo, 0, 0, attr);
      std::memcpy(r.data() + 4, attr, 20);
      out.push_back(std::move(r));
      continue;
    }
    const size_t blocks = (n.lft.size() + 63) / 64;
    for (size_t b = 0; b < blocks; ++b) {
      Record r(kLftRecord.size);
      put_be(r.data(), 2, n.lid);
      put_be(r.data() + 2, 2, b);
      sma_attribute(m, i, kAttrLft, uint32_t(b), 0, attr);
      std::memcpy(r.data() + 8, attr, 64);
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<Record> sm_info_records(const MadModel& m) {
  std::vector<Record> out;
  if (m.sm_node < 0) return out;
  Record r(kSmInfoRecord.size);
  put_be(r.data(), 2, m.sm_lid);
  uint8_t attr[kSmpDataSize];
  sma_attribute(m, size_t(m.sm_node), kAttrSmInfo, 0, 0, attr);
  std::memcpy(r.data() + 4, attr, 21);
  out.push_back(std::move(r));
  return out;
}

// One record per direction of every cable that is up.
std::vector<Record> link_records(const MadModel& m) {
  std::vector<Record> out;
  for (const ModelNode& n : m.nodes)
    for (unsigned p = 1; p <= n.num_ports(); ++p) {
      const ModelPort& port = *n.port(p);
      if (!port.linked || port.peer_node < 0 || port.phys != PhysState::kLinkUp) continue;
      const ModelNode& peer = m.nodes[size_t(port.peer_node)];
      Record r(kLinkRecord.size);
      put_be(r.data(), 2, n.lid);
      r[2] = uint8_t(p);
      r[3] = port.peer_port;
      put_be(r.data() + 4, 2, peer.lid);
      out.push_back(std::move(r));
    }
  return out;
}

// Whether `rec` agrees with `query` on every component `mask` selects;
// `bad` is set when the mask names a component this record type lacks.
// A PortInfoRecord query with AttributeModifier bit 31 matches a
// CapabilityMask with any of the asked bits set (saquery -s: the SMs), as
// opensm reads it.
constexpr unsigned kPirCapMask = 7;

bool matches(const RecordType& t, const uint8_t* query, const Record& rec, uint64_t mask, uint32_t mod, bool& bad) {
  for (unsigned bit = 0; bit < 64; ++bit) {
    if (!(mask >> bit & 1)) continue;
    if (bit >= t.comps.size()) {
      bad = true;
      return false;
    }
    const Field f = t.comps[bit];
    if (f.off + f.width > t.size * 8) continue;
    if (t.attr == kAttrPortInfoRecord && bit == kPirCapMask && (mod >> 31)) {
      if (!(get_bits(rec.data(), f.off, f.width) & get_bits(query, f.off, f.width))) return false;
      continue;
    }
    for (unsigned at = 0; at < f.width; at += 64) {  // wide fields (GIDs, NodeDescription) in pieces
      const unsigned w = std::min(64u, unsigned(f.width - at));
      if (get_bits(rec.data(), f.off + at, w) != get_bits(query, f.off + at, w)) return false;
    }
  }
  return true;
}

// MTU, rate and packet lifetime of a PathRecord query: 0 greater than, 1
// less than, 2 exactly, 3 the largest (any path qualifies).
bool selected(unsigned selector, double have, double want) {
  switch (selector) {
    case 0: return have > want;
    case 1: return have < want;
    case 2: return have == want;
    default: return true;
  }
}

bool path_matches(const uint8_t* q, const PathRecord& r, uint64_t mask, bool& bad) {
  auto has = [&](unsigned bit) { return (mask >> bit & 1) != 0; };
  auto same = [&](unsigned off, unsigned width) {
    for (unsigned at = 0; at < width; at += 64) {
      const unsigned w = std::min(64u, width - at);
      if (get_bits(r.data(), off + at, w) != get_bits(q, off + at, w)) return false;
    }
    return true;
  };
  if (has(6) && get_bits(q, 352, 1)) return false;  // raw traffic: not on an IB subnet
  if (has(2) && !same(64, 128)) return false;
  if (has(3) && !same(192, 128)) return false;
  if (has(4) && !same(320, 16)) return false;
  if (has(5) && !same(336, 16)) return false;
  if (has(8) && get_bits(q, 356, 20) != 0) return false;  // flow labels are not routed here
  if (has(10) && !same(384, 8)) return false;
  if (has(13) && !same(400, 16)) return false;
  if (has(15) && !same(428, 4)) return false;
  if (has(14) && get_bits(q, 416, 12) != 0) return false;
  if (has(17) && !selected(has(16) ? get_bits(q, 432, 2) : 2, double(r[54] & 0x3F), double(q[54] & 0x3F)))
    return false;
  if (has(19) && !selected(has(18) ? get_bits(q, 440, 2) : 2, rate_gbps(r[55] & 0x3F), rate_gbps(q[55] & 0x3F)))
    return false;
  if (has(21) && !selected(has(20) ? get_bits(q, 448, 2) : 2, double(r[56] & 0x3F), double(q[56] & 0x3F)))
    return false;
  return true;
}

// Whether node `n` can be the end a query names by LID (component bit
// `lid_bit`, at bit `lid_off`) or GID (`gid_bit`, `gid_off`): the records
// are only built for those, so a query for one path costs one path.
bool could_be(const MadModel& m, const ModelNode& n, const uint8_t* q, uint64_t mask, unsigned lid_bit,
              unsigned lid_off, unsigned gid_bit, unsigned gid_off) {
  if ((mask >> lid_bit & 1) && get_bits(q, lid_off, 16) != n.lid) return false;
  if ((mask >> gid_bit & 1) &&
      (get_bits(q, gid_off, 64) != m.subnet_prefix || get_bits(q, gid_off + 64, 64) != n.guid))
    return false;
  return true;
}

std::vector<Record> path_records(const MadModel& m, const uint8_t* q, uint64_t mask, bool& bad, bool& too_many) {
  std::vector<Record> out;
  if (mask >> 23) {  // beyond Preference: nothing is defined there
    bad = true;
    return out;
  }
  for (size_t s = 0; s < m.nodes.size(); ++s) {
    if (!could_be(m, m.nodes[s], q, mask, 5, 336, 3, 192)) continue;
    for (size_t d = 0; d < m.nodes.size(); ++d) {
      if (!could_be(m, m.nodes[d], q, mask, 4, 320, 2, 64)) continue;
      auto r = path_record(m, s, d);
      if (!r) continue;
      if (mask & 3) std::memcpy(r->data(), q, 8);  // the ServiceID asked for is the path's
      if (!path_matches(q, *r, mask, bad)) {
        if (bad) return {};
        continue;
      }
      out.emplace_back(r->begin(), r->end());
      if (kSaData + out.size() * kPathRecordSize > kSaMaxResponse) {
        too_many = true;  // the caller answers ERR_NO_RESOURCES
        return {};
      }
    }
  }
  return out;
}

const RecordType* record_type(uint16_t attr) {
  static const RecordType kPath{kAttrPathRecord, kPathRecordSize, {}};
  for (const RecordType* t : {&kNodeRecord, &kPortInfoRecord, &kSwitchInfoRecord, &kLftRecord, &kSmInfoRecord,
                              &kLinkRecord, &kPath})
    if (t->attr == attr) return t;
  return nullptr;
}

std::vector<uint8_t> respond(const Mad& req, uint8_t meth, uint16_t st) {
  std::vector<uint8_t> r(kMadSize, 0);
  std::memcpy(r.data(), req.data(), 24);
  r[3] = meth;
  put_be(&r[4], 2, st);
  std::memcpy(&r[48], &req[48], 8);  // ComponentMask, echoed
  return r;
}

// The answer carrying `recs` (each `size` bytes): a Get (or a join or
// leave) wants exactly one; a GetTable gets all of them as one reassembled
// RMPP transfer, exactly as long as they are, since the app counts records
// from the length.
std::vector<uint8_t> records_response(const Mad& req, uint8_t resp, size_t size,
                                      const std::vector<std::vector<uint8_t>>& recs) {
  const size_t stride = (size + 7) / 8 * 8;
  const bool table = method(req) == kGetTable;
  if (!table && recs.size() != 1) return respond(req, resp, recs.empty() ? kSaNoRecords : kSaTooManyRecords);
  if (kSaData + recs.size() * stride > kSaMaxResponse) return respond(req, resp, kSaNoResources);
  auto r = respond(req, resp, 0);
  put_be(&r[44], 2, stride / 8);  // AttributeOffset
  if (table) {
    r.resize(kSaData + recs.size() * stride);
    r[24] = 1;     // RMPPVersion
    r[25] = 1;     // RMPPType: DATA
    r[26] = 0x07;  // Active, First, Last: one reassembled transfer
    put_be(&r[28], 4, 1);              // SegmentNumber
    put_be(&r[32], 4, r.size() - 36);  // PayloadLength
  }
  for (size_t i = 0; i < recs.size(); ++i) std::memcpy(&r[kSaData + i * stride], recs[i].data(), size);
  return r;
}

// Set (join), Delete (leave), Get and GetTable of MCMemberRecord.
std::vector<uint8_t> mc_member(const MadModel& model, size_t requester, const Mad& req, SaGroups& groups,
                               std::vector<McChange>& changes) {
  const uint8_t meth = method(req);
  const uint8_t resp = meth == kGetTable ? kGetTableResp : meth == kSaDelete ? kSaDeleteResp : kGetResp;
  std::vector<std::vector<uint8_t>> recs;
  const uint16_t st = groups.process(model, requester, meth, &req[kSaData], get_be(&req[48], 8), recs, changes);
  if (st) return respond(req, resp, st);
  return records_response(req, resp, kMcMemberRecordSize, recs);
}

}  // namespace

std::vector<uint8_t> sa_process(const MadModel& model, size_t requester, const Mad& req, SaGroups* groups,
                                std::vector<McChange>& changes) {
  const uint8_t meth = method(req);
  if (is_response(req) || !expects_response(req)) return {};
  if (base_version(req) != 1 || class_version(req) != kSaClassVersion)
    return respond(req, kGetResp, kStatusBadVersion);
  if (attr_id(req) == kAttrMcMemberRecord && groups &&
      (meth == kGet || meth == kGetTable || meth == kSet || meth == kSaDelete))
    return mc_member(model, requester, req, *groups, changes);
  if (meth != kGet && meth != kGetTable) return respond(req, kGetResp, kStatusMethodUnsupported);
  const uint8_t resp = meth == kGet ? kGetResp : kGetTableResp;
  if (attr_id(req) == kAttrClassPortInfo) {
    if (meth != kGet) return respond(req, resp, kStatusMethodAttrUnsupported);
    auto r = respond(req, resp, 0);
    r[kSaData] = 1;                      // BaseVersion
    r[kSaData + 1] = kSaClassVersion;    // ClassVersion
    put_be(&r[kSaData + 2], 2, kSaCapOptionalRecords);
    put_bits(&r[kSaData], 59, 5, 18);    // RespTimeValue
    return r;
  }
  const RecordType* t = record_type(attr_id(req));
  if (!t) return respond(req, resp, kStatusMethodAttrUnsupported);

  const uint64_t mask = get_be(&req[48], 8);
  const uint8_t* query = &req[kSaData];
  bool bad = false, too_many = false;
  std::vector<Record> all;
  switch (t->attr) {
    case kAttrNodeRecord: all = node_records(model); break;
    case kAttrPortInfoRecord: all = port_info_records(model); break;
    case kAttrSwitchInfoRecord:
    case kAttrLftRecord: all = switch_records(model, t->attr); break;
    case kAttrSmInfoRecord: all = sm_info_records(model); break;
    case kAttrLinkRecord: all = link_records(model); break;
    case kAttrPathRecord: all = path_records(model, query, mask, bad, too_many); break;
  }
  std::vector<Record> hits;
  for (auto& r : all) {
    if (t->attr != kAttrPathRecord && !matches(*t, query, r, mask, attr_mod(req), bad)) {
      if (bad) break;
      continue;
    }
    hits.push_back(std::move(r));
  }
  if (bad) return respond(req, resp, kSaReqInvalid);
  if (too_many) return respond(req, resp, kSaNoResources);

  return records_response(req, resp, t->size, hits);
}

}  // namespace vf::mad
