// HcaPort: engine packets framed as IB or RoCEv2, carried through a switch and
// handed to the peer's receive callback with the metadata the engine needs;
// and the refusals — wrong destination, broken frames, no route.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/multicast.hpp"
#include "dataplane/fabric/ib_switch.hpp"
#include "dataplane/wire/ndp.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "dataplane/wire/lrh.hpp"
#include "dataplane/wire/ib_framing.hpp"
#include "dataplane/wire/opcode.hpp"
#include "dataplane/wire/transport.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

constexpr uint64_t G = 1'000'000'000ULL;

// What the engine would get.
struct Received {
  Nanos at;
  std::vector<uint8_t> bytes;  // BTH .. pad
  vf::wire::RxMeta meta;
};

struct RecordingReceiver {
  Scheduler* s;
  std::vector<Received> got;
  unsigned space_calls = 0;
  static void rx(void* ctx, rte_mbuf* m, const vf::wire::RxMeta& meta) {
    auto* e = static_cast<RecordingReceiver*>(ctx);
    const auto* p = rte_pktmbuf_mtod(m, const uint8_t*);
    e->got.push_back({e->s->now(), {p, p + rte_pktmbuf_data_len(m)}, meta});
    rte_pktmbuf_free(m);
  }
  static void space(void* ctx) { ++static_cast<RecordingReceiver*>(ctx)->space_calls; }
};

// A transport packet as the engine builds one: BTH (RC SEND only to `dqpn`) +
// payload padded to 4 bytes.
rte_mbuf* engine_packet(HcaPort& h, uint32_t dqpn, uint32_t payload, uint8_t fill) {
  rte_mbuf* m = h.alloc();
  const uint32_t pad = (4 - payload % 4) % 4;
  const uint32_t len = wire::kBthLen + payload + pad;
  if (!m || !rte_pktmbuf_append(m, uint16_t(len))) std::abort();
  uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
  std::memset(p, 0, len);
  wire::bth_set_opcode(p, wire::opcode(wire::Transport::kRC, wire::kSendOnly));
  wire::bth_set_padcnt(p, pad);
  wire::bth_set_pkey(p, 0xFFFF);
  wire::bth_set_dqpn(p, dqpn);
  wire::bth_set_psn(p, 77);
  std::memset(p + wire::kBthLen, fill, payload);
  return m;
}

vf::dp::Route ah_dlid(uint16_t dlid) {
  vf::dp::Route av{};
  av.dlid = dlid;
  return av;
}

std::vector<uint8_t> bytes_of(const rte_mbuf* m) {
  const auto* p = rte_pktmbuf_mtod(m, const uint8_t*);
  return {p, p + rte_pktmbuf_data_len(m)};
}

Gid ib_gid(uint8_t guid_low) {
  Gid g{0xfe, 0x80};
  g[15] = guid_low;
  return g;
}

Gid v4_gid(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}

// ---------------------------------------------------------------- InfiniBand

struct IbLab {
  IbLab() : f(s, "ib", LinkLayer::kInfiniBand, vf::test::test_mbuf_pool()) {
    f.add_switch("ibsw0", 8, 50);
    HcaPortConfig c;
    c.link_layer = LinkLayer::kInfiniBand;
    c.lid = 1;
    c.gids = {ib_gid(1)};
    h0 = &f.add_hca_port("vib0", c);
    c.lid = 2;
    c.gids = {ib_gid(2)};
    h1 = &f.add_hca_port("vib1", c);
    const LinkParams edr{100 * G, 100, 4096};
    f.connect(*Endpoint::parse("vib0"), *Endpoint::parse("ibsw0/1"), edr);
    f.connect(*Endpoint::parse("vib1"), *Endpoint::parse("ibsw0/2"), edr);
    f.set_lft("ibsw0", 1, 1);
    f.set_lft("ibsw0", 2, 2);
    e0.s = e1.s = &s;
    h0->set_receiver(&RecordingReceiver::rx, &e0);
    h1->set_receiver(&RecordingReceiver::rx, &e1);
    s.advance_to(kTrained);  // the links' credit initialisation is done
  }
  // Long enough for every IB link here to exchange its first flow-control
  // packets (nothing may be sent before them).
  static constexpr Nanos kTrained = 10'000;
  Scheduler s;
  Fabric f;
  HcaPort* h0;
  HcaPort* h1;
  RecordingReceiver e0, e1;
};

