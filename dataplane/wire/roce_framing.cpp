#include "dataplane/wire/roce_framing.hpp"

#include <cstring>

#include "dataplane/wire/checksum.hpp"
#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/icrc.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "dataplane/wire/ipv6.hpp"
#include "dataplane/wire/transport.hpp"
#include "dataplane/wire/udp.hpp"

namespace vf::wire {
namespace {

constexpr uint8_t kV4MappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};

// Where the IP header starts and which one it is, or why there is none.
struct L2 {
  RxError err;
  size_t off;
  uint16_t type;
  uint8_t pcp;
};

L2 parse_l2(const uint8_t* f, size_t len) {
  if (len < kEthHdrLen) return {RxError::kTruncated, 0, 0, 0};
  uint16_t type = eth_type(f);
  if (type != kEtherTypeVlan) return {RxError::kOk, kEthHdrLen, type, 0};
  if (len < kEthHdrLen + kVlanLen) return {RxError::kTruncated, 0, 0, 0};
  const uint8_t* tag = f + kEthTypeOffset;
  return {RxError::kOk, kEthHdrLen + kVlanLen, get16(tag + kVlanLen), vlan_pcp(tag)};
}

}  // namespace

bool gid_is_ipv4_mapped(const uint8_t* gid) {
  return std::memcmp(gid, kV4MappedPrefix, sizeof kV4MappedPrefix) == 0;
}

bool roce_encapsulate(rte_mbuf* m, const RoceRoute& r) {
  if (!rte_pktmbuf_is_contiguous(m)) return false;
  const size_t tlen = rte_pktmbuf_data_len(m);
  if (tlen < kBthLen) return false;
  const bool v4 = gid_is_ipv4_mapped(r.sgid) && gid_is_ipv4_mapped(r.dgid);
  const size_t l2 = kEthHdrLen + (r.vlan ? kVlanLen : 0);
  const size_t l3 = v4 ? kIpv4HdrLen : kIpv6HdrLen;
  const size_t udp_bytes = kUdpHdrLen + tlen + kIcrcLen;
  if ((v4 ? l3 : 0) + udp_bytes > 0xFFFF) return false;
  const size_t hlen = l2 + l3 + kUdpHdrLen;
  if (rte_pktmbuf_headroom(m) < hlen || rte_pktmbuf_tailroom(m) < kIcrcLen) return false;

  uint8_t* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, uint16_t(hlen)));
  rte_pktmbuf_append(m, kIcrcLen);
  std::memset(f, 0, hlen);

  eth_set_dst(f, r.dst_mac);
  eth_set_src(f, r.src_mac);
  if (r.vlan) {
    uint8_t* tag = f + kEthTypeOffset;
    vlan_set_tpid(tag, kEtherTypeVlan);
    vlan_set_pcp(tag, r.pcp);
    vlan_set_vid(tag, r.vid);
  }
  put16(f + l2 - 2, v4 ? kEtherTypeIpv4 : kEtherTypeIpv6);

  uint8_t* ip = f + l2;
  uint8_t* u = ip + l3;
  if (v4) {
    ipv4_set_version(ip, 4);
    ipv4_set_ihl(ip, kIpv4HdrLen / 4);
    ipv4_set_tos(ip, r.traffic_class);
    ipv4_set_total_len(ip, uint16_t(l3 + udp_bytes));
    ipv4_set_flags(ip, kIpv4FlagDf);
    ipv4_set_ttl(ip, r.hop_limit);
    ipv4_set_proto(ip, kIpProtoUdp);
    ipv4_set_src(ip, get32(r.sgid + 12));
    ipv4_set_dst(ip, get32(r.dgid + 12));
    ipv4_fill_checksum(ip);
  } else {
    ipv6_set_version(ip, 6);
    ipv6_set_tclass(ip, r.traffic_class);
    ipv6_set_payload_len(ip, uint16_t(udp_bytes));
    ipv6_set_next_header(ip, kIpProtoUdp);
    ipv6_set_hop_limit(ip, r.hop_limit);
    ipv6_set_src(ip, r.sgid);
    ipv6_set_dst(ip, r.dgid);
  }
  udp_set_sport(u, r.udp_sport);
  udp_set_dport(u, kRoceV2Port);
  udp_set_len(u, uint16_t(udp_bytes));

  const size_t covered = l3 + kUdpHdrLen + tlen;
  icrc_store(ip + covered, icrc_roce(ip, covered));
  // The ICRC masks the UDP checksum, so it can be computed last, over the ICRC.
  if (!v4) udp_set_checksum(u, udp_checksum_ipv6(ip, u, udp_bytes));
  return true;
}

