#include "daemon/cm/cm_mad.hpp"

#include <algorithm>
#include <cstring>

#include "daemon/cm/wire.hpp"
#include "daemon/mad/mad.hpp"

namespace vf::cm {
namespace {

using mad::get_be;
using mad::put_be;

constexpr size_t kData = 24;           // after the common MAD header
constexpr uint8_t kSend = 0x03;
constexpr uint8_t kCmResponseTimeout = 20;  // rdma_cm's CMA_CM_RESPONSE_TIMEOUT
constexpr uint8_t kMaxCmRetries = 15;       // CMA_MAX_CM_RETRIES
constexpr size_t kCmaHdr = 36;              // rdma_cm's IP header in the private data

// Private data field of each message: where it starts (in the data) and how long it is.
struct Room {
  size_t at, len;
};
constexpr Room kPrivate[] = {
    {140, 92}, {10, 222}, {84, 148}, {36, 196}, {8, 224}, {12, 220}, {8, 224}, {16, 216}, {96, 136},
};

void put_cma_hdr(uint8_t* p, const Addr& src, const Addr& dst) {
  p[0] = 0;       // cma_version
  p[1] = 4 << 4;  // IPv4
  put_be(p + 2, 2, src.port);
  put_be(p + 16, 4, src.ip);
  put_be(p + 32, 4, dst.ip);
}

bool get_cma_hdr(const uint8_t* p, Addr& src, Addr& dst) {
  if (p[0] != 0 || p[1] >> 4 != 4) return false;  // rdma_cm's IP header, IPv4: all we send
  src.family = dst.family = 2;                      // AF_INET
  src.port = uint16_t(get_be(p + 2, 2));
  src.ip = uint32_t(get_be(p + 16, 4));
  dst.ip = uint32_t(get_be(p + 32, 4));
  return true;
}

void put_private(uint8_t* d, MsgType t, const std::vector<uint8_t>& pd, size_t skip = 0) {
  const Room r = kPrivate[size_t(t)];
  copy_prefix(d + r.at + skip, pd, r.len - skip);
}

std::vector<uint8_t> get_private(const uint8_t* d, MsgType t, size_t skip = 0) {
  const Room r = kPrivate[size_t(t)];
  return {d + r.at + skip, d + r.at + r.len};
}

void encode_req(uint8_t* d, const Msg& m, uint64_t guid) {
  const Path& p = m.path;
  put_be(d + 0, 4, m.local_comm);
  put_be(d + 8, 8, m.service_id);
  put_be(d + 16, 8, guid);
  put_be(d + 32, 3, m.qpn);
  d[35] = m.responder_resources;
  d[39] = m.initiator_depth;
  d[43] = uint8_t(kCmResponseTimeout << 3 | (m.qp_type == kQptUc ? 1 : 0) << 1 | (m.flow_control & 1));
  put_be(d + 44, 3, m.psn);
  d[47] = uint8_t(kCmResponseTimeout << 3 | (m.retry & 7));
  put_be(d + 48, 2, p.pkey);
  d[50] = uint8_t((p.mtu & 15) << 4 | (m.rnr_retry & 7));
  d[51] = uint8_t(kMaxCmRetries << 4 | (m.srq & 1) << 3);
  put_be(d + 52, 2, p.slid);
  put_be(d + 54, 2, p.dlid);
  std::memcpy(d + 56, p.sgid.data(), 16);
  std::memcpy(d + 72, p.dgid.data(), 16);
  put_be(d + 88, 4, uint32_t(p.flow_label & 0xFFFFF) << 12 | (p.rate & 0x3F));
  d[92] = p.tclass;
  d[93] = p.hop_limit;
  d[94] = uint8_t((p.sl & 15) << 4 | (p.global ? 0 : 1) << 3);
  d[95] = uint8_t(std::min(31, p.packet_life + 1) << 3);  // the local ACK timeout, as ib_cm sets it
  put_cma_hdr(d + kPrivate[0].at, m.src, m.dst);
  put_private(d, MsgType::kReq, m.private_data, kCmaHdr);
}

bool decode_req(const uint8_t* d, Msg& m) {
  Path& p = m.path;
  m.local_comm = uint32_t(get_be(d + 0, 4));
  m.service_id = get_be(d + 8, 8);
  m.qpn = uint32_t(get_be(d + 32, 3));
  m.responder_resources = d[35];
  m.initiator_depth = d[39];
  const unsigned transport = d[43] >> 1 & 3;
  if (transport > 1) return false;  // RD, or reserved: not rdma_cm's
  m.qp_type = transport ? kQptUc : kQptRc;
  m.flow_control = d[43] & 1;
  m.psn = uint32_t(get_be(d + 44, 3));
  m.retry = d[47] & 7;
  p.pkey = uint16_t(get_be(d + 48, 2));
  p.mtu = d[50] >> 4;
  m.rnr_retry = d[50] & 7;
  m.srq = d[51] >> 3 & 1;
  p.slid = uint16_t(get_be(d + 52, 2));
  p.dlid = uint16_t(get_be(d + 54, 2));
  std::memcpy(p.sgid.data(), d + 56, 16);
  std::memcpy(p.dgid.data(), d + 72, 16);
  const uint32_t fl_rate = uint32_t(get_be(d + 88, 4));
  p.flow_label = fl_rate >> 12;
  p.rate = fl_rate & 0x3F;
  p.tclass = d[92];
  p.hop_limit = d[93];
  p.sl = d[94] >> 4;
  p.global = !(d[94] >> 3 & 1);
  p.packet_life = uint8_t(std::max(0, (d[95] >> 3) - 1));
  if (p.mtu < 1 || p.mtu > 5) return false;
  m.dst.port = uint16_t(m.service_id & 0xFFFF);
  if (!get_cma_hdr(d + kPrivate[0].at, m.src, m.dst)) return false;
  m.private_data = get_private(d, MsgType::kReq, kCmaHdr);
  return true;
}

}  // namespace

CmMad encode(const Msg& m, uint64_t guid, uint64_t tid) {
  CmMad mad{};
  mad[0] = 1;
  mad[1] = kClassCm;
  mad[2] = kCmClassVersion;
  mad[3] = kSend;
  put_be(&mad[8], 8, tid);
  put_be(&mad[16], 2, kAttrReq + uint16_t(m.type));
  uint8_t* d = &mad[kData];
  switch (m.type) {
    case MsgType::kReq:
      encode_req(d, m, guid);
      return mad;
    case MsgType::kSidrReq:
      put_be(d + 0, 4, m.local_comm);
      put_be(d + 4, 2, m.path.pkey);
      put_be(d + 8, 8, m.service_id);
      put_cma_hdr(d + kPrivate[size_t(m.type)].at, m.src, m.dst);
      put_private(d, m.type, m.private_data, kCmaHdr);
      return mad;
    case MsgType::kSidrRep:
      put_be(d + 0, 4, m.remote_comm);  // the request's ID
      d[4] = uint8_t(m.reason);
      put_be(d + 8, 3, m.qpn);
      put_be(d + 12, 8, m.service_id);
      put_be(d + 20, 4, m.qkey);
      put_private(d, m.type, m.private_data);
      return mad;
    default:
      break;
  }
  put_be(d + 0, 4, m.local_comm);
  put_be(d + 4, 4, m.remote_comm);
  switch (m.type) {
    case MsgType::kRep:
      put_be(d + 8, 4, m.qkey);
      put_be(d + 12, 3, m.qpn);
      put_be(d + 20, 3, m.psn);
      d[24] = m.responder_resources;
      d[25] = m.initiator_depth;
      d[26] = uint8_t(15 << 3 | (m.flow_control & 1));  // target ACK delay: ours, 15
      d[27] = uint8_t((m.rnr_retry & 7) << 5 | (m.srq & 1) << 4);
      put_be(d + 28, 8, guid);
      break;
    case MsgType::kRej:
      d[8] = uint8_t((m.remote_comm ? 2 : 0) << 6);  // what is rejected: a REQ, or what follows
      put_be(d + 10, 2, m.reason);
      break;
    case MsgType::kMra:
      d[9] = uint8_t(kCmResponseTimeout << 3);
      break;
    case MsgType::kDreq:
      put_be(d + 8, 3, m.qpn);
      break;
    default:
      break;
  }
  put_private(d, m.type, m.private_data);
  return mad;
}

std::optional<Msg> decode(const CmMad& mad) {
  if (mad[0] != 1 || mad[1] != kClassCm || mad[2] != kCmClassVersion || mad[3] != kSend) return std::nullopt;
  const uint16_t attr = uint16_t(get_be(&mad[16], 2));
  if (attr < kAttrReq || attr > kAttrReq + uint16_t(MsgType::kSidrRep)) return std::nullopt;
  Msg m;
  m.type = MsgType(attr - kAttrReq);
  const uint8_t* d = &mad[kData];
  switch (m.type) {
    case MsgType::kReq:
      if (!decode_req(d, m)) return std::nullopt;
      return m;
    case MsgType::kSidrReq:
      m.local_comm = uint32_t(get_be(d + 0, 4));
      m.path.pkey = uint16_t(get_be(d + 4, 2));
      m.service_id = get_be(d + 8, 8);
      m.qp_type = kQptUd;
      m.dst.port = uint16_t(m.service_id & 0xFFFF);
      if (!get_cma_hdr(d + kPrivate[size_t(m.type)].at, m.src, m.dst)) return std::nullopt;
      m.private_data = get_private(d, m.type, kCmaHdr);
      return m;
    case MsgType::kSidrRep:
      m.remote_comm = uint32_t(get_be(d + 0, 4));
      m.reason = d[4];
      m.qpn = uint32_t(get_be(d + 8, 3));
      m.service_id = get_be(d + 12, 8);
      m.qkey = uint32_t(get_be(d + 20, 4));
      m.private_data = get_private(d, m.type);
      return m;
    default:
      break;
  }
  m.local_comm = uint32_t(get_be(d + 0, 4));
  m.remote_comm = uint32_t(get_be(d + 4, 4));
  switch (m.type) {
    case MsgType::kRep:
      m.qkey = uint32_t(get_be(d + 8, 4));
      m.qpn = uint32_t(get_be(d + 12, 3));
      m.psn = uint32_t(get_be(d + 20, 3));
      m.responder_resources = d[24];
      m.initiator_depth = d[25];
      m.flow_control = d[26] & 1;
      m.rnr_retry = d[27] >> 5;
      m.srq = d[27] >> 4 & 1;
      break;
    case MsgType::kRej:
      m.reason = uint16_t(get_be(d + 10, 2));
      break;
    case MsgType::kDreq:
      m.qpn = uint32_t(get_be(d + 8, 3));
      break;
    default:
      break;
  }
  m.private_data = get_private(d, m.type);
  return m;
}

}  // namespace vf::cm
