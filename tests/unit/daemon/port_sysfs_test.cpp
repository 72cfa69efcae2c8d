// A port record rendered as the kernel's ports/1 files.
#include "daemon/runtime/port_sysfs.hpp"

#include <gtest/gtest.h>

#include "daemon/config/addr.hpp"
#include "daemon/config/link_attrs.hpp"

namespace vf::runtime {
namespace {

TEST(PortSysfs, IbRecordInTheKernelsFormat) {
  PortInfo p;
  p.state = PortState::kArmed;
  p.phys_state = PhysState::kLinkUp;
  p.lid = 0x2a;
  p.lmc = 3;
  p.sm_lid = 0x100;
  p.sm_sl = 5;
  p.active_width = 1;   // 1X
  p.active_speed = 1;   // SDR
  p.port_cap_flags = 0x14800;
  p.gid_tbl_len = 3;
  p.gids = {addr::make_gid(0xfe80000000000000ULL, 0x0002c90300001234ULL)};
  const PortFiles want = {
      {"state", "3: ARMED\n"},
      {"phys_state", "5: LinkUp\n"},
      {"link_layer", "InfiniBand\n"},
      {"rate", "2.5 Gb/sec (1X SDR)\n"},
      {"lid", "0x2a\n"},
      {"sm_lid", "0x100\n"},
      {"lid_mask_count", "3\n"},
      {"sm_sl", "5\n"},
      {"cap_mask", "0x00014800\n"},
      {"gids/0", "fe80:0000:0000:0000:0002:c903:0000:1234\n"},
      {"gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n"},
      {"gids/2", "0000:0000:0000:0000:0000:0000:0000:0000\n"},
      {"gid_attrs/types/0", "IB/RoCE v1\n"},
      {"gid_attrs/types/1", "IB/RoCE v1\n"},
      {"gid_attrs/types/2", "IB/RoCE v1\n"},
  };
  EXPECT_EQ(port_info_files(p), want);
}

TEST(PortSysfs, RoceRecordHasNoLidsAndRoceV2Gids) {
  PortInfo p;
  p.link_layer = LinkLayer::kEthernet;
  p.lid = 9;  // meaningless on Ethernet; the kernel shows 0
  p.sm_lid = 9;
  p.lmc = 1;
  p.gids = {addr::make_gid(0xfe80000000000000ULL, 1), addr::ipv4_mapped_gid(0xC6120001)};
  const PortFiles f = port_info_files(p);
  EXPECT_EQ(f.at("link_layer"), "Ethernet\n");
  EXPECT_EQ(f.at("lid"), "0x0\n");
  EXPECT_EQ(f.at("sm_lid"), "0x0\n");
  EXPECT_EQ(f.at("lid_mask_count"), "0\n");
  EXPECT_EQ(f.at("rate"), "100 Gb/sec (4X EDR)\n");  // PortInfo's default 4X EDR
  EXPECT_EQ(f.at("gids/1"), "0000:0000:0000:0000:0000:ffff:c612:0001\n");
  EXPECT_EQ(f.at("gid_attrs/types/0"), "RoCE v2\n");
  EXPECT_EQ(f.at("gid_attrs/types/1"), "RoCE v2\n");
  EXPECT_EQ(f.count("gids/2"), 0u);  // gid_tbl_len 0: the table is the GIDs there are
  EXPECT_EQ(gid_table_len(p), 2u);
}

TEST(PortSysfs, RateFromIbvEncodingsMatchesTheConfigsText) {
  using config::IbSpeed;
  using config::IbWidth;
  for (IbWidth w : {IbWidth::X1, IbWidth::X2, IbWidth::X4, IbWidth::X8, IbWidth::X12})
    for (IbSpeed s : {IbSpeed::SDR, IbSpeed::DDR, IbSpeed::QDR, IbSpeed::FDR10, IbSpeed::FDR, IbSpeed::EDR,
                      IbSpeed::HDR, IbSpeed::NDR})
      EXPECT_EQ(config::sysfs_rate_text_ibv(config::ibv_active_width(w), config::ibv_active_speed(s)),
                config::sysfs_rate_text(w, s));
  EXPECT_EQ(config::sysfs_rate_text_ibv(3, 32), "");
  EXPECT_EQ(config::sysfs_rate_text_ibv(2, 0), "");
}

}  // namespace
}  // namespace vf::runtime
