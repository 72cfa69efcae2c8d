// Loss, corruption, duplication and reordering on a link (dp::Impairment through Fabric::set_impairment),
// in virtual time: RC recovers what is lost or fails its CRC, every byte
// arrives, the counters say what happened where, and the same seed gives the
// same run.
#include "dataplane/fabric/impairment.hpp"

#include <gtest/gtest.h>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

struct Outcome {
  uint64_t lost = 0, corrupted = 0, wire_frames = 0, rcv_errors = 0, crc_errors = 0, retransmitted = 0;
  uint64_t duplicated = 0, reordered = 0, duplicate_requests = 0, seq_naks = 0;
  bool delivered = false;
  unsigned ok = 0;
};

Outcome impaired_run(LinkLayer ll, const dp::ImpairmentSpec& spec) {
  LabConfig c;
  c.link_layer = ll;
  FabricLab lab(c);
  lab.fabric.set_impairment({"vhca0", 0}, spec);
  engine::test::ConnParams p;
  p.timeout = 8;  // 1 ms local ACK timeout: recovery in virtual milliseconds
  WriteFlow f(lab, 0, 1, 64 * 1024, 16, p);
  lab.run_until([&] { return f.poll(); }, lab.sched.now() + 5'000'000'000ULL);
  const dp::LinkInfo& l = *lab.fabric.find_link({"vhca0", 0});
  Outcome r;
  r.lost = l.impair_ab ? l.impair_ab->lost.get() : 0;
  r.corrupted = l.impair_ab ? l.impair_ab->corrupted.get() : 0;
  r.wire_frames = l.link->a_to_b().frames_sent.get();
  const dp::HcaPortSnapshot h = lab.host(1).port->snapshot(lab.sched.now());
  r.rcv_errors = h.port.port_rcv_errors;
  r.crc_errors = h.rx_errors[unsigned(wire::RxError::kBadVcrc)] + h.rx_errors[unsigned(wire::RxError::kBadIcrc)];
  r.retransmitted = lab.host(0).hca->counters().retransmitted_packets;
  r.duplicated = l.link->a_to_b().duplicated.get();
  r.reordered = l.link->a_to_b().reordered.get();
  r.duplicate_requests = lab.host(1).hca->counters().duplicate_requests;
  r.seq_naks = lab.host(1).hca->counters().seq_naks_sent;
  r.delivered = f.delivered();
  r.ok = f.ok;
  return r;
}

class Impaired : public ::testing::TestWithParam<LinkLayer> {};

TEST_P(Impaired, LossIsRecoveredByRcAndReproducibleFromTheSeed) {
  const Outcome a = impaired_run(GetParam(), {.loss = 0.05, .seed = 42});
  EXPECT_EQ(a.ok, 16u);
  EXPECT_TRUE(a.delivered);
  EXPECT_GT(a.lost, 0u);
  EXPECT_GT(a.retransmitted, 0u);
  // About 5 % of what went onto the wire (the draws are uniform).
  EXPECT_NEAR(double(a.lost) / double(a.wire_frames), 0.05, 0.03) << a.lost << " of " << a.wire_frames;
  const Outcome again = impaired_run(GetParam(), {.loss = 0.05, .seed = 42});
  EXPECT_EQ(again.lost, a.lost) << "same seed, same traffic: the same frames are lost";
  EXPECT_EQ(again.wire_frames, a.wire_frames);
  const Outcome other = impaired_run(GetParam(), {.loss = 0.05, .seed = 43});
  EXPECT_NE(other.wire_frames, a.wire_frames) << "another seed loses other frames";
}

// Duplicated and reordered frames reach a real RC responder: a duplicate is
// a duplicate request (ACKed again, never placed twice), a frame that comes
// after its successor is a PSN gap (a sequence NAK, then a retransmission).
// Every byte arrives once, and the same seed gives the same run.
TEST_P(Impaired, DuplicatesAndReorderingAreHandledByTheTransport) {
  const Outcome d = impaired_run(GetParam(), {.duplicate = 0.05, .seed = 5});
  EXPECT_EQ(d.ok, 16u);
  EXPECT_TRUE(d.delivered);
  EXPECT_GT(d.duplicated, 0u);
  EXPECT_GT(d.duplicate_requests, 0u) << "the responder saw the copies as duplicates";
  const Outcome r = impaired_run(GetParam(), {.reorder = 0.05, .seed = 5});
  EXPECT_EQ(r.ok, 16u);
  EXPECT_TRUE(r.delivered);
  EXPECT_GT(r.reordered, 0u);
  EXPECT_GT(r.seq_naks, 0u) << "a gap is NAKed";
  EXPECT_EQ(r.lost, 0u);
  const Outcome again = impaired_run(GetParam(), {.reorder = 0.05, .seed = 5});
  EXPECT_EQ(again.reordered, r.reordered);
  EXPECT_EQ(again.wire_frames, r.wire_frames);
}

TEST_P(Impaired, CorruptedFramesFailTheirCrcAtTheReceiverAndAreRecovered) {
  const Outcome r = impaired_run(GetParam(), {.corrupt = 0.05, .seed = 7});
  EXPECT_EQ(r.ok, 16u);
  EXPECT_TRUE(r.delivered) << "no corrupted byte may reach memory";
  EXPECT_GT(r.corrupted, 0u);
  EXPECT_EQ(r.lost, 0u);
  // Every corrupted frame reached the receiver (the link header is intact)
  // and failed a check there, counted as a PortRcvErrors: on IB its VCRC,
  // which covers every byte; on RoCE its ICRC or IPv4 checksum, except a
  // flip in the UDP checksum, which nothing checks without an Ethernet FCS.
  if (GetParam() == LinkLayer::kInfiniBand) {
    EXPECT_EQ(r.crc_errors, r.corrupted);
    EXPECT_EQ(r.rcv_errors, r.corrupted);
  } else {
    EXPECT_LE(r.rcv_errors, r.corrupted);
    EXPECT_GT(double(r.rcv_errors), 0.97 * double(r.corrupted)) << r.rcv_errors << " of " << r.corrupted;
    EXPECT_GT(double(r.crc_errors), 0.9 * double(r.corrupted)) << r.crc_errors << " of " << r.corrupted;
  }
  EXPECT_GT(r.retransmitted, 0u);
}

TEST_P(Impaired, AClearSpecRemovesTheImpairment) {
  LabConfig c;
  c.link_layer = GetParam();
  FabricLab lab(c);
  lab.fabric.set_impairment({"vhca0", 0}, {.loss = 1.0, .seed = 1});
  EXPECT_NE(lab.fabric.find_link({"vhca0", 0})->impair_ab, nullptr);
  lab.fabric.set_impairment({"sw0", 1}, {});  // either end names the link
  EXPECT_EQ(lab.fabric.find_link({"vhca0", 0})->impair_ab, nullptr);
  WriteFlow f(lab, 0, 1, 4096, 4);
  ASSERT_TRUE(lab.run_until([&] { return f.poll(); }, lab.sched.now() + 100'000'000));
  EXPECT_EQ(lab.link_of(0).a_to_b().lost.get(), 0u);
  EXPECT_THROW(lab.fabric.set_impairment({"vhca0", 0}, {.loss = 1.5, .seed = 1}), std::invalid_argument);
  EXPECT_THROW(lab.fabric.set_impairment({"vhca0", 0}, {.corrupt = -0.1, .seed = 1}), std::invalid_argument);
  EXPECT_EQ(lab.fabric.find_link({"vhca0", 0})->impair_ab, nullptr) << "a refused spec changes nothing";
}

INSTANTIATE_TEST_SUITE_P(LinkLayers, Impaired, ::testing::Values(LinkLayer::kInfiniBand, LinkLayer::kEthernet),
                         [](const auto& p) { return p.param == LinkLayer::kInfiniBand ? "Ib" : "Roce"; });

}  // namespace
}  // namespace vf::test
