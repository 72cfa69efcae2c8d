#include "dataplane/wire/frame_summary.hpp"

#include <arpa/inet.h>

#include <cstdarg>
#include <cstdio>

#include "dataplane/wire/arp.hpp"
#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/fcp.hpp"
#include "dataplane/wire/grh.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "dataplane/wire/ipv6.hpp"
#include "dataplane/wire/lrh.hpp"
#include "dataplane/wire/ndp.hpp"
#include "dataplane/wire/opcode.hpp"
#include "dataplane/wire/transport.hpp"
#include "dataplane/wire/udp.hpp"

namespace vf::wire {
namespace {

[[gnu::format(printf, 1, 2)]] std::string fmt(const char* f, ...) {
  char b[160];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(b, sizeof b, f, ap);
  va_end(ap);
  return b;
}

std::string bth_text(const uint8_t* b, size_t len) {
  if (len < kBthLen) return " (truncated BTH)";
  const OpDesc d = describe_opcode(bth_opcode(b));
  const Transport t = Transport(bth_opcode(b) >> 5);
  return fmt(" %s %s QP 0x%06x PSN %u%s%s", transport_name(t), d.name, bth_dqpn(b), bth_psn(b),
             bth_ackreq(b) ? " A" : "", bth_becn(b) ? " BECN" : "");
}

std::string ib_summary(const uint8_t* p, size_t len) {
  if (len == kFcpLen) {
    Fcp f;
    if (fcp_parse(p, len, f) != FcpError::kOk) return "IB link packet (bad LPCRC or Op)";
    return fmt("IB flow control%s VL%u FCTBS %u FCCL %u", f.op == FcpOp::kInit ? " init" : "", f.vl, f.fctbs, f.fccl);
  }
  if (len < kLrhLen) return fmt("IB runt (%zu bytes)", len);
  std::string s = fmt("IB LID %u > %u VL%u SL%u", lrh_slid(p), lrh_dlid(p), lrh_vl(p), lrh_sl(p));
  switch (lrh_lnh(p)) {
    case kLnhIbaLocal: return s + bth_text(p + kLrhLen, len - kLrhLen);
    case kLnhIbaGlobal:
      if (len < kLrhLen + kGrhLen) return s + " (truncated GRH)";
      return s + " GRH" + bth_text(p + kLrhLen + kGrhLen, len - kLrhLen - kGrhLen);
    default: return s + fmt(" LNH %u (not IBA transport)", lrh_lnh(p));
  }
}

std::string udp_text(const uint8_t* u, size_t len) {
  if (len < kUdpHdrLen) return " UDP (truncated)";
  std::string s = fmt(" UDP %u > %u", udp_sport(u), udp_dport(u));
  if (udp_dport(u) != kRoceV2Port) return s;
  return s + " RoCEv2" + bth_text(u + kUdpHdrLen, len - kUdpHdrLen);
}

// tcpdump's words for ARP.
std::string arp_text(const uint8_t* a, size_t len) {
  const auto m = arp_parse(a, len);
  if (!m) return "ARP (malformed)";
  char sp[INET_ADDRSTRLEN], tp[INET_ADDRSTRLEN];
  const uint32_t s = htonl(m->spa), t = htonl(m->tpa);
  inet_ntop(AF_INET, &s, sp, sizeof sp);
  inet_ntop(AF_INET, &t, tp, sizeof tp);
  if (m->op == kArpRequest) return fmt("ARP, Request who-has %s tell %s", tp, sp);
  const auto& h = m->sha;
  return fmt("ARP, Reply %s is-at %02x:%02x:%02x:%02x:%02x:%02x", sp, h[0], h[1], h[2], h[3], h[4], h[5]);
}

// Neighbour Discovery, as tcpdump prints it; other ICMPv6 by type.
std::string icmp6_text(const uint8_t* ip, size_t len) {
  const auto nd = nd_parse(ip, len);
  if (!nd) return fmt(" ICMP6 type %u", len > kIpv6HdrLen ? ip[kIpv6HdrLen] : 0);
  char t[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, nd->target.data(), t, sizeof t);
  if (nd->type == kNdSolicit) return fmt(" ICMP6, neighbor solicitation, who has %s", t);
  return fmt(" ICMP6, neighbor advertisement, tgt is %s", t);
}

std::string eth_summary(const uint8_t* p, size_t len) {
  if (len < kEthHdrLen) return fmt("Ethernet runt (%zu bytes)", len);
  std::string s;
  size_t off = kEthHdrLen;
  uint16_t type = eth_type(p);
  if (type == kEtherTypeVlan) {
    if (len < kEthHdrLen + kVlanLen) return "Ethernet 802.1Q (truncated)";
    const uint8_t* tag = p + kEthTypeOffset;
    s = fmt("vlan %u p%u ", vlan_vid(tag), vlan_pcp(tag));
    type = get16(p + kEthTypeOffset + kVlanLen);
    off += kVlanLen;
  }
  const uint8_t* ip = p + off;
  const size_t rest = len - off;
  if (type == kEtherTypeIpv4) {
    if (rest < kIpv4HdrLen || ipv4_ihl(ip) < 5 || rest < size_t(ipv4_ihl(ip)) * 4) return s + "IPv4 (truncated)";
    char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
    const uint32_t src = htonl(ipv4_src(ip)), dst = htonl(ipv4_dst(ip));
    inet_ntop(AF_INET, &src, a, sizeof a);
    inet_ntop(AF_INET, &dst, b, sizeof b);
    s += fmt("IP %s > %s", a, b);
    if (ipv4_ecn(ip) == kEcnCe) s += " CE";
    if (ipv4_proto(ip) != kIpProtoUdp) return s + fmt(" proto %u", ipv4_proto(ip));
    const size_t hl = size_t(ipv4_ihl(ip)) * 4;
    return s + udp_text(ip + hl, rest - hl);
  }
  if (type == kEtherTypeIpv6) {
    if (rest < kIpv6HdrLen) return s + "IPv6 (truncated)";
    char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, ipv6_src(ip), a, sizeof a);
    inet_ntop(AF_INET6, ipv6_dst(ip), b, sizeof b);
    s += fmt("IP6 %s > %s", a, b);
    if (ipv6_next_header(ip) == kIpProtoIcmpv6) return s + icmp6_text(ip, rest);
    if (ipv6_next_header(ip) != kIpProtoUdp) return s + fmt(" next header %u", ipv6_next_header(ip));
    return s + udp_text(ip + kIpv6HdrLen, rest - kIpv6HdrLen);
  }
  if (type == kEtherTypeArp) return s + arp_text(ip, rest);
  return s + fmt("ethertype 0x%04x", type);
}

}  // namespace

std::string frame_summary(const uint8_t* p, size_t len, bool ib) { return ib ? ib_summary(p, len) : eth_summary(p, len); }

}  // namespace vf::wire