TEST(HcaPortIb, RoundTripThroughASwitch) {
  IbLab lab;
  rte_mbuf* m = engine_packet(*lab.h0, 0x123, 1021, 0xAB);
  const std::vector<uint8_t> sent = bytes_of(m);
  vf::dp::Route av{};
  av.dlid = 2;
  av.sl = 3;
  ASSERT_TRUE(lab.h0->can_transmit(Route{}));
  lab.h0->transmit(m, av);
  lab.s.run_until_idle();
  ASSERT_EQ(lab.e1.got.size(), 1u);
  const Received& r = lab.e1.got[0];
  EXPECT_EQ(r.bytes, sent);  // BTH .. pad, untouched
  EXPECT_EQ(r.meta.slid, 1);
  EXPECT_EQ(r.meta.dlid, 2);
  EXPECT_EQ(r.meta.sl, 3);
  EXPECT_FALSE(r.meta.has_grh);
  // Frame = LRH 8 + 1036 + ICRC 4 + VCRC 2 = 1050 bytes = 84 ns at 100 Gb/s;
  // two hops of 84 + 100 plus 50 ns switching.
  EXPECT_EQ(r.at - IbLab::kTrained, 2 * (84 + 100) + 50u);
  EXPECT_TRUE(lab.e0.got.empty());
  const PortSnapshot tx = lab.h0->port().snapshot(0);
  EXPECT_EQ(tx.port_xmit_pkts, 1u);
  EXPECT_EQ(tx.tx_bytes, 1050u);
  EXPECT_EQ(tx.classes[3].xmit_pkts, 1u);  // SL3 -> VL3
  EXPECT_EQ(lab.h1->port().snapshot(0).port_rcv_pkts, 1u);
  EXPECT_EQ(lab.f.find_switch("ibsw0")->port(2).snapshot(0).port_xmit_pkts, 1u);
}

TEST(HcaPortIb, GlobalRouteCarriesTheGrh) {
  IbLab lab;
  vf::dp::Route av{};
  av.dlid = 2;
  av.is_global = 1;
  av.sgid_index = 0;
  std::memcpy(av.dgid.data(), ib_gid(2).data(), 16);
  av.traffic_class = 0x28;
  av.hop_limit = 1;
  lab.h0->transmit(engine_packet(*lab.h0, 5, 8, 1), av);
  lab.s.run_until_idle();
  ASSERT_EQ(lab.e1.got.size(), 1u);
  const auto& meta = lab.e1.got[0].meta;
  EXPECT_TRUE(meta.has_grh);
  EXPECT_EQ(0, std::memcmp(meta.sgid, ib_gid(1).data(), 16));
  EXPECT_EQ(0, std::memcmp(meta.dgid, ib_gid(2).data(), 16));
  EXPECT_EQ(meta.traffic_class, 0x28);
}

TEST(HcaPortIb, LmcPathBitsSelectTheSourceLid) {
  IbLab lab;
  lab.h0->set_lid(4, 2);  // answers 4..7
  lab.f.set_lft("ibsw0", 6, 1);
  vf::dp::Route av{};
  av.dlid = 6;  // vib1 -> vib0's third LID
  av.src_path_bits = 1;
  lab.h1->transmit(engine_packet(*lab.h1, 5, 8, 1), av);
  lab.s.run_until_idle();
  ASSERT_EQ(lab.e0.got.size(), 1u);
  EXPECT_EQ(lab.e0.got[0].meta.dlid, 6);
  EXPECT_EQ(lab.e0.got[0].meta.slid, 2);  // vib1 has LMC 0: path bits ignored
}

TEST(HcaPortIb, FramesForAnotherLidAreDroppedAndCounted) {
  IbLab lab;
  lab.f.set_lft("ibsw0", 9, 2);  // a stale route: LID 9 leads to vib1
  vf::dp::Route av{};
  av.dlid = 9;
  lab.h0->transmit(engine_packet(*lab.h0, 5, 8, 1), av);
  lab.s.run_until_idle();
  EXPECT_TRUE(lab.e1.got.empty());
  const HcaPortSnapshot s = lab.h1->snapshot(0);
  EXPECT_EQ(s.rx_not_for_us, 1u);
  EXPECT_EQ(s.port.port_rcv_errors, 1u);
}

TEST(HcaPortIb, CorruptFramesAreCountedByReason) {
  IbLab lab;
  // Hand vib1 a frame with a broken VCRC straight from its link's far side.
  rte_mbuf* m = engine_packet(*lab.h0, 5, 8, 1);
  wire::IbRoute r;
  r.slid = 1;
  r.dlid = 2;
  ASSERT_TRUE(wire::ib_encapsulate(m, r));
  rte_pktmbuf_mtod(m, uint8_t*)[rte_pktmbuf_data_len(m) - 1] ^= 1;
  lab.f.find_switch("ibsw0")->port(2).enqueue(0, m);
  lab.s.run_until_idle();
  EXPECT_TRUE(lab.e1.got.empty());
  const HcaPortSnapshot s = lab.h1->snapshot(0);
  EXPECT_EQ(s.rx_errors[unsigned(wire::RxError::kBadVcrc)], 1u);
  EXPECT_EQ(s.port.port_rcv_errors, 1u);
}

