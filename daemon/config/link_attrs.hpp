// What a vHCA port reports for its link, in the encodings ibv_port_attr and
// sysfs use. The provider's query_port and the runtime tree both take their
// numbers from here so ibv_devinfo and sysfs agree.
#pragma once

#include <cstdint>
#include <string>

#include "core/types.hpp"
#include "daemon/config/config.hpp"

namespace vf::config {

// enum ibv_port_attr::active_width values: 1X=1, 4X=2, 8X=4, 12X=8, 2X=16.
uint8_t ibv_active_width(IbWidth w);
// ibv_port_attr::active_speed values: SDR=1, DDR=2, QDR=4, FDR10=8, FDR=16,
// EDR=32, HDR=64, NDR=128.
uint8_t ibv_active_speed(IbSpeed s);
// enum ibv_mtu: 256 -> 1 ... 4096 -> 5; 0 for anything else.
uint8_t ibv_mtu_enum(uint32_t bytes);

// RoCEv2 headers the kernel budgets out of the Ethernet MTU for a RoCE port
// (include/rdma/ib_addr.h iboe_get_mtu): GRH/IPv6 40 + UDP 8 + BTH 12 +
// XRC ETH 4 + AtomicETH 28 + ICRC 4 = 96. It reserves room for an IPv6 header
// (RoCEv2 with the fe80:: GID uses one) and the largest extension header
// combination, so any packet of a full path MTU fits the Ethernet frame.
// Using the same budget makes a vHCA report what a Linux RoCE NIC reports:
// 1500 -> 1024, 4200 -> 4096, 9000 -> 4096, 1100 -> 512.
inline constexpr uint32_t kRoceHeaderBudget = 96;

// The IB path MTU in bytes a port runs with: IB = the link's MTU; Ethernet =
// the largest of 256..4096 that fits in mtu - kRoceHeaderBudget (0 if none).
uint32_t active_mtu_bytes(LinkLayer ll, const Link& link);

// GID / P_Key table sizes a vHCA port has. The sysfs tree writes exactly this
// many entries and the provider's query_port must report the same lengths.
inline constexpr uint32_t kGidTableLen = 16;
// IB: the configured P_Keys (default: 0xFFFF, full membership, at index 0),
// then invalid 0x0000 entries, as an SM leaves a table it did not fill.
inline constexpr uint32_t kPkeyTableLenIb = 16;
inline constexpr uint32_t kPkeyTableLenEth = 1;  // mlx5 RoCE ports have one P_Key

// port_cap_flags (IB_PORT_* bits, also sysfs cap_mask). IB: CM_SUP |
// SYS_IMAGE_GUID_SUP | EXTENDED_SPEEDS_SUP — only what a vHCA really does.
// Ethernet: CM_SUP | IP_BASED_GIDS, as mlx5 sets on RoCE ports.
uint32_t port_cap_flags(LinkLayer ll);

// The sysfs ports/1/rate text: "100 Gb/sec (4X EDR)" (kernel rate_show()).
std::string sysfs_rate_text(IbWidth w, IbSpeed s);
// The same from ibv_port_attr's active_width / active_speed encodings (what a
// PortInfo holds); empty when either is not one of them.
std::string sysfs_rate_text_ibv(uint8_t ibv_width, uint8_t ibv_speed);

// The config's link layer in the vocabulary below the daemon (core/types.hpp).
vf::LinkLayer to_core(LinkLayer ll);

struct PortAttrs {
  uint8_t link_layer = 0;    // IBV_LINK_LAYER_INFINIBAND (1) / _ETHERNET (2)
  uint8_t active_width = 0;  // ibv encoding
  uint8_t active_speed = 0;  // ibv encoding
  uint8_t active_mtu = 0;    // enum ibv_mtu
  uint8_t max_mtu = 0;       // enum ibv_mtu (4096 for both)
  uint32_t active_mtu_bytes = 0;
  uint32_t port_cap_flags = 0;
  uint32_t gid_tbl_len = 0;
  uint32_t pkey_tbl_len = 0;
  uint64_t rate_bps = 0;     // serializer rate (Link::rate_bps)
  std::string rate_text;     // sysfs "rate"
};
PortAttrs port_attrs(const Fabric& f, const Link& link);

}  // namespace vf::config
