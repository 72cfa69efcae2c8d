#include "daemon/config/link_attrs.hpp"

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include "core/port_info.hpp"

namespace vf::config {
namespace {
// Our numbers must be the ones libibverbs' callers compare against.
static_assert(IBV_MTU_256 == 1 && IBV_MTU_4096 == 5);
static_assert(IBV_LINK_LAYER_INFINIBAND == 1 && IBV_LINK_LAYER_ETHERNET == 2);
constexpr uint32_t kCmSup = 1u << 16, kSysImageGuidSup = 1u << 11, kExtSpeedsSup = 1u << 14,
                   kIpBasedGids = 1u << 26;
}  // namespace

uint8_t ibv_active_width(IbWidth w) {
  switch (w) {
    case IbWidth::X1: return 1;
    case IbWidth::X4: return 2;
    case IbWidth::X8: return 4;
    case IbWidth::X12: return 8;
    case IbWidth::X2: return 16;
  }
  return 0;
}

uint8_t ibv_active_speed(IbSpeed s) {
  switch (s) {
    case IbSpeed::SDR: return 1;
    case IbSpeed::DDR: return 2;
    case IbSpeed::QDR: return 4;
    case IbSpeed::FDR10: return 8;
    case IbSpeed::FDR: return 16;
    case IbSpeed::EDR: return 32;
    case IbSpeed::HDR: return 64;
    case IbSpeed::NDR: return 128;
  }
  return 0;
}

uint8_t ibv_mtu_enum(uint32_t bytes) { return mtu_code(bytes); }

uint32_t active_mtu_bytes(LinkLayer ll, const Link& link) {
  if (ll == LinkLayer::Infiniband) return link.mtu;
  if (link.mtu < kRoceHeaderBudget + 256) return 0;
  uint32_t room = link.mtu - kRoceHeaderBudget;
  for (uint32_t m = 4096; m >= 256; m /= 2)
    if (m <= room) return m;
  return 0;
}

uint32_t port_cap_flags(LinkLayer ll) {
  return ll == LinkLayer::Infiniband ? (kCmSup | kSysImageGuidSup | kExtSpeedsSup) : (kCmSup | kIpBasedGids);
}

std::string sysfs_rate_text(IbWidth w, IbSpeed s) {
  // Same arithmetic as the kernel: deci-Gb/s per lane times lanes, ".5"
  // when there is a remainder (2.5 Gb/s SDR 1X).
  int deci = 25;
  switch (s) {
    case IbSpeed::SDR: deci = 25; break;
    case IbSpeed::DDR: deci = 50; break;
    case IbSpeed::QDR: deci = 100; break;
    case IbSpeed::FDR10: deci = 100; break;
    case IbSpeed::FDR: deci = 140; break;
    case IbSpeed::EDR: deci = 250; break;
    case IbSpeed::HDR: deci = 500; break;
    case IbSpeed::NDR: deci = 1000; break;
  }
  int rate = deci * static_cast<int>(lanes(w));
  return fmt::format("{}{} Gb/sec ({}X {})", rate / 10, rate % 10 ? ".5" : "", lanes(w), to_string(s));
}

std::string sysfs_rate_text_ibv(uint8_t ibv_width, uint8_t ibv_speed) {
  for (IbWidth w : {IbWidth::X1, IbWidth::X2, IbWidth::X4, IbWidth::X8, IbWidth::X12})
    for (IbSpeed s : {IbSpeed::SDR, IbSpeed::DDR, IbSpeed::QDR, IbSpeed::FDR10, IbSpeed::FDR, IbSpeed::EDR,
                      IbSpeed::HDR, IbSpeed::NDR})
      if (ibv_active_width(w) == ibv_width && ibv_active_speed(s) == ibv_speed) return sysfs_rate_text(w, s);
  return {};
}

vf::LinkLayer to_core(LinkLayer ll) {
  return ll == LinkLayer::Infiniband ? vf::LinkLayer::kInfiniBand : vf::LinkLayer::kEthernet;
}

PortAttrs port_attrs(const Fabric& f, const Link& link) {
  PortAttrs p;
  bool ib = f.link_layer == LinkLayer::Infiniband;
  p.link_layer = ib ? IBV_LINK_LAYER_INFINIBAND : IBV_LINK_LAYER_ETHERNET;
  p.active_width = ibv_active_width(link.width);
  p.active_speed = ibv_active_speed(link.speed);
  p.active_mtu_bytes = active_mtu_bytes(f.link_layer, link);
  p.active_mtu = ibv_mtu_enum(p.active_mtu_bytes);
  p.max_mtu = IBV_MTU_4096;
  p.port_cap_flags = port_cap_flags(f.link_layer);
  p.gid_tbl_len = kGidTableLen;
  p.pkey_tbl_len = ib ? kPkeyTableLenIb : kPkeyTableLenEth;
  p.rate_bps = link.rate_bps;
  p.rate_text = sysfs_rate_text(link.width, link.speed);
  return p;
}

}  // namespace vf::config
