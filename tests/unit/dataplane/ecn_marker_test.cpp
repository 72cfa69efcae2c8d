// RED-style ECN marking at an egress port, in virtual time: nothing below
// Kmin, everything above Kmax, a linear share in between, only ECN-capable
// frames, CE set in a still-valid IPv4 header, and the same frames marked on
// every run.
#include <gtest/gtest.h>

#include <vector>

#include "dataplane/fabric/ecn_marker.hpp"
#include "dataplane/wire/frame_peek.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

constexpr uint64_t G = 1'000'000'000ULL;
const Mac kDst{0x02, 0, 0, 0, 0, 2};

rte_mbuf* ip_frame(uint32_t len, uint8_t tos, uint32_t tag) {
  rte_mbuf* m = test::make_eth(len, kDst, -1);
  uint8_t* ip = rte_pktmbuf_mtod(m, uint8_t*) + 14;
  ip[0] = 0x45;
  ip[1] = tos;
  wire::ipv4_set_total_len(ip, uint16_t(len - 14));
  wire::put32(ip + 16, tag);  // the destination address carries the tag here
  wire::ipv4_fill_checksum(ip);
  return m;
}

struct Seen {
  std::vector<int> ecn;  // per frame, in arrival order
  bool checksums_ok = true;
  static void on_frame(void* self, rte_mbuf* m) {
    auto& s = *static_cast<Seen*>(self);
    s.ecn.push_back(wire::eth_frame_ecn(m));
    s.checksums_ok &= wire::ipv4_checksum_ok(rte_pktmbuf_mtod(m, const uint8_t*) + 14);
    rte_pktmbuf_free(m);
  }
};

TEST(EcnMarker, ProbabilityRisesLinearlyFromKminToPmaxAtKmax) {
  const EcnProfile p{true, 10'000, 50'000, 0.2};
  EXPECT_EQ(ecn_mark_probability(p, 0), 0);
  EXPECT_EQ(ecn_mark_probability(p, 10'000), 0);
  EXPECT_DOUBLE_EQ(ecn_mark_probability(p, 30'000), 0.1);
  EXPECT_DOUBLE_EQ(ecn_mark_probability(p, 50'000), 0.2);
  EXPECT_EQ(ecn_mark_probability(p, 50'001), 1);
  EXPECT_EQ(ecn_mark_probability(EcnProfile{}, 1'000'000), 0) << "off";
}

// 100 frames of 1000 bytes queued at once behind a slow link: frame k joins
// a queue of k-1 frames (the first goes straight onto the wire).
std::pair<Seen, EcnPrioritySnapshot> run(uint8_t tos, uint64_t seed, bool wred = false) {
  Scheduler s;
  Port a{s, "a", LinkLayer::kEthernet};
  Link link(s, LinkLayer::kEthernet, {1 * G, 0, 1500});
  Seen seen;
  a.attach(link.a_to_b());
  link.a_to_b().set_sink(FrameSink{&Seen::on_frame, &seen});
  a.set_class_limit(0, 1000);
  std::array<EcnProfile, 8> prof{};
  prof[0] = {true, 20'000, 60'000, 0.5, wred};
  EcnMarker ecn(a, prof, seed);
  for (uint32_t i = 0; i < 100; ++i) a.enqueue(0, ip_frame(1000, tos, i));
  s.run_until_idle();
  return {seen, ecn.snapshot(0)};
}

TEST(EcnMarker, MarksEctFramesByQueueDepthOnly) {
  const auto [seen, snap] = run(0x6A, 7);  // DSCP 26, ECT(0)
  ASSERT_EQ(seen.ecn.size(), 100u);
  EXPECT_TRUE(seen.checksums_ok);
  unsigned marked = 0, between = 0;
  for (unsigned k = 0; k < 100; ++k) {
    const uint64_t depth = (k == 0 ? 0 : k - 1) * 1000ull;  // bytes ahead of frame k when it joined
    const bool ce = seen.ecn[k] == wire::kEcnCe;
    marked += ce;
    if (depth <= 20'000) {
      EXPECT_FALSE(ce) << "frame " << k << " below Kmin";
    }
    if (depth > 60'000) {
      EXPECT_TRUE(ce) << "frame " << k << " above Kmax";
    }
    if (depth > 20'000 && depth <= 60'000) between += ce;
  }
  EXPECT_EQ(snap.ecn_marked, marked);
  EXPECT_EQ(snap.not_ect, 0u);
  // 40 frames between Kmin and Kmax with p rising to 0.5: about 10 marked.
  EXPECT_GT(between, 3u);
  EXPECT_LT(between, 20u);
  // The same seed marks the same frames; another seed other ones.
  EXPECT_EQ(run(0x6A, 7).first.ecn, seen.ecn);
  EXPECT_NE(run(0x6A, 8).first.ecn, seen.ecn);
}

TEST(EcnMarker, LeavesFramesThatAreNotEcnCapable) {
  const auto [seen, snap] = run(0x68, 7);  // DSCP 26, Not-ECT
  for (int e : seen.ecn) EXPECT_EQ(e, int(wire::kEcnNotEct));
  EXPECT_EQ(snap.ecn_marked, 0u);
  EXPECT_GT(snap.not_ect, 39u) << "every frame above Kmax was picked, none could be marked";
}

TEST(EcnMarker, WredDropsWhatItCannotMarkAndNothingElse) {
  const auto [seen, snap] = run(0x68, 7, true);  // Not-ECT on a WRED profile
  // Drops keep the queue shorter than marking does, so fewer frames find it
  // above Kmax than the 40 of the marking run; all that were picked went.
  EXPECT_GT(snap.wred_drops, 20u);
  EXPECT_EQ(snap.wred_drops, snap.not_ect);
  EXPECT_EQ(seen.ecn.size() + snap.wred_drops, 100u) << "the rest went on";
  const auto [ect, marked] = run(0x6A, 7, true);  // ECT frames are marked, never dropped
  EXPECT_EQ(ect.ecn.size(), 100u);
  EXPECT_EQ(marked.wred_drops, 0u);
  EXPECT_GT(marked.ecn_marked, 39u);
}

}  // namespace
}  // namespace vf::dp
