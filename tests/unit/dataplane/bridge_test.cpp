// The Ethernet switch as an 802.1Q learning bridge, in virtual time: learning,
// flooding, ageing, station moves, VLAN ingress filtering and egress tagging,
// FDB flush on link down, the table bound, and receive-buffer accounting of
// frames whose tag changed on the way.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "dataplane/fabric/eth_switch.hpp"
#include "dataplane/wire/bytes.hpp"
#include "dataplane/wire/eth.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

constexpr uint64_t G = 1'000'000'000ULL;
constexpr Nanos kSecond = 1'000'000'000ULL;

Mac mac(uint8_t last) { return Mac{0x02, 0, 0, 0, 0, last}; }
const Mac kBroadcast{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

// dst, src, [802.1Q tag], EtherType 0x88B5 (local experimental), zero payload.
rte_mbuf* frame(const Mac& dst, const Mac& src, std::optional<uint16_t> vid = {}, uint8_t pcp = 0,
                uint32_t len = 64) {
  rte_mbuf* m = test::make_frame(len);
  auto* p = rte_pktmbuf_mtod(m, uint8_t*);
  std::memcpy(p, dst.data(), 6);
  std::memcpy(p + 6, src.data(), 6);
  if (vid) {
    wire::put16(p + 12, wire::kEtherTypeVlan);
    wire::put16(p + 14, uint16_t(pcp << 13 | *vid));
    wire::put16(p + 16, 0x88B5);
  } else {
    wire::put16(p + 12, 0x88B5);
  }
  return m;
}

struct Seen {
  Mac src;
  int vid;  // -1: untagged
  uint8_t pcp;
  uint32_t len;
};

struct Host {
  explicit Host(Scheduler& s, std::string name) : port(s, std::move(name), LinkLayer::kEthernet) {
    port.set_owner(this, &Host::on_rx);
  }
  static void on_rx(void* self, Port& p, rte_mbuf* m, unsigned cls) {
    const auto* f = rte_pktmbuf_mtod(m, const uint8_t*);
    Seen s{};
    std::memcpy(s.src.data(), f + 6, 6);
    const bool tagged = wire::eth_type(f) == wire::kEtherTypeVlan;
    s.vid = tagged ? wire::vlan_vid(f + 12) : -1;
    s.pcp = tagged ? wire::vlan_pcp(f + 12) : 0;
    s.len = rte_pktmbuf_pkt_len(m);
    static_cast<Host*>(self)->got.push_back(s);
    rte_pktmbuf_free(m);
    p.release(cls, s.len);
  }
  Port port;
  std::vector<Seen> got;
};

// A bridge with a host on each of its first `hosts` ports (host i on port i+1).
struct Bridge {
  explicit Bridge(unsigned hosts, unsigned nports = 4) : sw(s, "sw", cfg(nports)) {
    for (unsigned i = 0; i < hosts; ++i) {
      host.push_back(std::make_unique<Host>(s, "h" + std::to_string(i)));
      link.push_back(std::make_unique<Link>(s, LinkLayer::kEthernet, LinkParams{10 * G, 50, 1500}));
      connect_ports(host.back()->port, sw.port(i + 1), *link.back());
    }
  }
  static SwitchConfig cfg(unsigned nports) {
    SwitchConfig c;
    c.nports = nports;
    return c;
  }
  void send(unsigned from, rte_mbuf* m) {
    host[from]->port.enqueue(0, m);
    s.run_until_idle();
  }
  size_t got(unsigned h) const { return host[h]->got.size(); }
  uint64_t relay_errors(unsigned port) const { return sw.port(port).snapshot(0).port_rcv_switch_relay_errors; }

  Scheduler s;
  EthSwitch sw;
  std::vector<std::unique_ptr<Host>> host;
  std::vector<std::unique_ptr<Link>> link;
};

TEST(Bridge, FloodsUnknownUnicastThenForwardsOnlyToTheLearnedPort) {
  Bridge b(3);
  b.send(0, frame(mac(2), mac(1)));  // h1's address is unknown: everyone but h0 gets it
  EXPECT_EQ(b.got(0), 0u);
  EXPECT_EQ(b.got(1), 1u);
  EXPECT_EQ(b.got(2), 1u);
  EXPECT_EQ(b.sw.counters().flooded.get(), 1u);
  EXPECT_EQ(b.sw.counters().flood_copies.get(), 2u);
  b.send(1, frame(mac(1), mac(2)));  // h0 was learned from its first frame
  EXPECT_EQ(b.got(0), 1u);
  EXPECT_EQ(b.got(2), 1u);
  b.send(0, frame(mac(2), mac(1)));  // and now h1 is known too
  EXPECT_EQ(b.got(1), 2u);
  EXPECT_EQ(b.got(2), 1u);
  EXPECT_EQ(b.sw.counters().flooded.get(), 1u);
  EXPECT_EQ(b.sw.fdb().counters().learned.get(), 2u);
  EXPECT_EQ(b.sw.fdb().port_of(1, mac(2), b.s.now()), 2u);
}

TEST(Bridge, BroadcastAndMulticastAlwaysFloodAndAreNeverLearned) {
  Bridge b(3);
  b.send(1, frame(mac(1), mac(2)));
  b.send(0, frame(kBroadcast, mac(1)));
  b.send(0, frame(Mac{0x33, 0x33, 0xFF, 0, 0, 1}, mac(1)));
  EXPECT_EQ(b.got(1), 2u);
  EXPECT_EQ(b.got(2), 3u);  // the first frame was flooded too
  b.send(2, frame(mac(9), kBroadcast));   // a group source address is not learned
  b.send(2, frame(mac(9), Mac{}));         // nor all zeros
  EXPECT_EQ(b.sw.fdb().counters().learned.get(), 2u);
}

TEST(Bridge, LearnedEntriesAgeOutAndStaticOnesDoNot) {
  Bridge b(3);
  b.sw.set_ageing(10 * kSecond);
  b.sw.add_fdb(mac(3), 3);
  b.send(1, frame(mac(1), mac(2)));
  b.s.advance_to(b.s.now() + 9 * kSecond);
  b.send(0, frame(mac(2), mac(1)));  // 9 s later: still known, no flood
  EXPECT_EQ(b.got(2), 1u);
  b.s.advance_to(b.s.now() + 10 * kSecond);
  b.send(0, frame(mac(2), mac(1)));  // 10 s of silence: aged out, flooded again
  EXPECT_EQ(b.got(2), 2u);
  // Both had been silent 10 s: h1's entry (looked up) and h0's (re-learned).
  EXPECT_EQ(b.sw.fdb().counters().aged.get(), 2u);
  b.send(0, frame(mac(3), mac(1)));  // the static entry is still there
  EXPECT_EQ(b.got(2), 3u);
  EXPECT_EQ(b.got(1), 2u);
  const auto entries = b.sw.fdb().entries(b.s.now());
  ASSERT_EQ(entries.size(), 2u);  // h0 (learned just now) and the static one
}

TEST(Bridge, AStationThatMovesIsRelearnedAndAStaticEntryIsNotOverwritten) {
  Bridge b(3);
  b.sw.add_fdb(mac(7), 3);
  b.send(0, frame(kBroadcast, mac(5)));
  b.send(1, frame(kBroadcast, mac(5)));  // mac 5 now behind port 2
  EXPECT_EQ(b.sw.fdb().counters().moved.get(), 1u);
  EXPECT_EQ(b.sw.fdb().port_of(1, mac(5), b.s.now()), 2u);
  b.send(0, frame(kBroadcast, mac(7)));  // spoofing the static station changes nothing
  EXPECT_EQ(b.sw.fdb().port_of(1, mac(7), b.s.now()), 3u);
}

TEST(Bridge, ADestinationOnTheIngressPortIsFilteredAsARelayError) {
  Bridge b(2);
  b.sw.add_fdb(mac(1), 1);
  b.send(0, frame(mac(1), mac(2)));
  EXPECT_EQ(b.got(1), 0u);
  EXPECT_EQ(b.relay_errors(1), 1u);
  EXPECT_EQ(b.sw.counters().same_port.get(), 1u);
}

TEST(Bridge, VlansIsolateAndTagsArePushedAndPoppedOnEgress) {
  Bridge b(4);
  // Ports 1-2 untagged in VLAN 10, port 3 a trunk for 10 and 20, port 4 untagged in 20.
  PortVlans a10, trunk, a20;
  a10.set_access(10);
  a20.set_access(20);
  trunk.add_tagged(10);
  trunk.add_tagged(20);
  b.sw.set_vlans(1, a10);
  b.sw.set_vlans(2, a10);
  b.sw.set_vlans(3, trunk);
  b.sw.set_vlans(4, a20);
  b.host[0]->port.enqueue(5, frame(kBroadcast, mac(1)));
  b.s.run_until_idle();
  ASSERT_EQ(b.got(1), 1u);
  EXPECT_EQ(b.host[1]->got[0].vid, -1);       // access port: untagged
  ASSERT_EQ(b.got(2), 1u);
  EXPECT_EQ(b.host[2]->got[0].vid, 10);       // trunk: tagged with the VLAN
  EXPECT_EQ(b.host[2]->got[0].len, 68u);      // 4 bytes of tag
  EXPECT_EQ(b.got(3), 0u);                    // VLAN 20 never sees it
  // From the trunk, tagged in 20 with PCP 6: only port 4, untagged.
  b.send(2, frame(kBroadcast, mac(3), 20, 6));
  EXPECT_EQ(b.got(3), 1u);
  EXPECT_EQ(b.host[3]->got[0].vid, -1);
  EXPECT_EQ(b.host[3]->got[0].len, 60u);
  EXPECT_EQ(b.got(1), 1u);
  // A VLAN the ingress port does not carry is filtered.
  b.send(2, frame(kBroadcast, mac(3), 30));
  b.send(0, frame(kBroadcast, mac(1), 20));
  EXPECT_EQ(b.sw.counters().vlan_filtered.get(), 2u);
  EXPECT_EQ(b.relay_errors(3) + b.relay_errors(1), 2u);
  // The same MAC learned in two VLANs is two entries.
  b.send(2, frame(kBroadcast, mac(1), 20));
  EXPECT_EQ(b.sw.fdb().port_of(10, mac(1), b.s.now()), 1u);
  EXPECT_EQ(b.sw.fdb().port_of(20, mac(1), b.s.now()), 3u);
}

TEST(Bridge, APushedTagCarriesTheFramesPriorityAndAPriorityTagJoinsThePvid) {
  Bridge b(2);
  PortVlans trunk;
  trunk.add_tagged(1);
  b.sw.set_vlans(2, trunk);
  // Untagged in, priority from the ingress port's classification (PCP of
  // an untagged frame is 0 under trust pcp; a priority tag carries it).
  b.send(0, frame(kBroadcast, mac(1), 0, 5));  // VID 0: priority-tagged, PVID 1
  ASSERT_EQ(b.got(1), 1u);
  EXPECT_EQ(b.host[1]->got[0].vid, 1);
  EXPECT_EQ(b.host[1]->got[0].pcp, 5);
}

// Nothing is dropped without its cause: a frame whose tag cannot be pushed
// (no mbuf headroom), flooded or known, counts no_tag_room; a flood with no
// other port in its VLAN counts no_egress.
TEST(Bridge, DropsForWantOfTagRoomOrOfAnyEgressAreCounted) {
  Bridge b(2);
  PortVlans trunk;
  trunk.add_tagged(1);
  b.sw.set_vlans(2, trunk);
  auto bare = [](const Mac& dst, const Mac& src) {
    rte_mbuf* m = frame(dst, src);
    const uint16_t len = rte_pktmbuf_data_len(m);
    uint8_t copy[64];
    std::memcpy(copy, rte_pktmbuf_mtod(m, uint8_t*), len);
    m->data_off = 0;  // no headroom left for a tag
    std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), copy, len);
    return m;
  };
  b.send(0, bare(kBroadcast, mac(1)));  // flooded to the trunk: needs a tag
  b.send(1, frame(mac(1), mac(2), 1));  // h1 learned (tagged), so the next is known unicast
  b.send(0, bare(mac(2), mac(1)));
  EXPECT_EQ(b.got(1), 0u);
  EXPECT_EQ(b.sw.counters().no_tag_room.get(), 2u);
  PortVlans alone;
  alone.set_access(30);
  b.sw.set_vlans(1, alone);
  b.send(0, frame(kBroadcast, mac(1)));  // into VLAN 30, which no other port carries
  EXPECT_EQ(b.sw.counters().no_egress.get(), 1u);
  EXPECT_EQ(b.relay_errors(1), 3u);
}

