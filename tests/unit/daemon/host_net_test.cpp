// fabricd's refusal of vHCA addresses the host already uses: the pure rule
// over a described host (the integration test netdev_test runs it against
// interfaces it creates).
#include <gtest/gtest.h>

#include "daemon/config/addr.hpp"
#include "daemon/config/config.hpp"
#include "daemon/ip/host_net.hpp"

namespace vf {
namespace {

uint32_t ip(const char* s) { return *addr::parse_ipv4(s); }

NetdevSpec vroce0(uint8_t len = 32) {
  NetdevSpec s;
  s.name = "vroce0";
  s.hca = "vroce0";
  s.ethernet = true;
  s.ipv4 = ip("198.18.0.1");
  s.prefix_len = len;
  return s;
}

// A lab host: eth0 on a /24 of its site network, with a default route.
HostNet lab_host() {
  HostNet h;
  h.ifnames = {"lo", "eth0"};
  h.addrs = {{"lo", ip("127.0.0.1"), 8}, {"eth0", ip("10.20.30.2"), 24}};
  h.routes = {{"eth0", ip("10.20.30.0"), 24}};
  return h;
}

TEST(HostClash, NoneOnAHostWithOtherNetworks) {
  EXPECT_EQ(host_clash(vroce0(), lab_host()), "");
  EXPECT_EQ(host_clash(vroce0(15), lab_host()), "");
}

TEST(HostClash, TheHostsOwnAddressOrSubnetIsNamed) {
  HostNet h = lab_host();
  NetdevSpec s = vroce0();
  s.ipv4 = ip("10.20.30.2");
  const std::string same = host_clash(s, h);
  EXPECT_NE(same.find("vHCA vroce0 (10.20.30.2/32 on interface vroce0) overlaps the host's address 10.20.30.2/24 on eth0"),
            std::string::npos) << same;
  EXPECT_NE(same.find("198.18.0.0/15"), std::string::npos) << same;
  s.ipv4 = ip("10.20.30.77");  // not an address of the host, but inside eth0's subnet
  EXPECT_NE(host_clash(s, h), "");
}

TEST(HostClash, AWiderVhcaSubnetCoveringAHostAddressClashes) {
  HostNet h = lab_host();
  h.addrs.push_back({"eth1", ip("198.18.7.9"), 32});
  EXPECT_EQ(host_clash(vroce0(24), h), "");
  EXPECT_NE(host_clash(vroce0(16), h).find("198.18.7.9/32 on eth1"), std::string::npos);
}

TEST(HostClash, RoutesClashButDefaultRoutesAreNotRead) {
  HostNet h = lab_host();
  h.routes.push_back({"wg0", ip("198.18.0.0"), 28});
  EXPECT_NE(host_clash(vroce0(), h).find("route to 198.18.0.0/28 via wg0"), std::string::npos);
}

TEST(HostClash, AnInterfaceNameTheHostHasClashes) {
  HostNet h = lab_host();
  h.ifnames.push_back("vroce0");
  const std::string m = host_clash(vroce0(), h);
  EXPECT_NE(m.find("already has an interface named vroce0"), std::string::npos) << m;
  EXPECT_NE(m.find("netdev: NAME"), std::string::npos) << m;
}

TEST(HostClash, ReadsThisHostsLoopback) {
  const HostNet h = read_host_net();
  bool lo = false;
  for (const auto& a : h.addrs) lo = lo || (a.ifname == "lo" && a.ip == ip("127.0.0.1") && a.len == 8);
  EXPECT_TRUE(lo);
}

TEST(NetdevSpecs, FromTheDefaultConfig) {
  const auto c = config::load_config(std::string(VF_SOURCE_DIR) + "/configs/default.yaml");
  const auto specs = netdev_specs(c);
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].name, "vib0");
  EXPECT_FALSE(specs[0].ethernet);
  EXPECT_EQ(specs[0].mtu, 4092u);  // IPoIB datagram mode on a 4096 IB MTU
  EXPECT_EQ(specs[0].prefix_len, 32);
  EXPECT_EQ(specs[2].name, "vroce0");
  EXPECT_TRUE(specs[2].ethernet);
  EXPECT_EQ(specs[2].mtu, 1500u);
  EXPECT_EQ(specs[2].ipv4, ip("198.18.0.1"));
  EXPECT_EQ(specs[2].mac, c.fabrics[1].hcas[0].mac);
}

}  // namespace
}  // namespace vf
