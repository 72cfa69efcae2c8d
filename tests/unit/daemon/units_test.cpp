// Units, addresses and edit distance: the parsers every config value goes through.
#include <gtest/gtest.h>

#include "daemon/config/addr.hpp"
#include "daemon/config/units.hpp"

namespace vf {
namespace {

TEST(Units, DelaysNeedAUnitAndWholeNanoseconds) {
  using units::parse_delay_ns;
  EXPECT_EQ(parse_delay_ns("100ns", 1'000'000'000), 100u);
  EXPECT_EQ(parse_delay_ns("1.5us", 1'000'000'000), 1500u);
  EXPECT_EQ(parse_delay_ns("2ms", 1'000'000'000), 2'000'000u);
  EXPECT_EQ(parse_delay_ns("0.25 ms", 1'000'000'000), 250'000u);
  EXPECT_EQ(parse_delay_ns("\xC2\xB5s", 1'000'000'000), std::nullopt);
  EXPECT_EQ(parse_delay_ns("3\xC2\xB5s", 1'000'000'000), 3000u);
  EXPECT_EQ(parse_delay_ns("0ns", 1'000'000'000), 0u);
  EXPECT_EQ(parse_delay_ns("100", 1'000'000'000), std::nullopt);      // no unit
  EXPECT_EQ(parse_delay_ns("1.5ns", 1'000'000'000), std::nullopt);    // not whole ns
  EXPECT_EQ(parse_delay_ns("-1ns", 1'000'000'000), std::nullopt);
  EXPECT_EQ(parse_delay_ns("2s", 1'000'000'000), std::nullopt);       // above max
  EXPECT_EQ(parse_delay_ns("1e3ns", 1'000'000'000), std::nullopt);
  EXPECT_EQ(parse_delay_ns(".5us", 1'000'000'000), std::nullopt);
  EXPECT_EQ(parse_delay_ns("99999999999999999999999ns", UINT64_MAX), std::nullopt);
}

TEST(Units, SizesNeedAUnitAndWholeBytes) {
  using units::parse_size_bytes;
  EXPECT_EQ(parse_size_bytes("32KiB", 1 << 30), 32768u);
  EXPECT_EQ(parse_size_bytes("1.5KiB", 1 << 30), 1536u);
  EXPECT_EQ(parse_size_bytes("64kB", 1 << 30), 64000u);
  EXPECT_EQ(parse_size_bytes("2MiB", 1 << 30), 2u * 1024 * 1024);
  EXPECT_EQ(parse_size_bytes("4GiB", uint64_t{1} << 40), uint64_t{4} << 30);
  EXPECT_EQ(parse_size_bytes("2GB", uint64_t{1} << 40), 2'000'000'000u);
  EXPECT_EQ(parse_size_bytes("2GiB", 1 << 30), std::nullopt);  // over the maximum
  EXPECT_EQ(parse_size_bytes("1MB", 1 << 30), 1'000'000u);
  EXPECT_EQ(parse_size_bytes("4224B", 1 << 30), 4224u);
  EXPECT_EQ(parse_size_bytes(" 8 KiB ", 1 << 30), 8192u);
  EXPECT_EQ(parse_size_bytes("32768", 1 << 30), std::nullopt);   // no unit
  EXPECT_EQ(parse_size_bytes("32kib", 1 << 30), std::nullopt);   // units are case-sensitive
  EXPECT_EQ(parse_size_bytes("32Kb", 1 << 30), std::nullopt);    // bits are not a size
  EXPECT_EQ(parse_size_bytes("0.3B", 1 << 30), std::nullopt);    // not whole bytes
  EXPECT_EQ(parse_size_bytes("1.0001KiB", 1 << 30), std::nullopt);
  EXPECT_EQ(parse_size_bytes("2MiB", 1024 * 1024), std::nullopt);  // above max
  EXPECT_EQ(parse_size_bytes("-1KiB", 1 << 30), std::nullopt);
  EXPECT_EQ(parse_size_bytes("99999999999999999999MiB", UINT64_MAX), std::nullopt);
}

TEST(Units, RatesAreBitsPerSecond) {
  using units::parse_rate_bps;
  EXPECT_EQ(parse_rate_bps("100G"), 100'000'000'000u);
  EXPECT_EQ(parse_rate_bps("25Gbps"), 25'000'000'000u);
  EXPECT_EQ(parse_rate_bps("400Mb/s"), 400'000'000u);
  EXPECT_EQ(parse_rate_bps("2.5Gbit/s"), 2'500'000'000u);
  EXPECT_EQ(parse_rate_bps("100k"), 100'000u);
  EXPECT_EQ(parse_rate_bps("100"), std::nullopt);
  EXPECT_EQ(parse_rate_bps("10GB/s"), std::nullopt);  // bytes are ambiguous
  EXPECT_EQ(parse_rate_bps("0G"), std::nullopt);
  EXPECT_EQ(parse_rate_bps("fast"), std::nullopt);
}

TEST(Units, FormatsRoundTrip) {
  EXPECT_EQ(units::format_delay(1500), "1.5us");
  EXPECT_EQ(units::format_delay(100), "100ns");
  EXPECT_EQ(units::format_delay(2'000'000), "2ms");
  EXPECT_EQ(units::format_rate(100'000'000'000ULL), "100 Gb/s");
  EXPECT_EQ(units::format_rate(13'636'363'636ULL), "13.64 Gb/s");
}

TEST(Units, DidYouMean) {
  std::vector<std::string> keys{"name", "link_layer", "subnet_prefix", "switches", "hcas", "links"};
  EXPECT_EQ(units::did_you_mean("link_layr", keys), "link_layer");
  EXPECT_EQ(units::did_you_mean("Switches", keys), "switches");
  EXPECT_EQ(units::did_you_mean("hca", keys), "hcas");
  EXPECT_EQ(units::did_you_mean("swtiches", keys), "switches");  // transposition
  EXPECT_EQ(units::edit_distance("ecoh", "echo"), 1u);
  EXPECT_EQ(units::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(units::did_you_mean("banana", keys), "");
  EXPECT_EQ(units::did_you_mean(std::string(10000, 'x'), keys), "");
}

TEST(Addr, Ipv4IsStrict) {
  EXPECT_EQ(addr::parse_ipv4("198.18.0.1"), 0xc6120001u);
  EXPECT_EQ(addr::parse_ipv4("198.18.0.256"), std::nullopt);
  EXPECT_EQ(addr::parse_ipv4("198.18.0"), std::nullopt);
  EXPECT_EQ(addr::parse_ipv4("198.18.0.1.5"), std::nullopt);
  EXPECT_EQ(addr::parse_ipv4("192.0.02.1"), std::nullopt);
  EXPECT_EQ(addr::parse_ipv4("198.18.0.1/24"), std::nullopt);
  EXPECT_EQ(addr::format_ipv4(0xc6120001u), "198.18.0.1");
  EXPECT_NE(addr::ipv4_unusable_reason(*addr::parse_ipv4("127.0.0.1")), "");
  EXPECT_NE(addr::ipv4_unusable_reason(*addr::parse_ipv4("239.1.1.1")), "");
  EXPECT_EQ(addr::ipv4_unusable_reason(*addr::parse_ipv4("10.1.2.3")), "");
}

TEST(Addr, GidTextFormsMatchLinux) {
  auto gid = addr::make_gid(0xfe80000000000000ULL, 0x0002c90300a1b2c3ULL);
  EXPECT_EQ(addr::format_gid_sysfs(gid), "fe80:0000:0000:0000:0002:c903:00a1:b2c3");
  EXPECT_EQ(addr::format_gid_short(gid), "fe80::2:c903:a1:b2c3");
  EXPECT_EQ(addr::format_gid_short(addr::ipv4_mapped_gid(0xc6120001u)), "::ffff:198.18.0.1");
  EXPECT_EQ(addr::format_guid_sysfs(0x0002c90300a1b2c3ULL), "0002:c903:00a1:b2c3");
  EXPECT_EQ(addr::parse_guid("0002:c903:00a1:b2c3"), 0x0002c90300a1b2c3ULL);
  EXPECT_EQ(addr::parse_guid("0x0002c90300a1b2c3"), 0x0002c90300a1b2c3ULL);
  EXPECT_EQ(addr::parse_guid("0x10002c90300a1b2c3"), std::nullopt);
  addr::Mac mac{0x02, 0x56, 0x46, 0x12, 0x34, 0x56};
  EXPECT_EQ(addr::eui64_from_mac(mac), 0x005646fffe123456ULL);
  EXPECT_EQ(addr::parse_mac("02:56:46:12:34:56"), mac);
  EXPECT_EQ(addr::parse_mac("02-56-46-12-34-56"), mac);
  EXPECT_EQ(addr::parse_mac("02:56:46:12:34"), std::nullopt);
  EXPECT_EQ(addr::format_mac(mac), "02:56:46:12:34:56");
}

}  // namespace
}  // namespace vf