TEST(HcaPortIb, UnusableRoutesAreDroppedAtTheSource) {
  IbLab lab;
  vf::dp::Route av{};
  av.dlid = 2;
  av.is_global = 1;
  av.sgid_index = 3;  // no such GID
  lab.h0->transmit(engine_packet(*lab.h0, 5, 8, 1), av);
  lab.h0->set_sl2vl(7, kVl15);
  vf::dp::Route av7{};
  av7.dlid = 2;
  av7.sl = 7;
  lab.h0->transmit(engine_packet(*lab.h0, 5, 8, 1), av7);
  // Not a whole number of words: the framing refuses it.
  rte_mbuf* odd = engine_packet(*lab.h0, 5, 8, 1);
  rte_pktmbuf_append(odd, 1);
  lab.h0->transmit(odd, ah_dlid(2));
  lab.s.run_until_idle();
  EXPECT_TRUE(lab.e1.got.empty());
  const HcaPortSnapshot s = lab.h0->snapshot(0);
  EXPECT_EQ(s.tx_no_route, 2u);
  EXPECT_EQ(s.tx_frame_errors, 1u);
  EXPECT_EQ(s.port.port_xmit_discards, 3u);
}

TEST(HcaPortIb, CanTransmitBoundsTheQueueAndAnnouncesSpaceLater) {
  Scheduler s;
  Fabric f(s, "ib", LinkLayer::kInfiniBand, vf::test::test_mbuf_pool());
  HcaPortConfig c;
  c.lid = 1;
  c.port.queue_pkts = 4;
  HcaPort& h = f.add_hca_port("vib0", c);
  f.add_switch("sw", 2, 0);
  f.connect(*Endpoint::parse("vib0"), *Endpoint::parse("sw/1"), LinkParams{1 * G, 0, 4096});
  s.advance_to(IbLab::kTrained);  // credit initialisation: the switch's FCP arrives
  RecordingReceiver e{&s, {}, 0};
  h.set_tx_space(&RecordingReceiver::space, &e);
  unsigned sent = 0;
  while (h.can_transmit(Route{})) {
    h.transmit(engine_packet(h, 1, 1000, 0), ah_dlid(2));
    ++sent;
  }
  EXPECT_EQ(sent, 5u);  // one on the wire, four queued
  EXPECT_EQ(e.space_calls, 0u);
  s.run_next();  // the first frame leaves the wire: room, announced by timer
  EXPECT_TRUE(h.can_transmit(Route{}));
  s.run_until_idle();
  EXPECT_EQ(e.space_calls, 1u);
  EXPECT_EQ(h.port().snapshot(0).port_xmit_discards, 0u);
}

// An HCA port's VL record is the same type a switch port has, starts from
// the same defaults, and its SL→VL entry picks the egress class.
TEST(HcaPortIb, VlRecordStartsFromDataVlsAndPicksTheClass) {
  HcaPortConfig c;
  c.qos.data_vls = 2;
  c.qos.sl2vl.fill(1);  // not the defaults: the port starts from data_vls alone
  Scheduler s;
  HcaPort h(s, "vib0", vf::test::test_mbuf_pool(), c);
  EXPECT_EQ(h.info().qos, default_port_qos(2));
  EXPECT_EQ(h.tx_class(Route{.sl = 3}), 1u);  // SL 3 -> VL 3 % 2
  h.set_sl2vl(3, 0);
  EXPECT_EQ(h.info().qos.sl2vl[3], 0);
  EXPECT_EQ(h.tx_class(Route{.sl = 3}), 0u);
  EXPECT_THROW(h.set_sl2vl(3, 2), std::invalid_argument);  // VL 2 is not operational
  EXPECT_EQ(h.info().qos.sl2vl[3], 0);
  c.qos.data_vls = 9;
  EXPECT_THROW(HcaPort(s, "vib1", vf::test::test_mbuf_pool(), c), std::invalid_argument);
}

// ---------------------------------------------------------------- RoCEv2

// A multicast datagram (an MLID, a GRH to the MGID): the switch copies it to
// the other members' ports by its MFT, and the sending port loops a copy
// back to its own members when the engine asks (mlx5), never via the switch.
TEST(HcaPortIb, MulticastLoopsBackOnlyWhenAskedAndTheSwitchReplicates) {
  IbLab lab;
  IbSwitch::PortMask both;
  both.set(1).set(2);
  static_cast<IbSwitch*>(lab.f.find_switch("ibsw0"))->set_mft(0xC012, both);
  vf::dp::Route av{};
  av.dlid = 0xC012;
  av.is_global = 1;
  av.dgid = Gid{0xFF, 0x12, 0x40, 0x1B, 0xFF, 0xFF};
  av.dgid[15] = 1;
  lab.h0->transmit(engine_packet(*lab.h0, 0xFFFFFF, 8, 1), av);
  lab.s.run_until_idle();
  EXPECT_EQ(lab.e1.got.size(), 1u) << "the switch's copy to the other member";
  EXPECT_TRUE(lab.e0.got.empty()) << "never back out of the ingress port, no loopback unasked";
  av.mcast_loopback = true;
  lab.h0->transmit(engine_packet(*lab.h0, 0xFFFFFF, 8, 2), av);
  lab.s.run_until_idle();
  ASSERT_EQ(lab.e0.got.size(), 1u) << "the loopback copy";
  EXPECT_EQ(lab.e1.got.size(), 2u);
  EXPECT_EQ(lab.e0.got[0].bytes, lab.e1.got[1].bytes);
  EXPECT_EQ(lab.e0.got[0].meta.dlid, 0xC012);
  EXPECT_EQ(0, std::memcmp(lab.e0.got[0].meta.dgid, av.dgid.data(), 16));
  EXPECT_EQ(lab.h0->snapshot(lab.s.now()).loopback_pkts, 1u);
}

