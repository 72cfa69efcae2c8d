// Switch forwarding in virtual time: by DLID through the LFT (and MLIDs through
// the MFT) and by MAC through the FDB, relay errors, store-and-forward latency, SL→VL, PCP classes, egress
// discards and receive-buffer accounting.
#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "dataplane/fabric/adaptive_routing.hpp"
#include "dataplane/fabric/eth_switch.hpp"
#include "dataplane/fabric/ib_switch.hpp"
#include "dataplane/wire/ib_framing.hpp"
#include "dataplane/wire/lrh.hpp"
#include "dataplane/wire/transport.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

using test::make_eth;
using test::make_ib;
using test::Recorder;

constexpr uint64_t G = 1'000'000'000ULL;

// A switch with bare host ports on its first `hosts` ports; host i (0-based)
// sits on switch port i+1.
struct Bench {
  Bench(LinkLayer ll, unsigned hosts, SwitchConfig cfg, LinkParams lp = {100 * G, 100, 4096},
        std::vector<LinkParams> per_host = {})
      : ib(ll == LinkLayer::kInfiniBand ? std::make_unique<IbSwitch>(s, "sw", cfg) : nullptr),
        eth(ll == LinkLayer::kEthernet ? std::make_unique<EthSwitch>(s, "sw", cfg) : nullptr),
        sw(ib ? static_cast<Switch&>(*ib) : *eth) {
    for (unsigned i = 0; i < hosts; ++i) {
      host.push_back(std::make_unique<Port>(s, "h" + std::to_string(i), ll));
      rec.push_back(std::make_unique<Recorder>(s));
      rec.back()->own(*host.back());
      link.push_back(std::make_unique<Link>(s, ll, i < per_host.size() ? per_host[i] : lp));
      connect_ports(*host.back(), sw.port(i + 1), *link.back());
    }
  }
  Scheduler s;
  std::unique_ptr<IbSwitch> ib;    // the one of the two the link layer asks for
  std::unique_ptr<EthSwitch> eth;
  Switch& sw;
  std::vector<std::unique_ptr<Port>> host;
  std::vector<std::unique_ptr<Recorder>> rec;
  std::vector<std::unique_ptr<Link>> link;
};

SwitchConfig ib_cfg(Nanos latency = 0, uint32_t queue = 256) {
  SwitchConfig c;
  c.nports = 4;
  c.latency_ns = latency;
  c.port.queue_pkts = queue;
  return c;
}

TEST(SwitchIb, ForwardsByDlidWithStoreAndForwardLatency) {
  Bench b(LinkLayer::kInfiniBand, 3, ib_cfg(50));
  b.ib->set_lft(2, 2);
  b.ib->set_lft(3, 3);
  b.host[0]->enqueue(0, make_ib(1000, 0, 0, 2, 1));
  b.s.run_until_idle();
  // 80 ns in + 100 ns delay, 50 ns switching, 80 ns out + 100 ns delay.
  ASSERT_EQ(b.rec[1]->got.size(), 1u);
  EXPECT_EQ(b.rec[1]->got[0].at, 410u);
  EXPECT_TRUE(b.rec[2]->got.empty());
  EXPECT_EQ(b.sw.port(1).snapshot(0).port_rcv_pkts, 1u);
  EXPECT_EQ(b.sw.port(2).snapshot(0).port_xmit_pkts, 1u);
  EXPECT_EQ(b.sw.port(2).snapshot(0).port_xmit_data, 250u);
  EXPECT_EQ(b.sw.port(1).snapshot(0).classes[0].rx_buffered_bytes, 0u);
}

TEST(SwitchIb, ZeroLatencyForwardsAtArrival) {
  Bench b(LinkLayer::kInfiniBand, 2, ib_cfg(0));
  b.ib->set_lft(2, 2);
  b.host[0]->enqueue(0, make_ib(1000, 0, 0, 2, 1));
  b.s.run_until_idle();
  EXPECT_EQ(b.rec[1]->got.at(0).at, 360u);
}

