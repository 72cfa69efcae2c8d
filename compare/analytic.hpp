// What each fabric's headers cost, computed from the wire formats rather than
// measured: the figure the measured goodput of the encapsulation scenario is
// held against. Bytes per packet on the wire beyond the payload:
//  - InfiniBand: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 (the rate is the data rate
//    after line coding, so 64b/66b is in the rate, not here);
//  - RoCEv2: Ethernet 14 + IPv4 20 (IPv6 40) + UDP 8 + BTH 12 + ICRC 4 + FCS 4,
//    plus preamble/SFD 8 and inter-frame gap 12, padded to the 64-byte
//    minimum frame.
// The first packet of an RDMA WRITE adds RETH 16.
#pragma once

#include <cstdint>

namespace vf::compare {

enum class Encap { kInfiniBand, kRoceV4, kRoceV6 };
enum class Op { kSend, kWrite };

const char* encap_name(Encap e);
const char* op_name(Op o);

// Wire bytes of one packet carrying `payload` bytes (`first_of_write`: RETH).
uint64_t packet_wire_bytes(Encap e, uint32_t payload, bool first_of_write);

// Wire bytes of one message of `bytes` split into path-MTU packets.
uint64_t message_wire_bytes(Encap e, Op op, uint64_t bytes, uint32_t path_mtu);

// Goodput of back-to-back messages on a link of `rate_bps`, in b/s.
double analytic_goodput_bps(Encap e, Op op, uint64_t bytes, uint32_t path_mtu, uint64_t rate_bps);

// The largest IBA path MTU a RoCEv2 packet fits in on an Ethernet MTU (IP
// header through ICRC, with a RETH), as rxe and mlx5 choose it.
uint32_t roce_path_mtu(uint32_t eth_mtu, Encap e = Encap::kRoceV4);

}  // namespace vf::compare
