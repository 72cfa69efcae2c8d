// The IPv4 router inside an Ethernet switch, in virtual time: ECMP by the
// flow's UDP source port, TTL and checksum on the way, dead members skipped,
// drops by cause, ARP for the gateway answered, hosts resolved by ARP while
// their packets wait, routed ports that never bridge, and every ingress
// byte given back to the shared buffer.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "dataplane/fabric/eth_switch.hpp"
#include "dataplane/fabric/ipv4_routes.hpp"
#include "dataplane/wire/arp.hpp"
#include "dataplane/wire/bytes.hpp"
#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

constexpr uint64_t G = 1'000'000'000ULL;
constexpr uint32_t kGateway = 0xC6120001;  // 198.18.0.1/26
constexpr uint32_t kHost1 = 0xC6120014;    // 198.18.0.20, behind port 2
constexpr uint32_t kRemote = 0xC6336407;   // 198.51.100.7, via ports 3 and 4
const Mac kRouter{0x02, 0x52, 0, 0, 0, 1};
const Mac kBroadcast{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
Mac mac(uint8_t last) { return Mac{0x02, 0, 0, 0, 0, last}; }

rte_mbuf* udp_frame(const Mac& dst, const Mac& src, uint32_t sip, uint32_t dip, uint16_t sport, uint8_t ttl = 64) {
  rte_mbuf* m = test::make_frame(14 + 20 + 8 + 32);
  auto* f = rte_pktmbuf_mtod(m, uint8_t*);
  wire::eth_set_dst(f, dst.data());
  wire::eth_set_src(f, src.data());
  wire::eth_set_type(f, wire::kEtherTypeIpv4);
  uint8_t* ip = f + 14;
  ip[0] = 0x45;
  wire::ipv4_set_tos(ip, 106);
  wire::ipv4_set_total_len(ip, 20 + 8 + 32);
  wire::ipv4_set_ttl(ip, ttl);
  wire::ipv4_set_proto(ip, wire::kIpProtoUdp);
  wire::ipv4_set_src(ip, sip);
  wire::ipv4_set_dst(ip, dip);
  wire::ipv4_fill_checksum(ip);
  wire::put16(ip + 20, sport);
  wire::put16(ip + 22, 4791);
  return m;
}

rte_mbuf* arp_frame(const Mac& dst, const wire::ArpMsg& a) {
  rte_mbuf* m = test::make_frame(60);
  auto* f = rte_pktmbuf_mtod(m, uint8_t*);
  wire::eth_set_dst(f, dst.data());
  wire::eth_set_src(f, a.sha.data());
  wire::eth_set_type(f, wire::kEtherTypeArp);
  wire::arp_put(f + 14, a);
  return m;
}

struct Got {
  Mac dst, src;
  uint16_t type;
  uint8_t ttl = 0;
  bool checksum_ok = false;
  uint16_t sport = 0;
  std::optional<wire::ArpMsg> arp;
};

struct Host {
  Host(Scheduler& s, std::string name) : port(s, std::move(name), LinkLayer::kEthernet) {
    port.set_owner(this, &Host::on_rx);
  }
  static void on_rx(void* self, Port& p, rte_mbuf* m, unsigned cls) {
    const auto* f = rte_pktmbuf_mtod(m, const uint8_t*);
    Got g;
    std::memcpy(g.dst.data(), f, 6);
    std::memcpy(g.src.data(), f + 6, 6);
    g.type = wire::eth_type(f);
    if (g.type == wire::kEtherTypeIpv4) {
      g.ttl = wire::ipv4_ttl(f + 14);
      g.checksum_ok = wire::ipv4_checksum_ok(f + 14);
      g.sport = wire::get16(f + 34);
    } else if (g.type == wire::kEtherTypeArp) {
      g.arp = wire::arp_parse(f + 14, rte_pktmbuf_data_len(m) - 14);
    }
    static_cast<Host*>(self)->got.push_back(g);
    const uint32_t len = rte_pktmbuf_pkt_len(m);
    rte_pktmbuf_free(m);
    p.release(cls, len);
  }
  Port port;
  std::vector<Got> got;
};

// Ports 1, 2: bridged hosts on the gateway's subnet; ports 3, 4: routed
// links to two upstream routers (mac(3), mac(4)); 198.51.100.0/24 over both.
// `ar`: the switch's adaptive routing; `routed_bps`: the routed links' rate.
struct Lab {
  explicit Lab(AdaptiveConfig ar = {}, uint64_t routed_bps = 10 * G) : sw(s, "leaf", cfg(ar)) {
    for (unsigned i = 0; i < 4; ++i) {
      host.push_back(std::make_unique<Host>(s, "h" + std::to_string(i + 1)));
      link.push_back(
          std::make_unique<Link>(s, LinkLayer::kEthernet, LinkParams{i >= 2 ? routed_bps : 10 * G, 50, 1500}));
      connect_ports(host.back()->port, sw.port(i + 1), *link.back());
    }
    RouterConfig rc;
    rc.mac = kRouter;
    rc.gateway = kGateway;
    rc.prefix_len = 26;
    rc.routed_ports = {3, 4};
    router = &sw.enable_routing(rc, vf::test::test_mbuf_pool());
    Ipv4Route up;
    up.prefix = 0xC6336400;
    up.len = 24;
    up.hops = {{3, mac(3)}, {4, mac(4)}};
    router->set_routes({up});
  }
  static SwitchConfig cfg(AdaptiveConfig ar) {
    SwitchConfig c;
    c.nports = 4;
    c.buffer_bytes = 1 << 20;
    c.adaptive = ar;
    return c;
  }
  // Delivers `m` and whatever it causes within a millisecond (ARP probes
  // are a second apart: they stay pending).
  void send(unsigned port, rte_mbuf* m) {
    host[port - 1]->port.enqueue(0, m);
    s.advance_to(s.now() + 1'000'000);
  }
  std::vector<Got>& got(unsigned port) { return host[port - 1]->got; }
  uint64_t relay_errors(unsigned port) const { return sw.port(port).snapshot(0).port_rcv_switch_relay_errors; }

  Scheduler s;
  EthSwitch sw;
  Router* router = nullptr;
  std::vector<std::unique_ptr<Host>> host;
  std::vector<std::unique_ptr<Link>> link;
};

TEST(Router, SpreadsFlowsOverEcmpMembersByUdpSourcePortAndKeepsEachFlowOnOnePath) {
  Lab lab;
  std::map<uint16_t, unsigned> path_of;  // sport -> port it left by
  for (uint16_t sport = 0xC000; sport < 0xC000 + 64; ++sport) {
    for (int repeat = 0; repeat < 2; ++repeat) {
      const size_t before3 = lab.got(3).size();
      lab.send(1, udp_frame(kRouter, mac(1), 0xC612000A, kRemote, sport));
      const unsigned out = lab.got(3).size() > before3 ? 3 : 4;
      if (repeat == 0) path_of[sport] = out;
      EXPECT_EQ(path_of[sport], out) << "flow " << sport << " changed path";
    }
  }
  EXPECT_EQ(lab.got(3).size() + lab.got(4).size(), 128u);
  EXPECT_GT(lab.got(3).size(), 32u);  // 64 flows over 2 members: neither starves
  EXPECT_GT(lab.got(4).size(), 32u);
  for (unsigned p : {3u, 4u})
    for (const Got& g : lab.got(p)) {
      EXPECT_EQ(g.dst, mac(uint8_t(p)));
      EXPECT_EQ(g.src, kRouter);
      EXPECT_EQ(g.ttl, 63);
      EXPECT_TRUE(g.checksum_ok);
    }
  EXPECT_EQ(lab.router->counters().routed.get(), 128u);
  EXPECT_EQ(lab.sw.buffer()->used(), 0u);
}

TEST(Router, AMemberGoingDownMovesOnlyItsOwnFlows) {
  Lab lab;
  std::map<uint16_t, unsigned> before;
  for (uint16_t sport = 0xC000; sport < 0xC000 + 32; ++sport) {
    const size_t n3 = lab.got(3).size();
    lab.send(1, udp_frame(kRouter, mac(1), 0xC612000A, kRemote, sport));
    before[sport] = lab.got(3).size() > n3 ? 3 : 4;
  }
  lab.sw.port(3).set_link_up(false);
  for (const auto& [sport, port] : before) {
    if (port != 4) continue;
    const size_t n4 = lab.got(4).size();
    lab.send(1, udp_frame(kRouter, mac(1), 0xC612000A, kRemote, sport));
    EXPECT_EQ(lab.got(4).size(), n4 + 1) << "flow " << sport << " moved although its member stayed up";
  }
}

// One flow, a burst at 10 Gb/s into routed links of 1 Gb/s: queues build.
std::vector<uint16_t> burst_paths(Lab& lab, unsigned n) {
  for (unsigned i = 0; i < n; ++i) lab.host[0]->port.enqueue(0, udp_frame(kRouter, mac(1), 0xC612000A, kRemote, 0xC001));
  lab.s.advance_to(lab.s.now() + 1'000'000);
  return {uint16_t(lab.got(3).size()), uint16_t(lab.got(4).size())};
}

TEST(Router, PerPacketAdaptiveRoutingSpraysOneFlowOverEveryMember) {
  Lab lab({AdaptiveMode::kPerPacket, 0}, 1 * G);
  const std::vector<uint16_t> got = burst_paths(lab, 8);
  EXPECT_EQ(got[0] + got[1], 8);
  EXPECT_GE(got[0], 3) << "the flow hash names one member; adaptive routing uses both";
  EXPECT_GE(got[1], 3);
  const RouterSnapshot r = lab.router->snapshot();
  EXPECT_GT(r.ar_rerouted, 0u);
  EXPECT_EQ(r.routed, 8u);
  EXPECT_EQ(lab.sw.buffer()->used(), 0u);
}

TEST(Router, HashAndFlowletModesKeepABurstOfOneFlowOnOneMember) {
  for (const AdaptiveMode mode : {AdaptiveMode::kOff, AdaptiveMode::kFlowlet}) {
    Lab lab({mode, 100'000}, 1 * G);
    const std::vector<uint16_t> got = burst_paths(lab, 8);
    SCOPED_TRACE(mode == AdaptiveMode::kOff ? "hash" : "flowlet");
    EXPECT_TRUE((got[0] == 8 && got[1] == 0) || (got[0] == 0 && got[1] == 8));
    EXPECT_EQ(lab.router->snapshot().ar_flowlets, mode == AdaptiveMode::kFlowlet ? 1u : 0u);
  }
}

TEST(Router, ArpOnARoutedPortIsNotTheGatewaysBusiness) {
  Lab lab;
  wire::ArpMsg q;
  q.sha = mac(3);
  q.spa = 0xC612000B;
  q.tpa = kGateway;
  lab.send(3, arp_frame(kBroadcast, q));
  wire::ArpMsg a;
  a.op = wire::kArpReply;
  a.sha = mac(3);
  a.spa = kHost1;  // claims a host's address from the routed link
  a.tha = kRouter;
  a.tpa = kGateway;
  lab.send(3, arp_frame(kRouter, a));
  EXPECT_TRUE(lab.got(3).empty()) << "no reply on the routed link";
  EXPECT_TRUE(lab.got(1).empty() && lab.got(2).empty());
  EXPECT_TRUE(lab.router->neighbours().empty());
  EXPECT_EQ(lab.router->counters().not_routable.get(), 2u);
  EXPECT_EQ(lab.sw.buffer()->used(), 0u);
}

TEST(Router, AMemberWhoseLinkIsDownIsSkippedAndNoLiveMemberIsADrop) {
  Lab lab;
  lab.sw.port(3).set_link_up(false);
  for (uint16_t sport = 0xC000; sport < 0xC000 + 16; ++sport)
    lab.send(1, udp_frame(kRouter, mac(1), 0xC612000A, kRemote, sport));
  EXPECT_EQ(lab.got(3).size(), 0u);
  EXPECT_EQ(lab.got(4).size(), 16u);
  lab.sw.port(4).set_link_up(false);
  lab.send(1, udp_frame(kRouter, mac(1), 0xC612000A, kRemote, 0xC000));
  EXPECT_EQ(lab.router->counters().no_next_hop.get(), 1u);
  EXPECT_EQ(lab.relay_errors(1), 1u);
  EXPECT_EQ(lab.sw.buffer()->used(), 0u);
}

TEST(Router, DropsWhatCannotBeRoutedAndCountsWhy) {
  Lab lab;
  lab.send(1, udp_frame(kRouter, mac(1), 0xC612000A, kRemote, 1, /*ttl=*/1));
  lab.send(1, udp_frame(kRouter, mac(1), 0xC612000A, 0x0A000001, 1));  // 10.0.0.1: no route
  lab.send(1, udp_frame(kRouter, mac(1), 0xC612000A, kGateway, 1));
  rte_mbuf* bad = udp_frame(kRouter, mac(1), 0xC612000A, kRemote, 1);
  rte_pktmbuf_mtod(bad, uint8_t*)[14 + 10] ^= 0x5A;  // checksum
  lab.send(1, bad);
  rte_mbuf* longer = udp_frame(kRouter, mac(1), 0xC612000A, kRemote, 1);
  wire::ipv4_set_total_len(rte_pktmbuf_mtod(longer, uint8_t*) + 14, 1400);  // more than arrived
  wire::ipv4_fill_checksum(rte_pktmbuf_mtod(longer, uint8_t*) + 14);
  lab.send(1, longer);
  lab.send(3, udp_frame(mac(9), mac(3), kRemote, kHost1, 1));  // a routed port, not our MAC
  const RouterCounters& c = lab.router->counters();
  EXPECT_EQ(c.ttl_exceeded.get(), 1u);
  EXPECT_EQ(c.no_route.get(), 1u);
  EXPECT_EQ(c.to_router.get(), 1u);
  EXPECT_EQ(c.header_errors.get(), 2u);
  EXPECT_EQ(c.not_routable.get(), 1u);
  EXPECT_EQ(c.routed.get(), 0u);
  EXPECT_EQ(lab.relay_errors(1), 5u);
  EXPECT_EQ(lab.relay_errors(3), 1u);
  EXPECT_TRUE(lab.got(3).empty() && lab.got(4).empty() && lab.got(2).empty());
  EXPECT_EQ(lab.sw.buffer()->used(), 0u);
}

TEST(Router, AnswersArpForTheGatewayAloneAndLearnsTheAsker) {
  Lab lab;
  wire::ArpMsg q;
  q.sha = mac(1);
  q.spa = 0xC612000A;
  q.tpa = kGateway;
  lab.send(1, arp_frame(kBroadcast, q));
  ASSERT_EQ(lab.got(1).size(), 1u);
  const Got& r = lab.got(1)[0];
  ASSERT_TRUE(r.arp);
  EXPECT_EQ(r.arp->op, wire::kArpReply);
  EXPECT_EQ(Mac(r.arp->sha), kRouter);
  EXPECT_EQ(r.arp->spa, kGateway);
  EXPECT_EQ(r.dst, mac(1));
  EXPECT_TRUE(lab.got(2).empty());  // the gateway's request is not flooded
  EXPECT_TRUE(lab.got(3).empty() && lab.got(4).empty());
  const auto n = lab.router->neighbours();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].first, 0xC612000Au);
  EXPECT_EQ(n[0].second, mac(1));
  EXPECT_EQ(lab.sw.buffer()->used(), 0u);
}

TEST(Router, AHostNotYetResolvedGetsItsPacketsOnceItAnswersArp) {
  Lab lab;
  for (uint16_t i = 0; i < 3; ++i) lab.send(3, udp_frame(kRouter, mac(3), kRemote, kHost1, uint16_t(0xC000 + i)));
  // One request, broadcast into the gateway's VLAN (not to the routed ports).
  for (unsigned p : {1u, 2u}) {
    ASSERT_EQ(lab.got(p).size(), 1u) << "port " << p;
    ASSERT_TRUE(lab.got(p)[0].arp);
    EXPECT_EQ(lab.got(p)[0].arp->op, wire::kArpRequest);
    EXPECT_EQ(lab.got(p)[0].arp->tpa, kHost1);
    EXPECT_EQ(lab.got(p)[0].arp->spa, kGateway);
    EXPECT_EQ(lab.got(p)[0].dst, kBroadcast);
  }
  EXPECT_TRUE(lab.got(4).empty());
  EXPECT_EQ(lab.sw.buffer()->used(), 0u);  // waiting packets hold no ingress buffer
  wire::ArpMsg a;
  a.op = wire::kArpReply;
  a.sha = mac(2);
  a.spa = kHost1;
  a.tha = kRouter;
  a.tpa = kGateway;
  lab.send(2, arp_frame(kRouter, a));
  ASSERT_EQ(lab.got(2).size(), 4u);
  for (size_t i = 1; i < 4; ++i) {
    const Got& g = lab.got(2)[i];
    EXPECT_EQ(g.type, wire::kEtherTypeIpv4);
    EXPECT_EQ(g.dst, mac(2));
    EXPECT_EQ(g.src, kRouter);
    EXPECT_EQ(g.ttl, 63);
    EXPECT_TRUE(g.checksum_ok);
    EXPECT_EQ(g.sport, 0xC000 + i - 1);  // in order
  }
  // Resolved now: the next one goes straight through.
  lab.send(3, udp_frame(kRouter, mac(3), kRemote, kHost1, 0xC100));
  EXPECT_EQ(lab.got(2).size(), 5u);
  EXPECT_EQ(lab.got(1).size(), 1u);
  EXPECT_EQ(lab.router->counters().routed.get(), 4u);
  EXPECT_EQ(lab.sw.buffer()->used(), 0u);
}

TEST(Router, AHostThatNeverAnswersCostsItsWaitingPacketsAfterThreeProbes) {
  Lab lab;
  for (uint16_t i = 0; i < 2; ++i) lab.send(3, udp_frame(kRouter, mac(3), kRemote, kHost1, uint16_t(0xC000 + i)));
  lab.s.advance_to(lab.s.now() + 3 * Neighbours::kRetransTime);
  EXPECT_EQ(lab.got(2).size(), 3u);  // three requests, no data
  EXPECT_EQ(lab.router->neighbour_counters().failed.get(), 1u);
  EXPECT_EQ(lab.router->neighbour_counters().unresolved_discards.get(), 2u);
  EXPECT_EQ(lab.sw.buffer()->used(), 0u);
}

TEST(Router, RoutedPortsNeverBridge) {
  Lab lab;
  lab.send(1, udp_frame(kBroadcast, mac(1), 0xC612000A, 0xC61200FF, 1));
  EXPECT_EQ(lab.got(2).size(), 1u);  // flooded in the VLAN
  EXPECT_TRUE(lab.got(3).empty() && lab.got(4).empty());
  lab.send(3, udp_frame(kBroadcast, mac(3), kRemote, 0xC61200FF, 1));
  EXPECT_EQ(lab.got(2).size(), 1u);
  EXPECT_EQ(lab.router->counters().not_routable.get(), 1u);
}

TEST(Router, ANextHopOnABridgedPortIsRefused) {
  Lab lab;
  Ipv4Route r;
  r.prefix = 0x0A000000;
  r.len = 8;
  r.hops = {{2, mac(2)}};
  EXPECT_THROW(lab.router->set_routes({r}), std::invalid_argument);
  EXPECT_EQ(lab.router->routes().routes().size(), 2u);  // unchanged: the uplink and the connected subnet
}

TEST(Ipv4Routes, TheLongestPrefixWins) {
  Ipv4Routes t;
  Ipv4Route wide{0x0A000000, 8, false, {{1, mac(1)}}};
  Ipv4Route narrow{0x0A010000, 16, false, {{2, mac(2)}}};
  Ipv4Route host{0x0A010203, 32, true, {}};
  t.set({wide, narrow, host});
  EXPECT_EQ(t.lookup(0x0A010203)->len, 32);
  EXPECT_EQ(t.lookup(0x0A010204)->len, 16);
  EXPECT_EQ(t.lookup(0x0A020304)->len, 8);
  EXPECT_EQ(t.lookup(0x0B000001), nullptr);
  Ipv4Route deflt{0, 0, false, {{3, mac(3)}}};
  t.set({deflt, narrow});
  EXPECT_EQ(t.lookup(0x0B000001)->len, 0);
}

TEST(Ipv4Routes, RefusesHostBitsDuplicatesAndEmptyGroups) {
  Ipv4Routes t;
  EXPECT_THROW(t.set({Ipv4Route{0x0A000001, 8, false, {{1, mac(1)}}}}), std::invalid_argument);
  EXPECT_THROW(t.set({Ipv4Route{0x0A000000, 8, false, {}}}), std::invalid_argument);
  EXPECT_THROW(t.set({Ipv4Route{0x0A000000, 8, true, {}}, Ipv4Route{0x0A000000, 8, true, {}}}),
               std::invalid_argument);
  EXPECT_THROW(t.set({Ipv4Route{0, 33, true, {}}}), std::invalid_argument);
  EXPECT_TRUE(t.routes().empty());
}

TEST(Ipv4Header, DecrementingTtlUpdatesTheChecksumAsAFullRecomputeWould) {
  uint8_t h[20] = {0x45, 106, 0, 60, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 198, 18, 0, 10, 198, 51, 100, 7};
  for (int ttl : {255, 64, 2, 1}) {
    h[8] = uint8_t(ttl);
    wire::ipv4_fill_checksum(h);
    wire::ipv4_decrement_ttl(h);
    EXPECT_EQ(h[8], ttl - 1);
    EXPECT_EQ(wire::ipv4_checksum(h), wire::ipv4_compute_checksum(h)) << "ttl " << ttl;
  }
}

}  // namespace
}  // namespace vf::dp
