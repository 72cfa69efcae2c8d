// 802.1Qaz ETS on an Ethernet port's egress, in virtual time: bandwidth
// shares hold in bytes whatever the frame sizes, strict classes go first, a
// class's priorities take turns, a paused priority does not hold its class
// neighbours, and a 0 % class gets only what nobody else wants.
#include <gtest/gtest.h>

#include <map>

#include "dataplane/fabric/ets.hpp"
#include "dataplane/fabric/port.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

using test::make_eth;
using test::Recorder;

constexpr uint64_t G = 1'000'000'000ULL;
const Mac kDst{0x02, 0, 0, 0, 0, 0x0B};

EtsConfig identity_ets() {
  EtsConfig e;
  e.enabled = true;
  for (unsigned p = 0; p < 8; ++p) e.prio2tc[p] = uint8_t(p);
  e.bw = {0, 0, 0, 0, 0, 0, 0, 0};
  return e;
}

struct EthPair {
  explicit EthPair(const EtsConfig& ets) : link(s, LinkLayer::kEthernet, {10 * G, 0, 9000}), rec(s) {
    PortConfig pc;
    pc.queue_pkts = 4096;
    pc.eth.ets = ets;
    tx = std::make_unique<Port>(s, "tx", LinkLayer::kEthernet, pc);
    rx = std::make_unique<Port>(s, "rx", LinkLayer::kEthernet);
    connect_ports(*tx, *rx, link);
    rec.own(*rx);
  }
  void fill(unsigned prio, unsigned frames, uint32_t len) {
    for (unsigned i = 0; i < frames; ++i) ASSERT_TRUE(tx->enqueue(prio, make_eth(len, kDst, int(prio))));
  }
  // Bytes each priority had delivered after the first `n` frames.
  std::map<unsigned, uint64_t> bytes_in_first(size_t n, uint32_t len_of_prio(unsigned)) const {
    std::map<unsigned, uint64_t> b;
    for (size_t i = 0; i < n && i < rec.got.size(); ++i) b[rec.got[i].cls] += len_of_prio(rec.got[i].cls);
    return b;
  }
  Scheduler s;
  Link link;
  std::unique_ptr<Port> tx, rx;
  Recorder rec;
};

TEST(Ets, PlanGroupsPrioritiesIntoClasses) {
  EtsConfig e;  // the 802.1Q default map: 0 -> TC1, 1 -> TC0
  e.tsa[6] = Tsa::kStrict;
  e.bw = {50, 50, 0, 0, 0, 0, 0, 0};
  const EtsPlan p = make_ets_plan(e);
  EXPECT_EQ(p.tc_prios[1], 0b1);
  EXPECT_EQ(p.tc_prios[0], 0b10);
  EXPECT_EQ(p.strict, 1u << 6);
  EXPECT_EQ(p.shared, 0b11);
  EXPECT_EQ(p.leftover, 0b10111100);  // TCs 2-5 and 7: ETS with 0 %
  EXPECT_EQ(p.quantum[0], 50 * kQuantumPerPercent);
}

TEST(Ets, SharesHoldInBytesWhateverTheFrameSizes) {
  EtsConfig e = identity_ets();
  e.bw[2] = 70;
  e.bw[5] = 30;
  EthPair p(e);
  p.fill(2, 2000, 100);   // small frames on the 70 % class
  p.fill(5, 400, 1500);   // large ones on the 30 % class
  p.s.run_until_idle();
  // While both are backlogged: 70:30 of the bytes, within one quantum.
  auto len = [](unsigned prio) -> uint32_t { return prio == 2 ? 100 : 1500; };
  const auto b = p.bytes_in_first(1500, len);
  const double share = double(b.at(2)) / double(b.at(2) + b.at(5));
  EXPECT_NEAR(share, 0.70, 0.02) << b.at(2) << " vs " << b.at(5);
  EXPECT_EQ(p.rec.got.size(), 2400u);  // and everything went in the end
}

TEST(Ets, StrictClassesGoFirstHighestFirst) {
  EtsConfig e = identity_ets();
  e.bw[0] = 100;
  e.tsa[6] = Tsa::kStrict;
  e.tsa[3] = Tsa::kStrict;
  EthPair p(e);
  p.fill(0, 20, 500);
  p.fill(3, 10, 500);
  p.fill(6, 10, 500);
  p.s.run_until_idle();
  ASSERT_EQ(p.rec.got.size(), 40u);
  // The first frame left before the rest were queued; then TC6, TC3, TC0.
  for (size_t i = 1; i <= 10; ++i) EXPECT_EQ(p.rec.got[i].cls, 6u) << i;
  for (size_t i = 11; i <= 20; ++i) EXPECT_EQ(p.rec.got[i].cls, 3u) << i;
  for (size_t i = 21; i < 40; ++i) EXPECT_EQ(p.rec.got[i].cls, 0u) << i;
}

TEST(Ets, PrioritiesOfOneClassTakeTurnsAndAPausedOneHoldsOnlyItself) {
  EtsConfig e = identity_ets();
  e.prio2tc[4] = 3;  // priorities 3 and 4 share TC3
  e.bw[3] = 100;
  EthPair p(e);
  std::array<bool, kNumDataClasses> open{true, true, true, true, true, true, true, true};
  p.tx->set_gate(EgressGate{&open, [](void* c, unsigned cls, uint32_t) { return (*static_cast<std::array<bool, 8>*>(c))[cls]; },
                            nullptr});
  open[3] = false;  // priority 3 paused (PFC)
  p.fill(3, 10, 500);
  p.fill(4, 10, 500);
  p.s.run_until_idle();
  ASSERT_EQ(p.rec.got.size(), 10u);
  for (const auto& a : p.rec.got) EXPECT_EQ(a.cls, 4u);
  open[3] = true;
  p.fill(4, 10, 500);
  p.tx->wake();
  p.s.run_until_idle();
  ASSERT_EQ(p.rec.got.size(), 30u);
  unsigned alternations = 0;
  for (size_t i = 11; i < 30; ++i) alternations += p.rec.got[i].cls != p.rec.got[i - 1].cls;
  EXPECT_GE(alternations, 17u);  // one frame each in turn
}

TEST(Ets, AZeroShareClassSendsOnlyWhatNobodyElseWants) {
  EtsConfig e = identity_ets();
  e.bw[1] = 100;  // TC2 keeps 0 %
  EthPair p(e);
  p.fill(2, 5, 500);
  p.fill(1, 20, 500);
  p.s.run_until_idle();
  ASSERT_EQ(p.rec.got.size(), 25u);
  for (size_t i = 1; i <= 20; ++i) EXPECT_EQ(p.rec.got[i].cls, 1u) << i;
}

TEST(Ets, PrioritiesOfAStrictClassTakeTurnsToo) {
  EtsConfig e = identity_ets();
  e.bw[0] = 100;
  e.prio2tc[5] = 6;  // priorities 5 and 6 share strict TC6
  e.tsa[6] = Tsa::kStrict;
  EthPair p(e);
  p.fill(5, 10, 500);
  p.fill(6, 10, 500);
  p.s.run_until_idle();
  ASSERT_EQ(p.rec.got.size(), 20u);
  unsigned sixes_in_first_half = 0;
  for (size_t i = 0; i < 10; ++i) sixes_in_first_half += p.rec.got[i].cls == 6;
  EXPECT_GE(sixes_in_first_half, 4u) << "priority 6 is not starved behind 5";
}

}  // namespace
}  // namespace vf::dp