TEST(Bridge, ReceiveBuffersAreReleasedExactlyWhenTagsChangeTheLength) {
  Bridge b(3);
  PortVlans trunk;
  trunk.add_tagged(1);
  b.sw.set_vlans(3, trunk);
  b.sw.add_fdb(mac(3), 3);
  b.sw.add_fdb(mac(2), 2);
  for (int i = 0; i < 5; ++i) b.host[0]->port.enqueue(0, frame(mac(3), mac(1)));  // +4 bytes each
  for (int i = 0; i < 5; ++i) b.host[2]->port.enqueue(0, frame(mac(2), mac(4), 1));  // -4 bytes each
  b.s.run_until_idle();
  EXPECT_EQ(b.got(2), 5u);
  EXPECT_EQ(b.got(1), 5u);
  for (unsigned p = 1; p <= 3; ++p) EXPECT_EQ(b.sw.port(p).snapshot(0).classes[0].rx_buffered_bytes, 0u) << p;
}

TEST(Bridge, ALinkGoingDownFlushesWhatWasLearnedOnItsPort) {
  Bridge b(3);
  b.send(1, frame(kBroadcast, mac(2)));
  b.sw.port(2).set_link_up(false);
  b.sw.flush_port(2);
  EXPECT_EQ(b.sw.fdb().port_of(1, mac(2), b.s.now()), 0u);
  b.send(0, frame(mac(2), mac(1)));  // unknown again: flooded to the ports that are up
  EXPECT_EQ(b.got(2), 2u);
}