TEST(SwitchIb, UnknownUnsetMulticastAndLoopingDlidsAreRelayErrors) {
  Bench b(LinkLayer::kInfiniBand, 2, ib_cfg());
  b.ib->set_lft(2, 2);
  b.ib->set_lft(5, 1);  // back out the ingress port
  b.ib->set_lft(6, 0);  // management port 0: no management hook here
  b.ib->set_lft(7, 9);  // no such port
  for (uint16_t dlid : {uint16_t(4), uint16_t(5), uint16_t(6), uint16_t(7), uint16_t(0xC001), uint16_t(0xFFFF)})
    b.host[0]->enqueue(0, make_ib(100, 0, 0, dlid));
  b.host[0]->enqueue(0, make_ib(100, 0, 0, 2, 42));
  b.s.run_until_idle();
  EXPECT_EQ(b.rec[1]->tags(), (std::vector<uint32_t>{42}));
  const PortSnapshot in = b.sw.port(1).snapshot(0);
  EXPECT_EQ(in.port_rcv_switch_relay_errors, 6u);
  EXPECT_EQ(in.rx_drops, 6u);
  EXPECT_EQ(in.classes[0].rx_buffered_bytes, 0u);
  b.ib->set_lft(2, IbSwitch::kNoRoute);
  b.host[0]->enqueue(0, make_ib(100, 0, 0, 2));
  b.s.run_until_idle();
  EXPECT_EQ(b.sw.port(1).snapshot(0).port_rcv_switch_relay_errors, 7u);
}

TEST(SwitchIb, LftRejectsMulticastRange) {
  Scheduler s;
  IbSwitch sw(s, "sw", ib_cfg());
  EXPECT_THROW(sw.set_lft(0xC000, 1), std::invalid_argument);
  EXPECT_EQ(sw.lft(0xC000), IbSwitch::kNoRoute);
}

// A real IB packet (valid VCRC) so the switch can move it to another VL.
rte_mbuf* framed_ib(uint8_t sl, uint8_t vl, uint16_t dlid, uint32_t tag) {
  rte_mbuf* m = test::make_frame(wire::kBthLen + 28, 0);
  uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
  wire::bth_set_opcode(p, 0x64);  // UD SEND only
  wire::put32(p + (test::kTagOffset - wire::kLrhLen), tag);  // lands at kTagOffset once framed
  wire::IbRoute r;
  r.slid = 1;
  r.dlid = dlid;
  r.sl = sl;
  r.vl = vl;
  EXPECT_TRUE(wire::ib_encapsulate(m, r));
  return m;
}

TEST(SwitchIb, SlToVlMapsAndRewritesTheVl) {
  Bench b(LinkLayer::kInfiniBand, 2, ib_cfg());
  b.ib->set_lft(2, 2);
  EXPECT_EQ(b.ib->sl2vl(2, 11), 3);  // default: SL n -> VL n % 8
  b.ib->set_sl2vl(2, 3, 1);
  b.ib->set_sl2vl(2, 4, kVl15);  // SL4 may not use this port
  b.host[0]->enqueue(3, framed_ib(3, 3, 2, 1));
  b.host[0]->enqueue(4, framed_ib(4, 4, 2, 2));
  b.host[0]->enqueue(5, framed_ib(5, 5, 2, 3));
  b.s.run_until_idle();
  ASSERT_EQ(b.rec[1]->got.size(), 2u);
  EXPECT_EQ(b.rec[1]->got[0].cls, 1u);
  EXPECT_EQ(b.rec[1]->got[0].byte0 >> 4, 1);  // LRH VL rewritten
  EXPECT_EQ(b.rec[1]->got[1].cls, 5u);
  EXPECT_EQ(b.sw.port(1).snapshot(0).port_rcv_switch_relay_errors, 1u);
  EXPECT_EQ(b.sw.port(2).snapshot(0).classes[1].xmit_pkts, 1u);
}

// The SLtoVLMappingTable is per (input, output) pair: a VL change programmed
// for frames from port 1 to port 3 leaves those from port 2 on their VL.
TEST(SwitchIb, SlToVlIsPerInputAndOutputPortPair) {
  Bench b(LinkLayer::kInfiniBand, 3, ib_cfg());
  b.ib->set_lft(3, 3);
  b.ib->set_sl2vl(1, 3, 3, 5);
  EXPECT_EQ(b.ib->sl2vl(1, 3, 3), 5);
  EXPECT_EQ(b.ib->sl2vl(2, 3, 3), 3);
  EXPECT_EQ(b.ib->sl2vl(3, 3), 3) << "the port's shared table is unchanged";
  b.host[0]->enqueue(3, framed_ib(3, 3, 3, 1));
  b.host[1]->enqueue(3, framed_ib(3, 3, 3, 2));
  b.s.run_until_idle();
  ASSERT_EQ(b.rec[2]->got.size(), 2u);
  unsigned vl5 = 0, vl3 = 0;
  for (const auto& g : b.rec[2]->got) (g.cls == 5 ? vl5 : vl3) += 1;
  EXPECT_EQ(vl5, 1u);
  EXPECT_EQ(vl3, 1u);
  // The per-port form programs every input, the management port's (0) too.
  b.ib->set_sl2vl(3, 3, 6);
  for (unsigned in = 0; in <= 3; ++in) EXPECT_EQ(b.ib->sl2vl(in, 3, 3), 6) << in;
  EXPECT_THROW(b.ib->set_sl2vl(200, 3, 3, 1), std::invalid_argument);  // no input port 200
  EXPECT_THROW(b.ib->set_sl2vl(1, 3, 3, 9), std::invalid_argument);  // no VL 9
  EXPECT_THROW(b.ib->set_sl2vl(1, 3, 16, 1), std::invalid_argument);
  EXPECT_EQ(b.ib->sl2vl(1, 3, 3), 6);
}