const Mac kMac0{0x02, 0, 0, 0, 0, 0x10};
const Mac kMac1{0x02, 0, 0, 0, 0, 0x11};

struct RoceLab {
  // `wired`: static FDB entries and permanent neighbours, as a lab that does
  // not want resolution traffic sets them; otherwise the hosts ARP / solicit
  // and the switch learns.
  explicit RoceLab(bool vlan, Gid g0 = v4_gid(198, 18, 0, 1), Gid g1 = v4_gid(198, 18, 0, 2), bool wired = true)
      : f(s, "roce", LinkLayer::kEthernet, vf::test::test_mbuf_pool()), gid0(g0), gid1(g1) {
    f.add_switch("ethsw0", 8, 300);
    HcaPortConfig c;
    c.link_layer = LinkLayer::kEthernet;
    c.vlan = vlan;
    c.vlan_id = 10;
    c.gids = {Gid{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, gid0};
    c.mac = kMac0;
    h0 = &f.add_hca_port("vroce0", c);
    c.gids[1] = gid1;
    c.mac = kMac1;
    h1 = &f.add_hca_port("vroce1", c);
    const LinkParams p{100 * G, 100, 1500};
    f.connect(*Endpoint::parse("vroce0"), *Endpoint::parse("ethsw0/1"), p);
    f.connect(*Endpoint::parse("vroce1"), *Endpoint::parse("ethsw0/2"), p);
    const uint16_t vid = vlan ? c.vlan_id : kDefaultVid;
    if (vlan) {
      PortVlans v;  // both switch ports carry the hosts' VLAN tagged
      v.add_tagged(vid);
      f.eth_switch("ethsw0").set_vlans(1, v);
      f.eth_switch("ethsw0").set_vlans(2, v);
    }
    if (wired) {
      f.add_fdb("ethsw0", kMac0, 1, vid);
      f.add_fdb("ethsw0", kMac1, 2, vid);
      f.set_neighbour("vroce0", gid1, kMac1);
      f.set_neighbour("vroce1", gid0, kMac0);
    }
    e0.s = e1.s = &s;
    h0->set_receiver(&RecordingReceiver::rx, &e0);
    h1->set_receiver(&RecordingReceiver::rx, &e1);
  }
  vf::dp::Route ah_to_1(uint8_t sl = 0, uint8_t tclass = 0) const {
    vf::dp::Route av{};
    av.is_global = 1;
    av.sl = sl;
    av.sgid_index = 1;
    av.hop_limit = 64;
    av.traffic_class = tclass;
    std::memcpy(av.dgid.data(), gid1.data(), 16);
    return av;
  }
  Scheduler s;
  Fabric f;
  Gid gid0, gid1;
  HcaPort* h0;
  HcaPort* h1;
  RecordingReceiver e0, e1;
};

TEST(HcaPortRoce, Ipv4RoundTripThroughASwitch) {
  RoceLab lab(false);
  rte_mbuf* m = engine_packet(*lab.h0, 0x42, 1024, 0x5A);
  const std::vector<uint8_t> sent = bytes_of(m);
  lab.h0->transmit(m, lab.ah_to_1(0, 0x6A));  // DSCP 26, ECT(0)
  lab.s.run_until_idle();
  ASSERT_EQ(lab.e1.got.size(), 1u);
  const Received& r = lab.e1.got[0];
  EXPECT_EQ(r.bytes, sent);
  EXPECT_TRUE(r.meta.has_grh);
  EXPECT_EQ(0, std::memcmp(r.meta.sgid, lab.gid0.data(), 16));
  EXPECT_EQ(0, std::memcmp(r.meta.dgid, lab.gid1.data(), 16));
  EXPECT_EQ(r.meta.traffic_class, 0x6A);
  // 14 + 20 + 8 + 1036 + 4 = 1082 bytes in the mbuf, 1082+24 = 1106 on the wire:
  // 88.48 ns per hop at 100 Gb/s. In: 188.48 -> the switch has it at 189;
  // 300 ns switching; out: 489 + 88.48 + 100 = 677.48 -> 678.
  EXPECT_EQ(lab.h0->port().snapshot(0).tx_bytes, 1082u);
  EXPECT_EQ(r.at, 678u);
}

// A RoCE datagram to a group goes to the group's MAC at once -- no ARP, no
// gateway -- and the bridge floods it; IPv4 and IPv6 groups map as RFC 1112
// and RFC 2464 say.
TEST(HcaPortRoce, MulticastGoesToTheGroupMacWithoutResolution) {
  RoceLab lab(false, v4_gid(198, 18, 0, 1), v4_gid(198, 18, 0, 2), /*wired=*/false);
  vf::dp::Route av = lab.ah_to_1();
  av.dgid = v4_gid(239, 129, 2, 3);
  av.mcast_loopback = true;
  lab.h0->transmit(engine_packet(*lab.h0, 0xFFFFFF, 8, 1), av);
  lab.s.run_until_idle();
  ASSERT_EQ(lab.e1.got.size(), 1u) << "flooded to the other station, which takes group MACs";
  EXPECT_EQ(0, std::memcmp(lab.e1.got[0].meta.dgid, av.dgid.data(), 16));
  EXPECT_EQ(lab.e0.got.size(), 1u) << "and looped back to the sender's own members";
  const HcaPortSnapshot snap = lab.h0->snapshot(lab.s.now());
  EXPECT_EQ(snap.neigh_solicits_sent, 0u) << "a group needs no ARP";
  EXPECT_EQ(snap.tx_no_route, 0u);

  uint8_t mac[6];
  multicast_mac(v4_gid(239, 129, 2, 3).data(), mac);
  EXPECT_EQ(Mac(std::to_array(mac)), (Mac{0x01, 0x00, 0x5E, 0x01, 0x02, 0x03})) << "the low 23 bits";
  const Gid v6{0xFF, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xFF, 0x00, 0x00, 0x02};
  multicast_mac(v6.data(), mac);
  EXPECT_EQ(Mac(std::to_array(mac)), (Mac{0x33, 0x33, 0xFF, 0x00, 0x00, 0x02})) << "the low 32 bits";
  EXPECT_TRUE(is_multicast_gid(v6.data()));
  EXPECT_TRUE(is_multicast_gid(v4_gid(224, 0, 0, 1).data()));
  EXPECT_FALSE(is_multicast_gid(v4_gid(240, 0, 0, 1).data()));
  EXPECT_FALSE(is_multicast_gid(ib_gid(1).data()));
}

TEST(HcaPortRoce, Ipv6AndVlanPriority) {
  Gid a{0x20, 0x01, 0x0d, 0xb8};
  a[15] = 1;
  Gid b = a;
  b[15] = 2;
  RoceLab lab(true, a, b);
  lab.h0->transmit(engine_packet(*lab.h0, 0x42, 64, 1), lab.ah_to_1(5));
  lab.s.run_until_idle();
  ASSERT_EQ(lab.e1.got.size(), 1u);
  // A completion's sl is mlx5's packet type (UDP + IPv6), not the PCP, which
  // travels in the tag: the priority-5 classes count the frame below.
  EXPECT_EQ(lab.e1.got[0].meta.sl, 0x9);
  EXPECT_EQ(0, std::memcmp(lab.e1.got[0].meta.dgid, b.data(), 16));
  EXPECT_EQ(lab.h0->port().snapshot(0).classes[5].xmit_pkts, 1u);
  EXPECT_EQ(lab.f.find_switch("ethsw0")->port(2).snapshot(0).classes[5].xmit_pkts, 1u);
}

TEST(HcaPortRoce, NoGrhOrABadSgidIndexIsNoRoute) {
  RoceLab lab(false);
  vf::dp::Route local{};
  lab.h0->transmit(engine_packet(*lab.h0, 1, 8, 1), local);
  vf::dp::Route av = lab.ah_to_1();
  av.sgid_index = 7;
  lab.h0->transmit(engine_packet(*lab.h0, 1, 8, 1), av);
  lab.s.run_until_idle();
  EXPECT_EQ(lab.h0->snapshot(0).tx_no_route, 2u);
  EXPECT_TRUE(lab.e1.got.empty());
}

// ---------------------------------------------------------------- ARP / ND

constexpr Nanos kSecond = 1'000'000'000ULL;

TEST(HcaPortNeighbours, ArpResolvesOnTheWireAndTheParkedPacketFollows) {
  RoceLab lab(false, v4_gid(198, 18, 0, 1), v4_gid(198, 18, 0, 2), false);
  lab.h0->transmit(engine_packet(*lab.h0, 0x42, 64, 1), lab.ah_to_1());
  lab.h0->transmit(engine_packet(*lab.h0, 0x42, 64, 2), lab.ah_to_1());
  lab.s.run_until_idle();
  ASSERT_EQ(lab.e1.got.size(), 2u);  // both, in order
  EXPECT_EQ(lab.e1.got[0].bytes[wire::kBthLen], 1);
  EXPECT_EQ(lab.e1.got[1].bytes[wire::kBthLen], 2);
  const HcaPortSnapshot a = lab.h0->snapshot(0), b = lab.h1->snapshot(0);
  EXPECT_EQ(a.neigh_solicits_sent, 1u);  // one request for two packets
  EXPECT_EQ(b.neigh_replies_sent, 1u);
  EXPECT_EQ(a.neigh_resolved, 1u);
  EXPECT_EQ(b.neigh_resolved, 1u);  // the request taught vroce1 where vroce0 is
  // The answer came back through the bridge, which learned both stations.
  EXPECT_EQ(lab.f.eth_switch("ethsw0").fdb().port_of(kDefaultVid, kMac0, lab.s.now()), 1u);
  EXPECT_EQ(lab.f.eth_switch("ethsw0").fdb().port_of(kDefaultVid, kMac1, lab.s.now()), 2u);
  // vroce1 answers without asking: it learned vroce0 from the request.
  vf::dp::Route back = lab.ah_to_1();
  back.dgid = lab.gid0;
  lab.h1->transmit(engine_packet(*lab.h1, 0x43, 64, 3), back);
  lab.s.run_until_idle();
  EXPECT_EQ(lab.e0.got.size(), 1u);
  EXPECT_EQ(lab.h1->snapshot(0).neigh_solicits_sent, 0u);
}

TEST(HcaPortNeighbours, NeighbourDiscoveryResolvesGlobalIpv6AndLinkLocalNeedsNone) {
  Gid a{0x20, 0x01, 0x0d, 0xb8};
  a[15] = 1;
  Gid b = a;
  b[15] = 2;
  RoceLab lab(true, a, b, false);  // tagged in VLAN 10: the solicitation is tagged too
  lab.h0->transmit(engine_packet(*lab.h0, 0x42, 64, 1), lab.ah_to_1(3));
  lab.s.run_until_idle();
  ASSERT_EQ(lab.e1.got.size(), 1u);
  EXPECT_EQ(lab.h0->snapshot(0).neigh_solicits_sent, 1u);
  EXPECT_EQ(lab.h1->snapshot(0).neigh_replies_sent, 1u);
  EXPECT_EQ(lab.f.eth_switch("ethsw0").fdb().port_of(10, kMac1, lab.s.now()), 2u);
  // fe80::/64 with an EUI-64 identifier: the MAC is in the address.
  RoceLab ll(false, v4_gid(198, 18, 0, 1), v4_gid(198, 18, 0, 2), false);
  ll.h0->set_gid(0, Gid{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0, 0, 0xff, 0xfe, 0, 0, 0x10});
  ll.h1->set_gid(0, Gid{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0, 0, 0xff, 0xfe, 0, 0, 0x11});
  vf::dp::Route av = ll.ah_to_1();
  av.sgid_index = 0;
  av.dgid = ll.h1->config().gids[0];
  ll.h0->transmit(engine_packet(*ll.h0, 0x42, 64, 1), av);
  ll.s.run_until_idle();
  EXPECT_EQ(ll.e1.got.size(), 1u);
  EXPECT_EQ(ll.h0->snapshot(0).neigh_solicits_sent, 0u);
  // Its own link-local GID resolves to its own MAC: looped back, not sent.
  av.dgid = ll.h0->config().gids[0];
  ll.h0->transmit(engine_packet(*ll.h0, 0x42, 64, 2), av);
  ll.s.run_until_idle();
  EXPECT_EQ(ll.h0->snapshot(0).loopback_pkts, 1u);
  EXPECT_EQ(ll.e0.got.size(), 1u);
}

TEST(HcaPortNeighbours, AnAbsentNeighbourIsAskedThreeTimesASecondApartThenGivenUp) {
  RoceLab lab(false, v4_gid(198, 18, 0, 1), v4_gid(198, 18, 0, 2), false);
  vf::dp::Route av = lab.ah_to_1();
  av.dgid[15] = 99;  // nobody has 198.18.0.99
  for (int i = 0; i < 3; ++i) lab.h0->transmit(engine_packet(*lab.h0, 1, 8, 1), av);
  lab.s.advance_to(2 * kSecond + 1);
  EXPECT_EQ(lab.h0->snapshot(0).neigh_solicits_sent, 3u);  // at 0, 1 s and 2 s
  EXPECT_EQ(lab.h0->snapshot(0).neigh_unresolved_discards, 0u);
  lab.s.advance_to(3 * kSecond);
  HcaPortSnapshot s = lab.h0->snapshot(0);
  EXPECT_EQ(s.neigh_failed, 1u);
  EXPECT_EQ(s.neigh_unresolved_discards, 3u);
  EXPECT_EQ(lab.h1->snapshot(0).neigh_replies_sent, 0u);  // it saw the broadcasts, they were not for it
  EXPECT_TRUE(lab.s.idle());  // nothing keeps probing
  // The next packet starts over.
  lab.h0->transmit(engine_packet(*lab.h0, 1, 8, 1), av);
  lab.s.advance_to(lab.s.now() + 1);
  EXPECT_EQ(lab.h0->snapshot(0).neigh_solicits_sent, 4u);
}

// Setting an address vector (modify_qp to RTR, create_ah) resolves the next
// hop first, as the kernel does: the answer, or ETIMEDOUT after its second.
TEST(HcaPortNeighbours, ResolvingAnAddressVectorWaitsForTheAnswerOrASecond) {
  RoceLab lab(false, v4_gid(198, 18, 0, 1), v4_gid(198, 18, 0, 2), false);
  std::vector<std::pair<int, Nanos>> got;
  auto record = [&](int err) { got.emplace_back(err, lab.s.now()); };
  lab.h0->resolve(lab.ah_to_1(), record);
  EXPECT_TRUE(got.empty()) << "not known yet: it asks";
  lab.s.run_until_idle();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 0);
  EXPECT_LT(got[0].second, 100'000u) << "answered in one round trip";
  // Known now: at once, and no second request.
  lab.h0->resolve(lab.ah_to_1(), record);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].first, 0);
  EXPECT_EQ(lab.h0->snapshot(0).neigh_solicits_sent, 1u);
  // Nobody has 198.18.0.99: ETIMEDOUT a second later, while the cache
  // goes on asking as for a parked packet.
  vf::dp::Route nobody = lab.ah_to_1();
  nobody.dgid[15] = 99;
  const Nanos asked = lab.s.now();
  lab.h0->resolve(nobody, record);
  lab.s.advance_to(asked + kSecond - 1);
  EXPECT_EQ(got.size(), 2u);
  lab.s.advance_to(asked + kSecond);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].first, ETIMEDOUT);
  EXPECT_EQ(got[2].second, asked + kSecond);
  // A group address needs nobody: at once.
  vf::dp::Route group = lab.ah_to_1();
  group.dgid = v4_gid(239, 1, 2, 3);
  lab.h0->resolve(group, record);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[3].first, 0);
}

