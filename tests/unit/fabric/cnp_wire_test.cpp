// ECN and DCQCN on the wire, read by Wireshark: a congested switch port marks
// ECT frames CE (ECN bits 11, the IPv4 checksum still valid), and the target
// answers with RoCEv2 CNPs -- BTH opcode 0x81 to the sender's QP, DSCP 48,
// not ECN-capable. Frames captured at the target's port as fabricctl capture
// would, decoded by tshark.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dataplane/fabric/port_capture.hpp"
#include "tests/support/fabric_lab.hpp"
#include "tests/unit/wire/tshark.hpp"

namespace vf::test {
namespace {

using engine::test::ConnParams;

constexpr uint32_t kMsg = 64 * 1024;
constexpr unsigned kWrs = 8;

struct Frame {
  std::vector<uint8_t> bytes;
  bool inbound;
};

std::vector<Frame> capture_incast_at_target() {
  LabConfig c;
  c.link_layer = LinkLayer::kEthernet;
  c.hosts = 3;
  c.link = {2'000'000'000ULL, 500, 1500};
  c.port.eth.trust_dscp = true;
  c.port.eth.pfc.enable = 1u << 3;
  c.port.eth.ecn = {true, 1024, 8 * 1024, 1.0};  // marks early and often
  c.default_tclass = 106;
  c.dcqcn.rp_enabled = c.dcqcn.np_enabled = true;
  FabricLab lab(c);
  dp::PortCapture cap(1 << 24, 2048);  // whole frames: tshark checks their lengths
  lab.fabric.set_capture({"vhca2", 0}, &cap);
  auto& target = *lab.host(2).app;
  std::vector<uint8_t> sink(2 * size_t(kWrs) * kMsg);
  const uint32_t tpd = target.alloc_pd();
  const auto tmr = target.mr(tpd, sink.data(), sink.size());
  auto tcq = target.cq(255);
  std::vector<std::vector<uint8_t>> bufs(2, std::vector<uint8_t>(size_t(kWrs) * kMsg, 1));
  std::vector<std::unique_ptr<engine::test::AppCq>> cqs;
  std::vector<std::unique_ptr<engine::test::AppQp>> qps, peers;
  for (unsigned i = 0; i < 2; ++i) {
    auto& app = *lab.host(i).app;
    const uint32_t pd = app.alloc_pd();
    const auto mr = app.mr(pd, bufs[i].data(), bufs[i].size());
    cqs.push_back(app.cq(255));
    qps.push_back(app.qp(pd, *cqs.back(), *cqs.back()));
    peers.push_back(target.qp(tpd, *tcq, *tcq));
    lab.connect(i, *qps.back(), 2, *peers.back(), ConnParams{});
    for (unsigned k = 0; k < kWrs; ++k) {
      vhca_send_wqe w = engine::test::send_wqe(
          k, {engine::test::sge(bufs[i].data() + size_t(k) * kMsg, kMsg, mr.lkey)}, IBV_SEND_SIGNALED,
          IBV_WR_RDMA_WRITE);
      w.remote_addr = reinterpret_cast<uint64_t>(sink.data()) + (size_t(i) * kWrs + k) * kMsg;
      w.rkey = tmr.rkey;
      app.post_send(*qps.back(), w);
    }
  }
  unsigned done = 0;
  lab.run_until([&] {
    for (unsigned i = 0; i < 2; ++i) {
      vhca_cqe e;
      while (lab.host(i).app->poll_cq(*cqs[i], e)) ++done;
    }
    return done == 2 * kWrs;
  });
  lab.fabric.set_capture({"vhca2", 0}, nullptr);
  std::vector<Frame> out;
  cap.drain(
      [&](const dp::CaptureRecord& r, const uint8_t* data) {
        out.push_back({{data, data + r.caplen}, r.inbound != 0});
      },
      SIZE_MAX);
  return out;
}

constexpr unsigned kBthOpcodeAt = 14 + 20 + 8;  // untagged IPv4: Ethernet, IP, UDP

TEST(CnpWire, WiresharkSeesCeMarksAndCnps) {
  const std::vector<Frame> frames = capture_incast_at_target();
  const Frame* cnp = nullptr;
  const Frame* ce = nullptr;
  for (const Frame& f : frames) {
    if (f.bytes.size() <= kBthOpcodeAt) continue;
    if (!f.inbound && f.bytes[kBthOpcodeAt] == 0x81 && !cnp) cnp = &f;
    if (f.inbound && (f.bytes[15] & 3) == 3 && !ce) ce = &f;
  }
  ASSERT_NE(cnp, nullptr) << "the target sent no CNP";
  ASSERT_NE(ce, nullptr) << "no CE-marked frame arrived";
  const wire::test::TsharkResult c = wire::test::tshark_fields(
      cnp->bytes.data(), cnp->bytes.size(),
      "-e infiniband.bth.opcode -e ip.dsfield.dscp -e ip.dsfield.ecn -e udp.dstport -e ip.checksum.status "
      "-o ip.check_checksum:TRUE -e _ws.malformed");
  ASSERT_EQ(c.status, 0) << "tshark is part of the test set-up (scripts/setup.sh): " << c.out;
  EXPECT_EQ(c.out, "129,48,0,4791,1,\n") << "opcode 0x81, DSCP 48, Not-ECT, RoCEv2, IP checksum good";
  const wire::test::TsharkResult m = wire::test::tshark_fields(
      ce->bytes.data(), ce->bytes.size(),
      "-e ip.dsfield.dscp -e ip.dsfield.ecn -e ip.checksum.status -o ip.check_checksum:TRUE -e _ws.malformed");
  ASSERT_EQ(m.status, 0) << m.out;
  EXPECT_EQ(m.out, "26,3,1,\n") << "DSCP 26 kept, CE, the checksum fixed up with the mark";
}

}  // namespace
}  // namespace vf::test