// SL→VL and VL arbitration are per-port records, one per switch port, of the
// same type an HCA port's PortInfo embeds: a change to one port's table
// leaves the others alone.
TEST(SwitchIb, EveryPortHasItsOwnVlRecord) {
  SwitchConfig cfg = ib_cfg();
  cfg.data_vls = 4;
  Bench b(LinkLayer::kInfiniBand, 2, cfg);
  for (unsigned p = 1; p <= cfg.nports; ++p) {
    const PortQos& q = b.ib->qos(p);
    EXPECT_EQ(q, default_port_qos(4)) << "port " << p;
    EXPECT_EQ(q.data_vls, 4);
    EXPECT_EQ(q.sl2vl[6], 2);  // SL n -> VL n % 4
    EXPECT_EQ(q.vlarb_high.size, 0);
    ASSERT_EQ(q.vlarb_low.size, 4);
    for (uint8_t vl = 0; vl < 4; ++vl) EXPECT_EQ(q.vlarb_low.entries[vl], (VlArbEntry{vl, 64}));
  }
  b.ib->set_sl2vl(2, 6, 0);
  EXPECT_EQ(b.ib->qos(2).sl2vl[6], 0);
  EXPECT_EQ(b.ib->qos(1).sl2vl[6], 2);
  EXPECT_EQ(b.ib->qos(3).sl2vl[6], 2);
  // VL 4 is not operational with 4 data VLs; the record is unchanged.
  EXPECT_THROW(b.ib->set_sl2vl(2, 1, 4), std::invalid_argument);
  EXPECT_EQ(b.ib->qos(2).sl2vl[1], 1);
  EXPECT_THROW(b.ib->qos(0), std::out_of_range);
}

TEST(SwitchIb, RewritingTheVlOfAFrameWithBadVcrcIsARcvError) {
  Bench b(LinkLayer::kInfiniBand, 2, ib_cfg());
  b.ib->set_lft(2, 2);
  b.ib->set_sl2vl(2, 3, 1);
  b.host[0]->enqueue(3, make_ib(100, 3, 3, 2));  // no valid VCRC
  b.s.run_until_idle();
  EXPECT_TRUE(b.rec[1]->got.empty());
  EXPECT_EQ(b.sw.port(1).snapshot(0).port_rcv_errors, 1u);
}

TEST(SwitchIb, Vl15StaysOnVl15) {
  Bench b(LinkLayer::kInfiniBand, 2, ib_cfg());
  b.ib->set_lft(2, 2);
  b.host[0]->enqueue(kMgmtClass, make_ib(100, kVl15, 0, 2, 1));
  b.s.run_until_idle();
  ASSERT_EQ(b.rec[1]->got.size(), 1u);
  EXPECT_EQ(b.rec[1]->got[0].cls, kMgmtClass);
}

// Port 0, the management port: VL15 packets for the switch itself -- the
// permissive DLID of a directed route, or a LID whose LFT entry is 0 -- reach
// its hook with the port they came in by; data VLs to port 0 and VL15 to
// other LIDs do not. What the hook sends leaves on VL15.
struct MgmtSeen {
  std::vector<std::pair<unsigned, uint32_t>> got;  // (in port, tag)
  static void hook(void* self, IbSwitch&, unsigned in_port, rte_mbuf* m) {
    static_cast<MgmtSeen*>(self)->got.push_back({in_port, test::tag_of(m)});
    rte_pktmbuf_free(m);
  }
};