TEST(HcaPortNeighbours, AtMost101PacketsWaitForOneNeighbour) {
  RoceLab lab(false, v4_gid(198, 18, 0, 1), v4_gid(198, 18, 0, 2), false);
  lab.h1->port().set_link_up(false);  // vroce1 cannot answer yet
  for (int i = 0; i < 150; ++i) lab.h0->transmit(engine_packet(*lab.h0, 1, 8, uint8_t(i)), lab.ah_to_1());
  EXPECT_EQ(lab.h0->snapshot(0).neigh_unresolved_discards, 49u);
  lab.h1->port().set_link_up(true);
  lab.s.advance_to(kSecond);  // the second request is answered
  lab.s.run_until_idle();
  ASSERT_EQ(lab.e1.got.size(), 101u);
  EXPECT_EQ(lab.e1.got[0].bytes[wire::kBthLen], 49);  // the oldest went first
}

TEST(HcaPortNeighbours, HostileArpAndIcmpv6FramesAreCountedAndChangeNothing) {
  RoceLab lab(false, v4_gid(198, 18, 0, 1), v4_gid(198, 18, 0, 2), false);
  auto inject = [&](std::vector<uint8_t> bytes) {
    rte_mbuf* m = lab.h0->alloc();
    std::memcpy(rte_pktmbuf_append(m, uint16_t(bytes.size())), bytes.data(), bytes.size());
    const FrameSink sink = lab.h1->port().rx_sink();
    sink.fn(sink.ctx, m);
  };
  std::vector<uint8_t> arp(60, 0);
  std::memset(arp.data(), 0xFF, 6);
  arp[12] = 0x08;
  arp[13] = 0x06;
  inject(arp);  // all-zero ARP body: hardware type 0
  std::vector<uint8_t> icmp(14 + 40 + 8, 0);
  std::memset(icmp.data(), 0xFF, 6);
  icmp[12] = 0x86;
  icmp[13] = 0xDD;
  icmp[14] = 0x60;
  icmp[14 + 6] = 58;
  inject(icmp);  // ICMPv6 with no valid ND in it
  lab.s.run_until_idle();
  const HcaPortSnapshot s = lab.h1->snapshot(0);
  EXPECT_EQ(s.neigh_rx_invalid, 2u);
  EXPECT_EQ(s.neigh_replies_sent, 0u);
  EXPECT_EQ(s.port.port_rcv_errors, 0u);  // neighbour traffic, not RoCE errors
}