RxError roce_decapsulate(rte_mbuf* m, RxMeta* meta) {
  if (!rte_pktmbuf_is_contiguous(m) || rte_pktmbuf_pkt_len(m) != rte_pktmbuf_data_len(m))
    return RxError::kNonContiguous;
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  const size_t len = rte_pktmbuf_data_len(m);
  const L2 l2 = parse_l2(f, len);
  if (l2.err != RxError::kOk) return l2.err;

  const uint8_t* ip = f + l2.off;
  const size_t avail = len - l2.off;
  size_t ihl = 0, total = 0;
  const bool v4 = l2.type == kEtherTypeIpv4;
  if (v4) {
    if (avail < kIpv4HdrLen) return RxError::kTruncated;
    if (ipv4_version(ip) != 4) return RxError::kBadVersion;
    ihl = ipv4_ihl(ip) * 4u;
    if (ihl < kIpv4HdrLen) return RxError::kBadLength;
    if (avail < ihl) return RxError::kTruncated;
    if (!ipv4_checksum_ok(ip)) return RxError::kBadIpChecksum;
    total = ipv4_total_len(ip);
    if (total < ihl) return RxError::kBadLength;
    if (total > avail) return RxError::kTruncated;
    if ((ipv4_flags(ip) & kIpv4FlagMf) || ipv4_frag_offset(ip) != 0) return RxError::kFragmented;
    if (ipv4_proto(ip) != kIpProtoUdp) return RxError::kNotRoce;
  } else if (l2.type == kEtherTypeIpv6) {
    if (avail < kIpv6HdrLen) return RxError::kTruncated;
    if (ipv6_version(ip) != 6) return RxError::kBadVersion;
    ihl = kIpv6HdrLen;
    total = kIpv6HdrLen + ipv6_payload_len(ip);
    if (total > avail) return RxError::kTruncated;
    // Extension headers are not followed: RoCEv2 senders do not emit them.
    if (ipv6_next_header(ip) != kIpProtoUdp) return RxError::kNotRoce;
  } else {
    return RxError::kBadEtherType;
  }

  const size_t udp_bytes = total - ihl;
  if (udp_bytes < kUdpHdrLen) return RxError::kBadLength;
  const uint8_t* u = ip + ihl;
  if (udp_dport(u) != kRoceV2Port) return RxError::kNotRoce;
  if (udp_len(u) != udp_bytes) return RxError::kBadLength;
  if (udp_bytes < kUdpHdrLen + kBthLen + kIcrcLen) return RxError::kBadLength;
  if (udp_checksum(u) != 0) {
    const bool ok = v4 ? udp_checksum_ok_ipv4(ip, u, udp_bytes) : udp_checksum_ok_ipv6(ip, u, udp_bytes);
    if (!ok) return RxError::kBadUdpChecksum;
  }

  const size_t covered = total - kIcrcLen;
  if (icrc_roce(ip, covered) != icrc_load(ip + covered)) return RxError::kBadIcrc;

  if (meta) {
    *meta = RxMeta{};
    meta->has_grh = true;
    // RoCE has no SL: a completion's sl carries what mlx5 puts there, the
    // frame's kind (bit 3: UDP-encapsulated, bits 2:0: 1 IPv6, 2 IPv4). UCX
    // reads it to find the destination address in a UD buffer's GRH area.
    meta->sl = uint8_t(kRoceCqeSlUdp | (v4 ? kRoceCqeSlIpv4 : kRoceCqeSlIpv6));
    if (v4) {
      std::memcpy(meta->sgid, kV4MappedPrefix, sizeof kV4MappedPrefix);
      std::memcpy(meta->dgid, kV4MappedPrefix, sizeof kV4MappedPrefix);
      std::memcpy(meta->sgid + 12, ip + 12, 4);
      std::memcpy(meta->dgid + 12, ip + 16, 4);
      meta->traffic_class = ipv4_tos(ip);
      // A UD receive's GRH area: zeros, then the 20-byte IPv4 header (mlx5).
      std::memcpy(meta->grh + 20, ip, kIpv4HdrLen);
    } else {
      std::memcpy(meta->sgid, ipv6_src(ip), kIpv6AddrLen);
      std::memcpy(meta->dgid, ipv6_dst(ip), kIpv6AddrLen);
      meta->traffic_class = ipv6_tclass(ip);
      std::memcpy(meta->grh, ip, kIpv6HdrLen);
    }
  }
  rte_pktmbuf_adj(m, uint16_t(l2.off + ihl + kUdpHdrLen));
  rte_pktmbuf_trim(m, uint16_t(len - (l2.off + total) + kIcrcLen));
  return RxError::kOk;
}

bool roce_frame_mark_ce(rte_mbuf* m) {
  if (!rte_pktmbuf_is_contiguous(m)) return false;
  uint8_t* f = rte_pktmbuf_mtod(m, uint8_t*);
  const size_t len = rte_pktmbuf_data_len(m);
  const L2 l2 = parse_l2(f, len);
  if (l2.err != RxError::kOk) return false;
  uint8_t* ip = f + l2.off;
  const size_t avail = len - l2.off;
  if (l2.type == kEtherTypeIpv4) {
    if (avail < kIpv4HdrLen || ipv4_version(ip) != 4) return false;
    const size_t ihl = ipv4_ihl(ip) * 4u;
    if (ihl < kIpv4HdrLen || avail < ihl) return false;
    const uint8_t ecn = ipv4_ecn(ip);
    if (ecn == kEcnNotEct) return false;
    if (ecn == kEcnCe) return true;
    // Incremental update (RFC 1624 eqn. 3) keeps a corrupt header corrupt.
    const uint16_t old_word = get16(ip);
    ipv4_set_ecn(ip, kEcnCe);
    const uint16_t sum = inet_add(inet_add(uint16_t(~ipv4_checksum(ip)), uint16_t(~old_word)), get16(ip));
    ipv4_set_checksum(ip, uint16_t(~sum));
    return true;
  }
  if (l2.type == kEtherTypeIpv6) {
    if (avail < kIpv6HdrLen || ipv6_version(ip) != 6) return false;
    const uint8_t tc = ipv6_tclass(ip);
    if ((tc & 3) == kEcnNotEct) return false;
    ipv6_set_tclass(ip, uint8_t(tc | kEcnCe));
    return true;
  }
  return false;
}

}  // namespace vf::wire
