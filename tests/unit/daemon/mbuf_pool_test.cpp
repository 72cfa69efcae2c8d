// The packet-buffer pool is sized from the fabric: what its ports queue and
// its links hold in flight, as 2^n - 1 buffers within the bounds.
#include <gtest/gtest.h>

#include <string>

#include "daemon/config/config.hpp"
#include "daemon/lcore/mbuf_pool.hpp"

namespace vf {
namespace {

std::string fabric_with_links(unsigned links, const std::string& link_attrs) {
  std::string y = "fabrics:\n  - name: ib\n    link_layer: infiniband\n    switches:\n      - {name: sw, ports: 36}\n"
                  "    hcas:\n";
  for (unsigned i = 0; i < links; ++i) y += "      - name: vib" + std::to_string(i) + "\n";
  y += "    links:\n";
  for (unsigned i = 0; i < links; ++i)
    y += "      - {a: vib" + std::to_string(i) + ", b: sw/" + std::to_string(i + 1) + ", speed: EDR, " + link_attrs + "}\n";
  return y;
}

uint32_t pool_for(const std::string& yaml) { return mbuf_pool_size(config::load_config_string(yaml, "test.yaml")); }

TEST(MbufPool, ShortLinksCountFramesInFlightAsOne) {
  config::Link l{};
  l.rate_bps = 100'000'000'000;
  l.delay_ns = 100;  // 1250 bytes on the wire: less than one 4 KiB frame
  l.mtu = 4096;
  EXPECT_EQ(link_flight_frames(config::LinkLayer::Infiniband, l), 1u);
}

TEST(MbufPool, LongFastLinksHoldTheirBandwidthDelayProduct) {
  config::Link l{};
  l.rate_bps = 100'000'000'000;
  l.delay_ns = 1'000'000;  // 12.5 MB in flight
  l.mtu = 4096;
  EXPECT_EQ(link_flight_frames(config::LinkLayer::Infiniband, l), 12'500'000 / 4096 + 1);
  l.delay_ns = 1'000'000'000;  // the longest delay at 12X NDR's 1.2 Tb/s does not overflow
  l.rate_bps = 1'200'000'000'000;
  EXPECT_EQ(link_flight_frames(config::LinkLayer::Infiniband, l), 150'000'000'000ULL / 4096 + 1);
}

TEST(MbufPool, RoceLinksCountFramesOfTheirPathMtu) {
  config::Link l{};
  l.rate_bps = 100'000'000'000;
  l.delay_ns = 1'000'000;
  l.mtu = 1500;  // the IP MTU: RoCE runs a 1024-byte path MTU on it
  EXPECT_EQ(link_flight_frames(config::LinkLayer::Ethernet, l), 12'500'000 / 1024 + 1);
  l.mtu = 9000;  // 4096, the largest IB MTU
  EXPECT_EQ(link_flight_frames(config::LinkLayer::Ethernet, l), 12'500'000 / 4096 + 1);
}

TEST(MbufPool, ASmallLabGetsASmallPool) {
  // 2048 + 2 links x 2 ends x (512 + 1) = 4100: the next 2^n - 1 is 8191.
  EXPECT_EQ(pool_for(fabric_with_links(2, "delay: 100ns")), 8191u);
  EXPECT_EQ(mbuf_pool_size(config::Config{}), kMinPoolMbufs);
}

TEST(MbufPool, ThePoolGrowsWithPortsAndLinkDelay) {
  const uint32_t few = pool_for(fabric_with_links(4, "delay: 100ns"));
  const uint32_t many = pool_for(fabric_with_links(32, "delay: 100ns"));
  const uint32_t far = pool_for(fabric_with_links(4, "delay: 1ms"));
  EXPECT_GT(many, few);
  EXPECT_GT(far, few);
  EXPECT_GE(many, 2048u + 32 * 2 * 513);
  for (uint32_t n : {few, many, far}) EXPECT_EQ((n + 1) & n, 0u) << n << " is not 2^n - 1";
}

TEST(MbufPool, HugeFabricsStopAtTheMaximum) {
  EXPECT_EQ(pool_for(fabric_with_links(32, "delay: 1s")), kMaxPoolMbufs);
}

}  // namespace
}  // namespace vf