TEST(HcaPortRoce, FramesForAnotherMacAreDropped) {
  RoceLab lab(false);
  lab.f.set_neighbour("vroce0", lab.gid1, Mac{0x02, 0, 0, 0, 0, 0x99});
  lab.f.add_fdb("ethsw0", Mac{0x02, 0, 0, 0, 0, 0x99}, 2);
  lab.h0->transmit(engine_packet(*lab.h0, 1, 8, 1), lab.ah_to_1());
  lab.s.run_until_idle();
  EXPECT_TRUE(lab.e1.got.empty());
  EXPECT_EQ(lab.h1->snapshot(0).rx_not_for_us, 1u);
  EXPECT_EQ(lab.h1->snapshot(0).port.port_rcv_errors, 0u) << "a NIC's MAC filter, not an error";
}

TEST(HcaPortRoce, UdpSourcePortCarriesFlowEntropy) {
  RoceLab lab(false);
  // Capture what vroce1 receives before decapsulation by looking at the wire:
  // two different destination QPs must give different UDP source ports.
  std::vector<uint16_t> sports;
  lab.f.find_switch("ethsw0")->port(2).set_ingress(IngressHooks{});  // unchanged
  struct Tap {
    std::vector<uint16_t>* out;
  } tap{&sports};
  Port& p1 = lab.h1->port();
  p1.set_ingress(IngressHooks{&tap,
                              [](void* c, Port&, rte_mbuf* m) {
                                const auto* f = rte_pktmbuf_mtod(m, const uint8_t*);
                                static_cast<Tap*>(c)->out->push_back(wire::get16(f + 14 + 20));
                                return false;  // not consumed: delivery continues
                              },
                              nullptr, nullptr});
  lab.h0->transmit(engine_packet(*lab.h0, 0x11, 8, 1), lab.ah_to_1());
  lab.h0->transmit(engine_packet(*lab.h0, 0x12, 8, 1), lab.ah_to_1());
  lab.s.run_until_idle();
  ASSERT_EQ(sports.size(), 2u);
  EXPECT_NE(sports[0], sports[1]);
  EXPECT_GE(sports[0], 0xC000);
  EXPECT_EQ(lab.e1.got.size(), 2u);
}

