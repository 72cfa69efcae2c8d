// The Fabric builder the daemon drives from its YAML: names, endpoints, the
// checks that turn config mistakes into readable errors, and counters by name.
#include <gtest/gtest.h>

#include <cstring>

#include "dataplane/fabric/fabric.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

constexpr uint64_t G = 1'000'000'000ULL;

TEST(Endpoint, Parses) {
  EXPECT_EQ(Endpoint::parse("vib0"), (Endpoint{"vib0", 0}));
  EXPECT_EQ(Endpoint::parse("ibsw0/12"), (Endpoint{"ibsw0", 12}));
  EXPECT_FALSE(Endpoint::parse(""));
  EXPECT_FALSE(Endpoint::parse("/1"));
  EXPECT_FALSE(Endpoint::parse("sw/"));
  EXPECT_FALSE(Endpoint::parse("sw/0"));
  EXPECT_FALSE(Endpoint::parse("sw/01"));
  EXPECT_FALSE(Endpoint::parse("sw/1x"));
  EXPECT_FALSE(Endpoint::parse("sw/1/2"));
  EXPECT_EQ(Endpoint::parse("ibsw0/3")->str(), "ibsw0/3");
}

struct FabricTest : ::testing::Test {
  Scheduler s;
  Fabric f{s, "ib", LinkLayer::kInfiniBand, vf::test::test_mbuf_pool()};
  const LinkParams edr{100 * G, 100, 4096};
  HcaPortConfig hca(uint16_t lid) {
    HcaPortConfig c;
    c.lid = lid;
    return c;
  }
};

TEST_F(FabricTest, BuildsTheDefaultLab) {
  Switch& sw = f.add_switch("ibsw0", 8, 0);
  f.add_hca_port("vib0", hca(1));
  f.add_hca_port("vib1", hca(2));
  f.connect(*Endpoint::parse("vib0"), *Endpoint::parse("ibsw0/1"), edr);
  f.connect(*Endpoint::parse("ibsw0/2"), *Endpoint::parse("vib1"), edr);
  f.set_lft("ibsw0", 1, 1);
  f.set_lft("ibsw0", 2, 2);
  EXPECT_EQ(&f.port(*Endpoint::parse("ibsw0/2")), &sw.port(2));
  EXPECT_EQ(f.find_hca_port("vib1")->lid(), 2);
  EXPECT_EQ(f.find_switch("nope"), nullptr);
  EXPECT_EQ(f.links().size(), 2u);
  EXPECT_EQ(f.links()[1].a.str(), "ibsw0/2");
  EXPECT_EQ(sw.port(2).link_params().rate_bps, 100 * G);

  const auto snap = f.snapshot(0);
  ASSERT_EQ(snap.size(), 2u + 8u);
  EXPECT_EQ(snap[0].name, "vib0");
  EXPECT_EQ(snap[2].name, "ibsw0/1");
  EXPECT_EQ(snap[9].name, "ibsw0/8");
}

TEST_F(FabricTest, RejectsBadRequestsReadably) {
  f.add_switch("ibsw0", 4, 0);
  f.add_hca_port("vib0", hca(1));
  f.add_hca_port("vib1", hca(2));
  EXPECT_THROW(f.add_switch("vib0", 4, 0), std::invalid_argument);      // duplicate name
  EXPECT_THROW(f.add_hca_port("ibsw0", hca(3)), std::invalid_argument);  // duplicate name
  EXPECT_THROW(f.add_switch("a/b", 4, 0), std::invalid_argument);
  EXPECT_THROW(f.add_switch("big", 300, 0), std::invalid_argument);
  HcaPortConfig eth;
  eth.link_layer = LinkLayer::kEthernet;
  EXPECT_THROW(f.add_hca_port("vroce0", eth), std::invalid_argument);  // wrong link layer

  f.connect(*Endpoint::parse("vib0"), *Endpoint::parse("ibsw0/1"), edr);
  try {
    f.connect(*Endpoint::parse("vib0"), *Endpoint::parse("ibsw0/2"), edr);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("vib0 is already linked"), std::string::npos) << e.what();
  }
  EXPECT_THROW(f.connect(*Endpoint::parse("vib1"), *Endpoint::parse("ibsw0/5"), edr), std::invalid_argument);
  EXPECT_THROW(f.connect(*Endpoint::parse("vib1"), *Endpoint::parse("ibsw0"), edr), std::invalid_argument);
  EXPECT_THROW(f.connect(*Endpoint::parse("vib1/1"), *Endpoint::parse("ibsw0/2"), edr), std::invalid_argument);
  EXPECT_THROW(f.connect(*Endpoint::parse("vib9"), *Endpoint::parse("ibsw0/2"), edr), std::invalid_argument);
  EXPECT_THROW(f.connect(*Endpoint::parse("ibsw0/2"), *Endpoint::parse("ibsw0/2"), edr), std::invalid_argument);
  EXPECT_THROW(f.connect(*Endpoint::parse("vib1"), *Endpoint::parse("ibsw0/2"), LinkParams{0, 0, 4096}),
               std::invalid_argument);
  EXPECT_THROW(f.set_lft("nosw", 1, 1), std::invalid_argument);
  EXPECT_THROW(f.set_neighbour("nohca", Gid{}, Mac{}), std::invalid_argument);
  EXPECT_EQ(f.links().size(), 1u);
  // A failed connect left vib1 free.
  f.connect(*Endpoint::parse("vib1"), *Endpoint::parse("ibsw0/2"), edr);
}

TEST_F(FabricTest, SwitchToSwitchLinksForwardHopByHop) {
  f.add_switch("leaf0", 4, 100);
  f.add_switch("leaf1", 4, 100);
  HcaPort& a = f.add_hca_port("a", hca(1));
  HcaPort& b = f.add_hca_port("b", hca(2));
  f.connect(*Endpoint::parse("a"), *Endpoint::parse("leaf0/1"), edr);
  f.connect(*Endpoint::parse("leaf0/4"), *Endpoint::parse("leaf1/4"), edr);
  f.connect(*Endpoint::parse("b"), *Endpoint::parse("leaf1/1"), edr);
  f.set_lft("leaf0", 2, 4);
  f.set_lft("leaf1", 2, 1);
  vf::dp::Route av{};
  av.dlid = 2;
  rte_mbuf* m = a.alloc();
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, 12));
  std::memset(p, 0, 12);
  a.transmit(m, av);
  s.run_until_idle();
  // 8 + 12 + 4 + 2 = 26 bytes = 2.08 ns per hop; three hops of 100 ns delay
  // and two switches of 100 ns: delivered at ceil at every hop.
  EXPECT_EQ(b.port().snapshot(0).port_rcv_pkts, 1u);
  EXPECT_EQ(b.snapshot(0).rx_no_receiver, 1u);  // nobody attached an engine
  EXPECT_EQ(f.find_switch("leaf1")->port(4).snapshot(0).port_rcv_pkts, 1u);
}

}  // namespace
}  // namespace vf::dp