TEST(SwitchIb, VlFifteenPacketsForTheSwitchItselfReachItsManagementPort) {
  Bench b(LinkLayer::kInfiniBand, 2, ib_cfg());
  MgmtSeen seen;
  b.ib->set_lft(6, 0);  // the switch's own LID
  b.ib->set_lft(2, 2);
  b.host[1]->enqueue(kMgmtClass, make_ib(100, kVl15, 0, 0xFFFF, 1));  // before the hook: relay error
  b.s.run_until_idle();
  EXPECT_EQ(b.sw.port(2).snapshot(0).port_rcv_switch_relay_errors, 1u);
  b.ib->set_management(&MgmtSeen::hook, &seen);
  b.host[1]->enqueue(kMgmtClass, make_ib(100, kVl15, 0, 0xFFFF, 2));  // directed route
  b.host[0]->enqueue(kMgmtClass, make_ib(100, kVl15, 0, 6, 3));       // LID-routed to the switch
  b.host[0]->enqueue(kMgmtClass, make_ib(100, kVl15, 0, 2, 4));       // LID-routed past it
  b.host[0]->enqueue(0, make_ib(100, 0, 0, 6, 5));                    // a data VL to port 0
  b.s.run_until_idle();
  EXPECT_EQ(seen.got, (std::vector<std::pair<unsigned, uint32_t>>{{2, 2}, {1, 3}}));
  EXPECT_EQ(b.rec[1]->tags(), (std::vector<uint32_t>{4}));
  EXPECT_EQ(b.sw.port(1).snapshot(0).port_rcv_switch_relay_errors, 1u) << "data to port 0";
  EXPECT_EQ(b.sw.port(1).snapshot(0).classes[kMgmtClass].rx_buffered_bytes, 0u) << "consumed: buffer freed";
  EXPECT_EQ(b.ib->snapshot().mgmt_received, 2u);

  ASSERT_TRUE(b.ib->send_management(1, make_ib(100, kVl15, 0, 1, 7)));
  b.s.run_until_idle();
  ASSERT_EQ(b.rec[0]->got.size(), 1u);
  EXPECT_EQ(b.rec[0]->got[0].cls, kMgmtClass);
  EXPECT_EQ(b.rec[0]->tags(), (std::vector<uint32_t>{7}));
  EXPECT_FALSE(b.ib->send_management(3, make_ib(100, kVl15, 0, 1, 8))) << "port 3 has no link";
  EXPECT_FALSE(b.ib->send_management(9, make_ib(100, kVl15, 0, 1, 9))) << "no port 9";
  EXPECT_EQ(b.ib->snapshot().mgmt_sent, 1u);
  EXPECT_EQ(b.ib->snapshot().mgmt_dropped, 0u) << "the hook, not the switch, decides what is dropped";
}

TEST(SwitchIb, FullEgressQueueDiscardsAndReleasesIngressBuffer) {
  // 100 Gb/s in, 1 Gb/s out: frames arrive every 80 ns, leave every 8 us.
  Bench b(LinkLayer::kInfiniBand, 2, ib_cfg(0, 2), {}, {{100 * G, 100, 4096}, {1 * G, 100, 4096}});
  b.ib->set_lft(2, 2);
  for (uint32_t i = 0; i < 10; ++i) b.host[0]->enqueue(0, make_ib(1000, 0, 0, 2, i));
  b.s.run_until_idle();
  // One on the wire, two queued, seven discarded.
  EXPECT_EQ(b.rec[1]->tags(), (std::vector<uint32_t>{0, 1, 2}));
  const PortSnapshot out = b.sw.port(2).snapshot(0);
  EXPECT_EQ(out.port_xmit_discards, 7u);
  EXPECT_EQ(out.classes[0].max_depth_pkts, 2u);
  const PortSnapshot in = b.sw.port(1).snapshot(0);
  EXPECT_EQ(in.classes[0].rx_buffered_bytes, 0u);
  EXPECT_EQ(in.classes[0].rx_buffered_peak, 3000u);  // two queued + the arriving one
}

IbSwitch::PortMask ports(std::initializer_list<unsigned> nums) {
  IbSwitch::PortMask m;
  for (unsigned n : nums) m.set(n);
  return m;
}

// An MLID's packet goes to every port of its MFT entry but the one it came
// in on: a spanning tree's entries name the upstream port as well.
TEST(SwitchIb, MulticastIsReplicatedToTheMftPortsButNeverBackOut) {
  Bench b(LinkLayer::kInfiniBand, 4, ib_cfg(50));
  b.ib->set_mft(0xC001, ports({1, 2, 3}));
  b.host[0]->enqueue(0, make_ib(1000, 0, 0, 0xC001, 7));
  b.s.run_until_idle();
  EXPECT_TRUE(b.rec[0]->got.empty()) << "not back out of the ingress port";
  EXPECT_EQ(b.rec[1]->tags(), (std::vector<uint32_t>{7}));
  EXPECT_EQ(b.rec[2]->tags(), (std::vector<uint32_t>{7}));
  EXPECT_TRUE(b.rec[3]->got.empty()) << "port 4 is not in the entry";
  EXPECT_EQ(b.rec[1]->got[0].at, 410u);  // the same store-and-forward timing as unicast
  EXPECT_EQ(b.rec[2]->got[0].at, 410u);
  EXPECT_EQ(b.ib->counters().mcast_forwarded.get(), 1u);
  EXPECT_EQ(b.ib->counters().mcast_copies.get(), 2u);
  EXPECT_EQ(b.sw.port(1).snapshot(0).classes[0].rx_buffered_bytes, 0u);
  // From port 2 the same entry reaches ports 1 and 3.
  b.host[1]->enqueue(0, make_ib(1000, 0, 0, 0xC001, 8));
  b.s.run_until_idle();
  EXPECT_EQ(b.rec[0]->tags(), (std::vector<uint32_t>{8}));
  EXPECT_EQ(b.rec[2]->tags(), (std::vector<uint32_t>{7, 8}));
  EXPECT_EQ(b.rec[1]->tags(), (std::vector<uint32_t>{7}));
}

