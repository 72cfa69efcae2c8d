// The 802.1Qbb PFC frame: bytes where the standard puts them, checked against
// a frame built by hand and against Wireshark's MAC Control dissector.
#include "dataplane/wire/pfc.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "dataplane/wire/eth.hpp"
#include "tests/unit/wire/tshark.hpp"

namespace vf::wire {
namespace {

constexpr uint8_t kSrc[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x07};

std::array<uint8_t, kPfcFrameLen> hand_built() {
  // XOFF priority 3 for 0xFFFF quanta, XON priority 6, every other class untouched.
  std::array<uint8_t, kPfcFrameLen> f{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01,  // dst
                                      0x02, 0x00, 0x00, 0x00, 0x00, 0x07,  // src
                                      0x88, 0x08,                          // MAC Control
                                      0x01, 0x01,                          // opcode PFC
                                      0x00, 0x48,                          // vector: 3 and 6
                                      0, 0, 0, 0, 0, 0, 0xFF, 0xFF,        // time[0..3]
                                      0, 0, 0, 0, 0, 0, 0, 0};             // time[4..7]
  return f;
}

PfcFrame sample() {
  PfcFrame p;
  p.enable = 0x48;
  p.quanta[3] = 0xFFFF;
  p.quanta[6] = 0;
  return p;
}

TEST(Pfc, FrameIsByteForByteTheHandBuiltOne) {
  std::array<uint8_t, kPfcFrameLen> f;
  f.fill(0xEE);
  pfc_put(f.data(), kSrc, sample());
  EXPECT_EQ(f, hand_built());
}

TEST(Pfc, ParsesWhatItBuildsAndIgnoresTheReservedOctet) {
  auto f = hand_built();
  PfcFrame p;
  ASSERT_EQ(pfc_parse(f.data(), f.size(), p), PfcError::kOk);
  EXPECT_EQ(p, sample());
  f[16] = 0xFF;  // the vector's reserved high octet
  ASSERT_EQ(pfc_parse(f.data(), f.size(), p), PfcError::kOk);
  EXPECT_EQ(p.enable, 0x48);
}

TEST(Pfc, RefusesWhatIsNotAPfcFrame) {
  PfcFrame p;
  auto f = hand_built();
  EXPECT_EQ(pfc_parse(f.data(), 33, p), PfcError::kLength);
  EXPECT_EQ(pfc_parse(f.data(), 10, p), PfcError::kLength);
  auto pause = f;
  pause[15] = 0x01;
  pause[14] = 0x00;  // 802.3x PAUSE
  EXPECT_EQ(pfc_parse(pause.data(), pause.size(), p), PfcError::kOpcode);
  auto unicast = f;
  unicast[0] = 0x02;
  EXPECT_EQ(pfc_parse(unicast.data(), unicast.size(), p), PfcError::kDst);
  auto ip = f;
  ip[12] = 0x08;
  ip[13] = 0x00;
  EXPECT_EQ(pfc_parse(ip.data(), ip.size(), p), PfcError::kEtherType);
  // The same body behind an 802.1Q tag.
  std::vector<uint8_t> tagged(f.begin(), f.begin() + 12);
  for (uint8_t b : {0x81, 0x00, 0x60, 0x00}) tagged.push_back(b);
  tagged.insert(tagged.end(), f.begin() + 12, f.end());
  EXPECT_EQ(pfc_parse(tagged.data(), tagged.size(), p), PfcError::kTagged);
}

TEST(Pfc, QuantaAre512BitTimesAtTheLinkSpeed) {
  EXPECT_EQ(pause_quanta_ns(1, 100'000'000'000ULL), 6u);        // 5.12 ns, rounded up
  EXPECT_EQ(pause_quanta_ns(0xFFFF, 100'000'000'000ULL), 335540u);  // 335.5392 us
  EXPECT_EQ(pause_quanta_ns(0xFFFF, 10'000'000'000ULL), 3355392u);
  EXPECT_EQ(pause_quanta_ns(100, 2'000'000'000ULL), 25600u);
  EXPECT_EQ(pause_quanta_ns(0, 2'000'000'000ULL), 0u);
}

TEST(Pfc, WiresharkDecodesTheFrame) {
  std::array<uint8_t, kPfcFrameLen> frame;
  pfc_put(frame.data(), kSrc, sample());
  const test::TsharkResult r =
      test::tshark_fields(frame.data(), frame.size(),
                          "-e eth.dst -e macc.opcode -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 "
                          "-e macc.cbfc.pause_time.c6 -e _ws.malformed");
  ASSERT_EQ(r.status, 0) << "tshark is part of the test set-up (scripts/setup.sh): " << r.out;
  EXPECT_EQ(r.out, "01:80:c2:00:00:01,0x0101,0x0048,65535,0,\n");
}

}  // namespace
}  // namespace vf::wire
