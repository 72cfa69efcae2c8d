// A port capture in virtual time: both directions with their wire times, the
// snap length, a full ring dropping copies (never frames), records that wrap
// the ring's end, and a second capture on the same link refused.
#include "dataplane/fabric/port_capture.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "dataplane/fabric/fabric.hpp"
#include "dataplane/fabric/link.hpp"
#include "dataplane/wire/bytes.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

using test::make_frame;
using test::Recorder;

constexpr uint64_t G = 1'000'000'000ULL;

struct Got {
  CaptureRecord r;
  std::vector<uint8_t> bytes;
};

std::vector<Got> drain(PortCapture& c, size_t max = SIZE_MAX) {
  std::vector<Got> out;
  c.drain([&](const CaptureRecord& r, const uint8_t* p) { out.push_back({r, std::vector<uint8_t>(p, p + r.caplen)}); },
          max);
  return out;
}

uint32_t tag_of(const Got& g) { return wire::get32(g.bytes.data() + test::kTagOffset); }

TEST(PortCapture, SeesBothDirectionsStampedWithTheirWireTimes) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 100, 4096});
  Recorder ra(s), rb(s);
  link.a_to_b().set_sink(rb.sink());
  link.b_to_a().set_sink(ra.sink());
  PortCapture cap(0, 65535);  // at end a
  link.a_to_b().set_tap(cap.sent_tap());
  link.b_to_a().set_tap(cap.received_tap());
  s.advance_to(1000);
  link.a_to_b().send(make_frame(1000, 1));  // leaves a at 1000
  link.b_to_a().send(make_frame(500, 2));   // 40 ns on the wire + 100: reaches a at 1140
  s.run_until_idle();
  const auto got = drain(cap);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].r.inbound, 0);
  EXPECT_EQ(got[0].r.ts_ns, 1000u);
  EXPECT_EQ(got[0].r.origlen, 1000u);
  EXPECT_EQ(tag_of(got[0]), 1u);
  EXPECT_EQ(got[1].r.inbound, 1);
  EXPECT_EQ(got[1].r.ts_ns, 1140u);
  EXPECT_EQ(tag_of(got[1]), 2u);
  EXPECT_EQ(ra.got.size() + rb.got.size(), 2u) << "the frames went on";
  EXPECT_EQ(cap.captured.get(), 2u);
}

TEST(PortCapture, KeepsTheSnapLengthAndTheFramesLength) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 100, 4096});
  PortCapture cap(0, 64);
  link.a_to_b().set_tap(cap.sent_tap());
  link.a_to_b().send(make_frame(1500, 7));
  const auto got = drain(cap);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].r.caplen, 64u);
  EXPECT_EQ(got[0].r.origlen, 1500u);
  EXPECT_EQ(tag_of(got[0]), 7u);
  s.run_until_idle();
}

TEST(PortCapture, AFullRingDropsCopiesNotFramesAndRecordsWrapTheEnd) {
  Scheduler s;
  Link link(s, LinkLayer::kInfiniBand, LinkParams{100 * G, 100, 4096});
  Recorder rb(s);
  link.a_to_b().set_sink(rb.sink());
  PortCapture cap(256 * 1024, 4096);  // 63 records of 4120 bytes fit
  link.a_to_b().set_tap(cap.sent_tap());
  uint32_t tag = 0, seen = 0;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 100; ++i) link.a_to_b().send(make_frame(4000, tag++));
    s.run_until_idle();
    // Drained in two goes, so the next round starts mid-ring and wraps.
    auto got = drain(cap, 20 * 4000);
    auto rest = drain(cap);
    got.insert(got.end(), rest.begin(), rest.end());
    ASSERT_GT(got.size(), 50u);
    ASSERT_LT(got.size(), 100u);
    for (size_t i = 1; i < got.size(); ++i) EXPECT_EQ(tag_of(got[i]), tag_of(got[i - 1]) + 1) << "in order, none torn";
    seen += uint32_t(got.size());
  }
  EXPECT_EQ(rb.got.size(), 500u) << "every frame crossed";
  EXPECT_EQ(cap.captured.get(), seen);
  EXPECT_EQ(cap.captured.get() + cap.dropped.get(), 500u);
}

TEST(PortCapture, OneCapturePerLink) {
  Scheduler s;
  Fabric f(s, "f", LinkLayer::kInfiniBand, vf::test::test_mbuf_pool());
  f.add_switch("sw", 4, 0);
  f.add_switch("sw2", 4, 0);
  f.connect({"sw", 1}, {"sw2", 1}, LinkParams{100 * G, 100, 4096});
  PortCapture a(0, 100), b(0, 100);
  f.set_capture({"sw", 1}, &a);
  EXPECT_THROW(f.set_capture({"sw2", 1}, &b), std::invalid_argument) << "the other end shares the wire";
  EXPECT_THROW(f.set_capture({"sw", 2}, &b), std::invalid_argument) << "no link there";
  f.set_capture({"sw", 1}, nullptr);
  EXPECT_NO_THROW(f.set_capture({"sw2", 1}, &b));
  f.set_capture({"sw2", 1}, nullptr);
}

}  // namespace
}  // namespace vf::dp