TEST(HcaPortNeighbours, AFullCacheForgetsFailedEntriesToMakeRoom) {
  RoceLab lab(false, v4_gid(198, 18, 0, 1), v4_gid(198, 18, 0, 2), false);
  vf::dp::Route av = lab.ah_to_1();
  auto to = [&](unsigned i) {
    av.dgid = v4_gid(10, 0, uint8_t(i >> 8), uint8_t(i));  // nobody has these
    lab.h0->transmit(engine_packet(*lab.h0, 1, 8, 1), av);
  };
  for (unsigned i = 0; i < Neighbours::kMaxEntries; ++i) to(i);
  EXPECT_EQ(lab.h0->snapshot(0).neigh_solicits_sent, Neighbours::kMaxEntries);
  to(5000);  // every entry is waiting with a packet: no room
  EXPECT_EQ(lab.h0->snapshot(0).neigh_solicits_sent, Neighbours::kMaxEntries);
  EXPECT_EQ(lab.h0->snapshot(0).neigh_unresolved_discards, 1u);
  lab.s.advance_to(lab.s.now() + 4 * kSecond);  // all of them failed
  EXPECT_EQ(lab.h0->snapshot(0).neigh_failed, Neighbours::kMaxEntries);
  const uint64_t before = lab.h0->snapshot(0).neigh_solicits_sent;
  to(5001);  // a failed entry makes room
  EXPECT_EQ(lab.h0->snapshot(0).neigh_solicits_sent, before + 1);
}