TEST(Bridge, TheTableIsBoundedAgainstSourceAddressFloods) {
  Fdb fdb;
  uint8_t m[6] = {0x02, 0, 0, 0, 0, 0};
  for (uint32_t i = 0; i < Fdb::kMaxEntries + 100; ++i) {
    wire::put32(m + 2, i + 1);
    fdb.learn(1, m, 1, 0);
  }
  EXPECT_EQ(fdb.counters().learned.get(), Fdb::kMaxEntries);
  EXPECT_EQ(fdb.counters().table_full.get(), 100u);
  EXPECT_EQ(fdb.entries(0).size(), Fdb::kMaxEntries);
}

TEST(Bridge, AFullTableRecoversOnceItsEntriesAged) {
  Fdb fdb(10 * kSecond);
  uint8_t m[6] = {0x02, 0, 0, 0, 0, 0};
  for (uint32_t i = 0; i < Fdb::kMaxEntries; ++i) {
    wire::put32(m + 2, i + 1);
    fdb.learn(1, m, 1, 0);
  }
  wire::put32(m + 2, 0xFFFFFF);
  fdb.learn(1, m, 2, 5 * kSecond);
  EXPECT_EQ(fdb.counters().table_full.get(), 1u) << "nothing has aged yet";
  fdb.learn(1, m, 2, 11 * kSecond);  // the flood's entries are 11 s old
  EXPECT_EQ(fdb.counters().aged.get(), Fdb::kMaxEntries);
  EXPECT_EQ(fdb.port_of(1, Mac{0x02, 0, 0, 0xFF, 0xFF, 0xFF}, 11 * kSecond), 2u);
}

TEST(Bridge, FloodedCopiesNeverQueueBeyondTheQueueSizeEvenOnALosslessClass) {
  Bridge b(3);
  b.sw.port(2).set_class_limit(0, EgressQueue::kUnbounded);  // as PFC sets a lossless class
  std::array<bool, kNumDataClasses> open{};  // port 2 paused on every class
  b.sw.port(2).set_gate(EgressGate{&open, [](void* c, unsigned cls, uint32_t) {
                                     return (*static_cast<std::array<bool, kNumDataClasses>*>(c))[cls];
                                   },
                                   nullptr});
  const uint32_t limit = b.sw.config().port.queue_pkts;
  for (uint32_t i = 0; i < limit + 10; ++i) b.send(0, frame(mac(9), mac(1)));
  EXPECT_EQ(b.sw.port(2).class_queued(0), limit);
  EXPECT_EQ(b.sw.counters().flood_no_room.get(), 10u);
  EXPECT_EQ(b.got(2), limit + 10) << "the last port takes the frames themselves";
}

}  // namespace
}  // namespace vf::dp