TEST(SwitchIb, EachMulticastCopyTakesTheVlOfItsOwnPortPair) {
  Bench b(LinkLayer::kInfiniBand, 3, ib_cfg());
  b.ib->set_mft(0xC002, ports({2, 3}));
  // Port 2 gets a copy, port 3 (the last) the original: move the copy to VL5.
  b.ib->set_sl2vl(1, 2, 3, 5);
  b.host[0]->enqueue(3, framed_ib(3, 3, 0xC002, 9));
  b.s.run_until_idle();
  ASSERT_EQ(b.rec[1]->got.size(), 1u);
  ASSERT_EQ(b.rec[2]->got.size(), 1u);
  EXPECT_EQ(b.rec[1]->got[0].cls, 5u);
  EXPECT_EQ(b.rec[1]->got[0].byte0 >> 4, 5);  // the copy's LRH VL rewritten...
  EXPECT_EQ(b.rec[2]->got[0].cls, 3u);
  EXPECT_EQ(b.rec[2]->got[0].byte0 >> 4, 3);  // ...and the original's left alone
  // The original moves too when its own pair says so.
  b.ib->set_sl2vl(1, 3, 3, 6);
  b.host[0]->enqueue(3, framed_ib(3, 3, 0xC002, 10));
  b.s.run_until_idle();
  ASSERT_EQ(b.rec[2]->got.size(), 2u);
  EXPECT_EQ(b.rec[2]->got[1].byte0 >> 4, 6);
  EXPECT_EQ(b.rec[1]->got.at(1).byte0 >> 4, 5);
  // An SL a port may not carry skips that port, not the others.
  b.ib->set_sl2vl(1, 2, 3, kVl15);
  b.host[0]->enqueue(3, framed_ib(3, 3, 0xC002, 11));
  b.s.run_until_idle();
  EXPECT_EQ(b.rec[1]->tags(), (std::vector<uint32_t>{9, 10}));
  EXPECT_EQ(b.rec[2]->tags(), (std::vector<uint32_t>{9, 10, 11}));
}

TEST(SwitchIb, MftTakesMulticastLidsAndTheSwitchsPortsOnly) {
  Scheduler s;
  IbSwitch sw(s, "sw", ib_cfg());
  EXPECT_THROW(sw.set_mft(0xBFFF, ports({1})), std::invalid_argument);
  EXPECT_THROW(sw.set_mft(0xFFFF, ports({1})), std::invalid_argument);  // the permissive LID
  EXPECT_THROW(sw.set_mft(0xC000, ports({0, 1})), std::invalid_argument);  // management port
  EXPECT_THROW(sw.set_mft(0xC000, ports({5})), std::invalid_argument);  // 4 ports
  EXPECT_EQ(sw.mft(0xC000), nullptr);
  sw.set_mft(0xFFFE, ports({4}));
  ASSERT_NE(sw.mft(0xFFFE), nullptr);
  EXPECT_EQ(*sw.mft(0xFFFE), ports({4}));
  sw.set_mft(0xFFFE, {});  // an empty mask clears the entry
  EXPECT_EQ(sw.mft(0xFFFE), nullptr);
}

// A tree may name a port whose link went down before the SM's next sweep:
// that port is skipped, and the original goes to a port that is up.
TEST(SwitchIb, MulticastSkipsPortsWhoseLinkIsDown) {
  Bench b(LinkLayer::kInfiniBand, 3, ib_cfg());
  b.ib->set_mft(0xC006, ports({2, 3, 4}));  // port 4 has no link at all
  b.sw.port(3).set_link_up(false);
  b.host[0]->enqueue(0, make_ib(1000, 0, 0, 0xC006, 12));
  b.s.run_until_idle();
  EXPECT_EQ(b.rec[1]->tags(), (std::vector<uint32_t>{12}));
  EXPECT_TRUE(b.rec[2]->got.empty());
  EXPECT_EQ(b.ib->counters().mcast_copies.get(), 1u) << "no copy for the ports that cannot send";
  EXPECT_EQ(b.sw.port(3).snapshot(0).port_xmit_discards, 0u);
  EXPECT_EQ(b.sw.port(1).snapshot(0).classes[0].rx_buffered_bytes, 0u);
  b.sw.port(2).set_link_up(false);  // nothing left: a relay error
  b.host[0]->enqueue(0, make_ib(1000, 0, 0, 0xC006, 13));
  b.s.run_until_idle();
  EXPECT_EQ(b.sw.port(1).snapshot(0).port_rcv_switch_relay_errors, 1u);
}