TEST(HcaPortNeighbours, AnAdvertisementWithoutOverrideDoesNotReplaceAKnownMac) {
  Gid a{0x20, 0x01, 0x0d, 0xb8};
  a[15] = 1;
  Gid b = a;
  b[15] = 2;
  RoceLab lab(false, a, b, false);
  lab.h0->transmit(engine_packet(*lab.h0, 0x42, 64, 1), lab.ah_to_1());
  lab.s.run_until_idle();
  ASSERT_EQ(lab.e1.got.size(), 1u);  // resolved: b is at kMac1
  auto advertise = [&](uint32_t flags) {
    wire::NdMsg na;
    na.type = wire::kNdAdvert;
    std::memcpy(na.src.data(), b.data(), 16);
    std::memcpy(na.target.data(), b.data(), 16);
    std::memcpy(na.dst.data(), a.data(), 16);
    na.flags = flags;
    na.has_lla = true;
    na.lla = {0x02, 0, 0, 0, 0, 0x66};
    std::vector<uint8_t> f(14 + wire::kNdLen);
    std::memcpy(f.data(), kMac0.data(), 6);
    std::memcpy(f.data() + 6, kMac1.data(), 6);
    wire::put16(f.data() + 12, wire::kEtherTypeIpv6);
    wire::nd_put(f.data() + 14, na);
    rte_mbuf* m = lab.h1->alloc();
    std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
    const FrameSink sink = lab.h0->port().rx_sink();
    sink.fn(sink.ctx, m);
  };
  advertise(wire::kNdSolicited);  // O clear: the known MAC stays
  lab.h0->transmit(engine_packet(*lab.h0, 0x42, 64, 2), lab.ah_to_1());
  lab.s.run_until_idle();
  EXPECT_EQ(lab.e1.got.size(), 2u) << "still sent to kMac1";
  advertise(wire::kNdOverride);  // O set: replaced
  lab.h0->transmit(engine_packet(*lab.h0, 0x42, 64, 3), lab.ah_to_1());
  lab.s.run_until_idle();
  EXPECT_EQ(lab.e1.got.size(), 2u) << "now addressed to 02:..:66, which nobody has";
}

}  // namespace
}  // namespace vf::dp
