#include "daemon/mad/sma.hpp"

#include <algorithm>
#include <cstring>

namespace vf::mad {
namespace {

// ibv_query_device's vendor and part (engine::kVendorId, kVendorPartId: no
// real vendor's OUI), and "VS" for the switches.
constexpr uint32_t kVendorId = 0xFFFFFF;
constexpr uint16_t kDeviceIdCa = 0x5646;
constexpr uint16_t kDeviceIdSwitch = 0x5653;
constexpr uint32_t kLinearFdbCap = 49152;  // unicast LIDs 1..0xBFFF
constexpr uint32_t kMcastFdbCap = 16384;
constexpr uint8_t kSmStateMaster = 3;
constexpr uint32_t kIsSm = 1u << 1;
constexpr uint32_t kExtSpeedsSup = 1u << 14;
constexpr uint32_t kSysImageGuidSup = 1u << 11;

void node_info(const MadModel& model, const ModelNode& n, uint8_t in_port, uint8_t* d) {
  d[0] = 1;  // BaseVersion
  d[1] = 1;  // ClassVersion
  d[2] = n.is_switch ? 2 : 1;
  d[3] = n.num_ports();
  put_be(d + 4, 8, n.guid);   // SystemImageGUID
  put_be(d + 12, 8, n.guid);  // NodeGUID
  put_be(d + 20, 8, n.guid);  // PortGUID: the CA's port, the switch's port 0
  put_be(d + 28, 2, std::max<uint32_t>(n.pkey_table_len, 1));
  put_be(d + 30, 2, n.is_switch ? kDeviceIdSwitch : kDeviceIdCa);
  put_be(d + 32, 4, 1);
  d[36] = in_port;
  put_be(d + 37, 3, kVendorId);
  (void)model;
}

void node_desc(const ModelNode& n, uint8_t* d) {
  std::memcpy(d, n.desc.data(), std::min<size_t>(n.desc.size(), kSmpDataSize));
}

// PortInfo of port `num` (a switch's 0: its management port).
bool port_info(const MadModel& model, const ModelNode& n, unsigned num, uint8_t in_port, uint8_t* d) {
  const ModelPort* p = n.port(num);
  if (num == 0 && n.is_switch) p = n.port(1);
  if (!p) return false;
  put_be(d + 8, 8, model.subnet_prefix);
  const bool port0 = !n.is_switch || num == 0;  // the port that has the LID
  if (port0) {
    put_be(d + 16, 2, n.lid);
    put_be(d + 18, 2, model.sm_lid);
  }
  uint32_t caps = n.port_cap_flags | kExtSpeedsSup | kSysImageGuidSup;
  if (n.is_switch) caps = kExtSpeedsSup | kSysImageGuidSup;
  if (port0 && model.sm_node >= 0 && &model.nodes[size_t(model.sm_node)] == &n) caps |= kIsSm;
  put_be(d + 20, 4, caps);
  d[28] = in_port;  // LocalPortNum: the port the SMP came in on
  const bool sw0 = n.is_switch && num == 0;
  // What a port supports and has enabled is what its cable was configured
  // with (and the slowest speeds below it), so tools see no "could be".
  const uint8_t widths = uint8_t(p->width | 1);
  const uint8_t speeds = uint8_t(p->speed | (p->speed - 1));  // 1, 3 or 7
  const uint8_t speeds_ext = uint8_t(p->speed_ext ? p->speed_ext | (p->speed_ext - 1) : 0);
  put_bits(d, 232, 8, widths);               // LinkWidthEnabled
  put_bits(d, 240, 8, widths);               // LinkWidthSupported
  put_bits(d, 248, 8, p->width);             // LinkWidthActive
  put_bits(d, 256, 4, speeds);               // LinkSpeedSupported
  const PortState st = sw0 ? PortState::kActive : p->state;
  const PhysState ph = sw0 ? PhysState::kLinkUp : p->phys;
  put_bits(d, 260, 4, uint8_t(st));
  put_bits(d, 264, 4, uint8_t(ph));
  put_bits(d, 268, 4, 2);                    // LinkDownDefaultState: Polling
  put_bits(d, 272, 2, 1);                    // M_KeyProtectBits: Set needs the SM's key
  if (port0) put_bits(d, 277, 3, n.lmc);
  put_bits(d, 280, 4, p->speed);             // LinkSpeedActive
  put_bits(d, 284, 4, speeds);               // LinkSpeedEnabled
  put_bits(d, 288, 4, p->mtu);               // NeighborMTU
  put_bits(d, 292, 4, 0);                    // MasterSMSL
  put_bits(d, 296, 4, p->vl_cap);            // VLCap
  put_bits(d, 304, 8, n.qos.vlarb_high_limit);
  put_bits(d, 312, 8, kVlArbCap);            // VLArbitrationHighCap
  put_bits(d, 320, 8, kVlArbCap);            // VLArbitrationLowCap
  put_bits(d, 332, 4, 5);                    // MTUCap: 4096
  put_bits(d, 339, 5, 18);                   // HOQLife
  put_bits(d, 344, 4, p->oper_vls);          // OperationalVLs
  put_bits(d, 400, 8, 1);                    // GUIDCap
  put_bits(d, 411, 5, 18);                   // SubnetTimeOut
  put_bits(d, 419, 5, 16);                   // RespTimeValue
  put_bits(d, 496, 4, p->speed_ext);         // LinkSpeedExtActive
  put_bits(d, 500, 4, speeds_ext);           // LinkSpeedExtSupported
  put_bits(d, 507, 5, speeds_ext);           // LinkSpeedExtEnabled
  return true;
}

bool switch_info(const ModelNode& n, uint8_t* d) {
  if (!n.is_switch) return false;
  put_be(d + 0, 2, kLinearFdbCap);
  put_be(d + 4, 2, kMcastFdbCap);
  uint16_t top = 0;
  for (size_t lid = 0; lid < n.lft.size(); ++lid)
    if (n.lft[lid] != 0xFF) top = uint16_t(lid);
  put_be(d + 6, 2, top);        // LinearFDBTop
  d[8] = 0;                     // DefaultPort
  d[9] = 0xFF;                  // DefaultMulticastPrimaryPort
  d[10] = 0xFF;
  put_bits(d, 88, 5, 18);       // LifeTimeValue
  put_be(d + 12, 2, 1);         // LIDsPerPort
  put_be(d + 14, 2, 1);         // PartitionEnforcementCap
  return true;
}

bool guid_info(const ModelNode& n, uint32_t block, uint8_t* d) {
  if (block != 0) return false;  // GUIDCap is 1: one block, one GUID
  put_be(d, 8, n.guid);
  return true;
}

bool pkey_table(const ModelNode& n, uint32_t mod, uint8_t* d) {
  const uint32_t block = mod & 0xFFFF;
  const uint32_t len = std::max<uint32_t>(n.pkey_table_len, uint32_t(n.pkeys.size()));
  if (block * 32 >= std::max<uint32_t>(len, 1)) return false;
  for (uint32_t i = 0; i < 32; ++i) {
    const uint32_t idx = block * 32 + i;
    put_be(d + 2 * i, 2, idx < n.pkeys.size() ? n.pkeys[idx] : 0);
  }
  return true;
}

bool sl_to_vl(const ModelNode& n, uint8_t* d) {
  for (unsigned sl = 0; sl < kNumSls; ++sl) put_bits(d, sl * 4, 4, n.qos.sl2vl[sl] & 0x0F);
  return true;
}

bool vl_arb(const ModelNode& n, uint32_t mod, uint8_t* d) {
  const uint32_t which = mod >> 16;  // 1 low 0-31, 2 high 0-31, 3 low 32-63, 4 high 32-63
  if (which < 1 || which > 4) return false;
  if (which > 2) return true;  // our lists hold kVlArbCap (8) entries: the upper halves are empty
  const VlArbTable& t = which == 1 ? n.qos.vlarb_low : n.qos.vlarb_high;
  for (unsigned i = 0; i < t.size; ++i) {
    d[2 * i] = t.entries[i].vl & 0x0F;
    d[2 * i + 1] = t.entries[i].weight;
  }
  return true;
}

bool lft_block(const ModelNode& n, uint32_t block, uint8_t* d) {
  if (!n.is_switch || block >= kLinearFdbCap / 64) return false;
  for (uint32_t i = 0; i < 64; ++i) {
    const size_t lid = size_t(block) * 64 + i;
    d[i] = lid < n.lft.size() ? n.lft[lid] : 0xFF;
  }
  return true;
}

bool sm_info(const MadModel& model, const ModelNode& n, uint8_t* d) {
  if (model.sm_node < 0 || &model.nodes[size_t(model.sm_node)] != &n) return false;
  put_be(d, 8, n.guid);
  put_be(d + 8, 8, 0);  // SM_Key reads as 0 to a requester that does not hold it
  put_be(d + 16, 4, model.sm_activity);
  put_bits(d, 160, 4, 0);               // Priority
  put_bits(d, 164, 4, kSmStateMaster);  // SMState
  return true;
}

}  // namespace

uint16_t sma_attribute(const MadModel& model, size_t node, uint16_t attr, uint32_t mod, uint8_t in_port,
                       uint8_t* d) {
  std::memset(d, 0, kSmpDataSize);
  const ModelNode& n = model.nodes.at(node);
  auto ok = [](bool good) { return good ? uint16_t(0) : kStatusBadAttrOrModifier; };
  switch (attr) {
    case kAttrNodeInfo: node_info(model, n, in_port, d); return 0;
    case kAttrNodeDesc: node_desc(n, d); return 0;
    case kAttrPortInfo: return ok(port_info(model, n, n.is_switch ? mod & 0xFF : (mod ? mod : in_port), in_port, d));
    case kAttrGuidInfo: return ok(guid_info(n, mod, d));
    case kAttrPkeyTable: return ok(pkey_table(n, mod, d));
    case kAttrSlToVl: return ok(sl_to_vl(n, d));
    case kAttrVlArb: return ok(vl_arb(n, mod, d));
    case kAttrSwitchInfo: return switch_info(n, d) ? 0 : kStatusMethodAttrUnsupported;
    case kAttrLft: return n.is_switch ? ok(lft_block(n, mod, d)) : kStatusMethodAttrUnsupported;
    case kAttrSmInfo: return sm_info(model, n, d) ? 0 : kStatusMethodAttrUnsupported;
    default: return kStatusMethodAttrUnsupported;
  }
}

uint8_t vl_cap_code(uint8_t data_vls) {
  if (data_vls >= 15) return 5;
  if (data_vls >= 8) return 4;
  if (data_vls >= 4) return 3;
  if (data_vls >= 2) return 2;
  return 1;
}

Verdict sma_process(const MadModel& model, size_t node, uint8_t in_port, Mad& m) {
  const uint8_t meth = method(m);
  if (meth == kSet) return Verdict::kDrop;  // M_Key protected: only fabricd's SM sets
  if (is_response(m) || meth == kTrapRepress || meth == kSend) return Verdict::kDrop;
  const bool dr = mgmt_class(m) == kClassSmiDr;
  const uint16_t d_bit = dr ? kStatusDrDirection : 0;
  m[3] = kGetResp;
  std::memset(&m[kSmpData], 0, kSmpDataSize);
  if (base_version(m) != 1 || class_version(m) != 1) {
    set_status(m, d_bit | kStatusBadVersion);
  } else if (meth != kGet) {
    set_status(m, d_bit | kStatusMethodUnsupported);
  } else if (const uint16_t st = sma_attribute(model, node, attr_id(m), attr_mod(m), in_port, &m[kSmpData]); st) {
    std::memset(&m[kSmpData], 0, kSmpDataSize);
    set_status(m, d_bit | st);
  } else {
    set_status(m, d_bit);
  }
  return Verdict::kRespond;
}

}  // namespace vf::mad