// A copy whose VL must change fails its VCRC check: dropped and counted,
// while the original, keeping its VL, goes on for its HCA to judge.
// A corrupt multicast packet is a link error on its ingress port: dropped
// before any copy is made, whether or not its VL would change anywhere.
TEST(SwitchIb, AMulticastPacketWithABadVcrcIsNeverReplicated) {
  Bench b(LinkLayer::kInfiniBand, 3, ib_cfg());
  b.ib->set_mft(0xC007, ports({2, 3}));
  b.ib->set_sl2vl(1, 2, 0, 1);  // port 2's copy would move to VL1
  b.host[0]->enqueue(0, make_ib(100, 0, 0, 0xC007, 14));  // no valid VCRC
  b.s.run_until_idle();
  EXPECT_TRUE(b.rec[1]->got.empty());
  EXPECT_TRUE(b.rec[2]->got.empty());
  const IbSwitchSnapshot c = b.ib->snapshot();
  EXPECT_EQ(c.mcast_bad_vcrc, 1u);
  EXPECT_EQ(c.mcast_copies, 0u);
  EXPECT_EQ(c.mcast_forwarded, 0u);
  EXPECT_EQ(b.sw.port(1).snapshot(0).port_rcv_errors, 1u);
  EXPECT_EQ(b.sw.port(1).snapshot(0).classes[0].rx_buffered_bytes, 0u);
  b.ib->reset_counters();
  EXPECT_EQ(b.ib->snapshot().mcast_bad_vcrc, 0u);
}

TEST(SwitchIb, MulticastWithNowhereToGoIsARelayError) {
  Bench b(LinkLayer::kInfiniBand, 2, ib_cfg());
  b.ib->set_mft(0xC003, ports({1}));  // only the ingress port
  b.host[0]->enqueue(0, make_ib(100, 0, 0, 0xC003));
  b.host[0]->enqueue(0, make_ib(100, 0, 0, 0xC004));  // no entry
  b.s.run_until_idle();
  EXPECT_TRUE(b.rec[1]->got.empty());
  EXPECT_EQ(b.sw.port(1).snapshot(0).port_rcv_switch_relay_errors, 2u);
  EXPECT_EQ(b.sw.port(1).snapshot(0).classes[0].rx_buffered_bytes, 0u);
  EXPECT_EQ(b.ib->counters().mcast_forwarded.get(), 0u);
}

// A copy holds no ingress buffer, so nothing would bound it on its queue:
// copies go only to a queue with room, the original (which holds the ingress
// buffer, and so the sender's credits) to the last port of the entry.
TEST(SwitchIb, MulticastCopiesGoOnlyToQueuesWithRoom) {
  // Port 2 drains at 1 Gb/s, port 3 at 100 Gb/s; both queues hold 2.
  Bench b(LinkLayer::kInfiniBand, 3, ib_cfg(0, 2), {},
          {{100 * G, 100, 4096}, {1 * G, 100, 4096}, {100 * G, 100, 4096}});
  b.ib->set_mft(0xC005, ports({2, 3}));
  for (uint32_t i = 0; i < 10; ++i) b.host[0]->enqueue(0, make_ib(1000, 0, 0, 0xC005, i));
  b.s.run_until_idle();
  EXPECT_EQ(b.rec[1]->tags(), (std::vector<uint32_t>{0, 1, 2}));  // one on the wire, two queued
  EXPECT_EQ(b.rec[2]->got.size(), 10u);
  EXPECT_EQ(b.ib->counters().mcast_no_room.get(), 7u);
  EXPECT_EQ(b.ib->counters().mcast_copies.get(), 13u);
  EXPECT_EQ(b.sw.port(2).snapshot(0).port_xmit_discards, 0u) << "skipped, not queued and dropped";
  EXPECT_EQ(b.sw.port(1).snapshot(0).classes[0].rx_buffered_bytes, 0u);
}

