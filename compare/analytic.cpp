#include "compare/analytic.hpp"

#include <algorithm>

namespace vf::compare {
namespace {

constexpr uint32_t kBth = 12, kIcrc = 4, kReth = 16;
constexpr uint32_t kLrh = 8, kVcrc = 2;
constexpr uint32_t kEth = 14, kIpv4 = 20, kIpv6 = 40, kUdp = 8, kFcs = 4;
constexpr uint32_t kPreamble = 8, kIfg = 12, kMinFrame = 64;

uint32_t ip_header(Encap e) { return e == Encap::kRoceV6 ? kIpv6 : kIpv4; }

}  // namespace

const char* encap_name(Encap e) {
  switch (e) {
    case Encap::kInfiniBand: return "InfiniBand";
    case Encap::kRoceV4: return "RoCEv2/IPv4";
    case Encap::kRoceV6: return "RoCEv2/IPv6";
  }
  return "?";
}

const char* op_name(Op o) { return o == Op::kSend ? "SEND" : "WRITE"; }

uint64_t packet_wire_bytes(Encap e, uint32_t payload, bool first_of_write) {
  // IBA pads the payload to a multiple of 4 (BTH PadCnt).
  const uint32_t body = kBth + (first_of_write ? kReth : 0) + ((payload + 3) & ~3u) + kIcrc;
  if (e == Encap::kInfiniBand) return kLrh + body + kVcrc;
  const uint32_t frame = std::max(kEth + ip_header(e) + kUdp + body + kFcs, kMinFrame);
  return kPreamble + frame + kIfg;
}

uint64_t message_wire_bytes(Encap e, Op op, uint64_t bytes, uint32_t path_mtu) {
  if (bytes == 0) return packet_wire_bytes(e, 0, op == Op::kWrite);
  uint64_t wire = 0;
  for (uint64_t off = 0; off < bytes; off += path_mtu) {
    const auto payload = uint32_t(std::min<uint64_t>(path_mtu, bytes - off));
    wire += packet_wire_bytes(e, payload, op == Op::kWrite && off == 0);
  }
  return wire;
}

double analytic_goodput_bps(Encap e, Op op, uint64_t bytes, uint32_t path_mtu, uint64_t rate_bps) {
  return double(rate_bps) * double(bytes) / double(message_wire_bytes(e, op, bytes, path_mtu));
}

uint32_t roce_path_mtu(uint32_t eth_mtu, Encap e) {
  const uint32_t overhead = ip_header(e) + kUdp + kBth + kReth + kIcrc;
  for (uint32_t m : {4096u, 2048u, 1024u, 512u, 256u})
    if (m + overhead <= eth_mtu) return m;
  return 256;
}

}  // namespace vf::compare