TEST(SwitchIb, TwoSendersShareAnEgressPort) {
  Bench b(LinkLayer::kInfiniBand, 3, ib_cfg());
  b.ib->set_lft(3, 3);
  for (uint32_t i = 0; i < 3; ++i) {
    b.host[0]->enqueue(0, make_ib(1000, 0, 0, 3, 10 + i));
    b.host[1]->enqueue(0, make_ib(1000, 0, 0, 3, 20 + i));
  }
  b.s.run_until_idle();
  ASSERT_EQ(b.rec[2]->got.size(), 6u);
  // Egress serializes them back to back: 80 ns apart from the first.
  for (size_t i = 1; i < 6; ++i) EXPECT_EQ(b.rec[2]->got[i].at - b.rec[2]->got[i - 1].at, 80u);
}

// ---------------------------------------------------------------- adaptive routing

// Hosts 0 and 3 send at 100 Gb/s to DLID 7, whose LFT port is 2 and AR
// group {2, 3}; ports 2 and 3 lead out at 10 Gb/s, so queues build behind them.
struct ArBench : Bench {
  explicit ArBench(AdaptiveMode mode, Nanos gap = 10'000)
      : Bench(LinkLayer::kInfiniBand, 4, cfg(mode, gap), {},
              {{100 * G, 100, 4096}, {10 * G, 100, 4096}, {10 * G, 100, 4096}, {100 * G, 100, 4096}}) {
    ib->set_lft(7, 2);
    const uint8_t group[] = {2, 3};
    ib->set_ar_group(7, group);
  }
  static SwitchConfig cfg(AdaptiveMode mode, Nanos gap) {
    SwitchConfig c = ib_cfg();
    c.adaptive = {mode, gap};
    return c;
  }
  void burst(uint32_t n, uint32_t first_tag = 0) {
    for (uint32_t i = 0; i < n; ++i) host[0]->enqueue(0, make_ib(1000, 0, 0, 7, first_tag + i));
  }
};

TEST(SwitchIbAdaptive, StaticRoutingSendsEveryPacketToTheLftPort) {
  ArBench b(AdaptiveMode::kOff);
  EXPECT_TRUE(b.ib->ar_group(7).empty()) << "a switch not in an adaptive mode keeps no AR groups";
  b.burst(8);
  b.s.run_until_idle();
  EXPECT_EQ(b.rec[1]->got.size(), 8u);
  EXPECT_TRUE(b.rec[2]->got.empty());
  EXPECT_EQ(b.ib->snapshot().ar_rerouted, 0u);
}

TEST(SwitchIbAdaptive, PerPacketSpreadsABurstOverTheGroupByQueueDepth) {
  ArBench b(AdaptiveMode::kPerPacket);
  ASSERT_EQ(b.ib->ar_group(7).size(), 2u);
  b.burst(8);
  b.s.run_until_idle();
  // Each arrival takes the shorter queue (the frame on the wire is not
  // queued), the LFT's port on a tie: the burst splits evenly.
  EXPECT_EQ(b.rec[1]->tags(), (std::vector<uint32_t>{0, 1, 4, 6}));
  EXPECT_EQ(b.rec[2]->tags(), (std::vector<uint32_t>{2, 3, 5, 7}));
  EXPECT_EQ(b.ib->snapshot().ar_rerouted, 4u);
  // Idle again: the next packet routes as a static fabric would.
  b.burst(1, 100);
  b.s.run_until_idle();
  EXPECT_EQ(b.rec[1]->got.back().tag, 100u);
}

TEST(SwitchIbAdaptive, APortWhoseLinkIsDownIsNeverChosen) {
  ArBench b(AdaptiveMode::kPerPacket);
  b.sw.port(2).set_link_up(false);
  b.burst(4);
  b.s.run_until_idle();
  EXPECT_TRUE(b.rec[1]->got.empty());
  EXPECT_EQ(b.rec[2]->got.size(), 4u) << "the group's live port carries what the dead LFT port cannot";
  EXPECT_EQ(b.sw.port(1).snapshot(0).port_rcv_switch_relay_errors, 0u);
}

TEST(SwitchIbAdaptive, AFlowletKeepsItsPortUntilItsGapExpires) {
  ArBench b(AdaptiveMode::kFlowlet, 2'000);
  b.burst(6);
  b.s.run_until_idle();
  EXPECT_EQ(b.rec[1]->got.size(), 6u) << "back-to-back packets of one flow are one flowlet: no reordering";
  EXPECT_EQ(b.ib->snapshot().ar_flowlets, 1u);
  // Host 3 (100 Gb/s in, another source LID: another flow) fills port 2.
  for (uint32_t i = 0; i < 12; ++i) {
    rte_mbuf* m = make_ib(1000, 0, 0, 7, 50 + i);
    wire::put16(rte_pktmbuf_mtod(m, uint8_t*) + 6, 9);  // SLID 9
    b.host[3]->enqueue(0, m);
  }
  b.s.advance_to(b.s.now() + 1'200);  // its burst is in, queued on port 2
  b.burst(1, 200);  // host 0's gap (> 2 us since its last packet) has expired
  b.s.run_until_idle();
  ASSERT_FALSE(b.rec[2]->got.empty());
  EXPECT_EQ(b.rec[2]->got.back().tag, 200u) << "a new flowlet takes the less loaded port";
  EXPECT_EQ(b.rec[1]->got.size(), 18u) << "host 3's flowlet stayed on port 2 although port 3 was idle";
  EXPECT_EQ(b.ib->snapshot().ar_flowlets, 3u);
}

TEST(SwitchIbAdaptive, AnArGroupNamesTheSwitchsOwnPortsOnly) {
  ArBench b(AdaptiveMode::kPerPacket);
  const uint8_t zero[] = {0, 2}, high[] = {2, 9};
  EXPECT_THROW(b.ib->set_ar_group(7, zero), std::invalid_argument);
  EXPECT_THROW(b.ib->set_ar_group(7, high), std::invalid_argument);
  EXPECT_THROW(b.ib->set_ar_group(0xC000, std::span<const uint8_t>(zero + 1, 1)), std::invalid_argument);
  EXPECT_EQ(b.ib->ar_group(7).size(), 2u) << "a refused group leaves the old one";
  b.ib->set_ar_group(7, {});
  EXPECT_TRUE(b.ib->ar_group(7).empty());
}

TEST(LeastLoaded, TheStaticChoiceWinsTiesAndUnusablePortsLoseToAnyOther) {
  const uint32_t tie[] = {3, 3, 3}, lower[] = {3, 1, 1}, none[] = {UINT32_MAX, UINT32_MAX, 5};
  EXPECT_EQ(least_loaded(tie, 3, 1), 1u);
  EXPECT_EQ(least_loaded(lower, 3, 0), 1u);
  EXPECT_EQ(least_loaded(lower, 3, 2), 2u) << "among equals, the static choice, then the ports after it";
  EXPECT_EQ(least_loaded(none, 3, 0), 2u);
}

// ---------------------------------------------------------------- Ethernet

const Mac kMacA{0x02, 0, 0, 0, 0, 0xA};
const Mac kMacB{0x02, 0, 0, 0, 0, 0xB};

SwitchConfig eth_cfg(Nanos latency = 0) {
  SwitchConfig c;
  c.nports = 4;
  c.latency_ns = latency;
  return c;
}

TEST(SwitchEth, ForwardsByMacAndKeepsThePriority) {
  Bench b(LinkLayer::kEthernet, 3, eth_cfg(300), {10 * G, 50, 1500});
  b.eth->add_fdb(kMacB, 2);
  PortVlans trunk;  // so the tag, and its PCP, leave the switch
  trunk.add_tagged(kDefaultVid);
  b.eth->set_vlans(2, trunk);
  b.host[0]->enqueue(5, make_eth(60, kMacB, 5, 1));
  b.host[0]->enqueue(0, make_eth(60, kMacB, -1, 2));
  b.s.run_until_idle();
  ASSERT_EQ(b.rec[1]->got.size(), 2u);
  EXPECT_EQ(b.rec[1]->got[0].cls, 5u);
  EXPECT_EQ(b.rec[1]->got[1].cls, 0u);  // untagged = priority 0
  // In: 67.2 + 50, delivered to the switch at the next whole ns (118); 300 ns
  // switching; out: 418 + 67.2 + 50 = 535.2 -> 536. Each hop rounds up once.
  EXPECT_EQ(b.rec[1]->got[0].at, 536u);
  EXPECT_EQ(b.sw.port(2).snapshot(0).classes[5].xmit_pkts, 1u);
}

TEST(SwitchEth, RuntsAreReceiveErrorsAndAFilteredDestinationARelayError) {
  Bench b(LinkLayer::kEthernet, 2, eth_cfg(), {10 * G, 50, 1500});
  b.eth->add_fdb(kMacA, 1);
  b.host[0]->enqueue(0, make_eth(60, kMacA, -1));  // its own port: filtered
  b.host[0]->enqueue(0, make_eth(10, kMacB, -1));  // runt
  b.s.run_until_idle();
  EXPECT_TRUE(b.rec[1]->got.empty());
  const PortSnapshot in = b.sw.port(1).snapshot(0);
  EXPECT_EQ(in.port_rcv_switch_relay_errors, 1u);
  EXPECT_EQ(in.port_rcv_errors, 1u);
  EXPECT_EQ(in.rx_drops, 2u);
}

}  // namespace
}  // namespace vf::dp
