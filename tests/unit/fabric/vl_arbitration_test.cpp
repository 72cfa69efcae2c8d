// VL arbitration on a whole fabric: two RC senders on SL0 and SL1 (VL0 and
// VL1 by the default SL→VL map) WRITE into one vHCA; the switch port towards
// it, the bottleneck, weighs VL0 3:1 against VL1 in its low-priority table.
// The wire is shared 3:1, and credit flow control keeps it lossless.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

using engine::test::AppCq;
using engine::test::AppQp;

constexpr uint32_t kMsg = 64 * 1024;
constexpr unsigned kWrs = 24;

VlArbTable table(std::initializer_list<VlArbEntry> e) {
  VlArbTable t;
  for (const VlArbEntry& x : e) t.entries[t.size++] = x;
  return t;
}

TEST(VlArbitration, TwoSlsThroughOneBottleneckShareItByWeight) {
  LabConfig c;
  c.hosts = 3;
  c.link = {2'000'000'000ULL, 500, 4096};
  FabricLab lab(c);
  auto& sw = static_cast<dp::IbSwitch&>(*lab.fabric.find_switch("sw0"));
  sw.set_vlarb(3, {}, table({{0, 192}, {1, 64}}), 0);  // towards host 2

  auto& target = *lab.host(2).app;
  std::vector<uint8_t> sink(2 * kWrs * size_t(kMsg));
  const uint32_t tpd = target.alloc_pd();
  const auto tmr = target.mr(tpd, sink.data(), sink.size());
  auto tcq = target.cq(255);
  engine::test::ConnParams p;
  p.mtu = IBV_MTU_4096;
  struct Sender {
    std::vector<uint8_t> buf;
    vhca_reg_mr_rsp mr;
    std::unique_ptr<AppCq> cq;
    std::unique_ptr<AppQp> qp, peer;
    unsigned done = 0;
  };
  std::vector<Sender> s(2);
  for (unsigned i = 0; i < 2; ++i) {
    auto& app = *lab.host(i).app;
    const uint32_t pd = app.alloc_pd();
    s[i].buf.assign(kWrs * size_t(kMsg), uint8_t(i + 1));
    s[i].mr = app.mr(pd, s[i].buf.data(), s[i].buf.size());
    s[i].cq = app.cq(255);
    s[i].qp = app.qp(pd, *s[i].cq, *s[i].cq);
    s[i].peer = target.qp(tpd, *tcq, *tcq);
    lab.connect(i, *s[i].qp, 2, *s[i].peer, p, uint8_t(i));  // SL i
    for (unsigned k = 0; k < kWrs; ++k) {
      vhca_send_wqe w = engine::test::send_wqe(
          k, {engine::test::sge(s[i].buf.data() + size_t(k) * kMsg, kMsg, s[i].mr.lkey)}, IBV_SEND_SIGNALED,
          IBV_WR_RDMA_WRITE);
      w.remote_addr = reinterpret_cast<uint64_t>(sink.data()) + (size_t(i) * kWrs + k) * kMsg;
      w.rkey = tmr.rkey;
      app.post_send(*s[i].qp, w);
    }
  }
  // Until the VL0 flow is done; then read what each VL got through the bottleneck.
  dp::Port& out = lab.switch_port_to(2);
  dp::PortSnapshot at_first_done{};
  lab.run_until([&] {
    for (unsigned i = 0; i < 2; ++i) {
      vhca_cqe e;
      while (lab.host(i).app->poll_cq(*s[i].cq, e)) {
        EXPECT_EQ(e.status, IBV_WC_SUCCESS);
        if (++s[i].done == kWrs && s[1 - i].done < kWrs) at_first_done = out.snapshot(lab.sched.now());
      }
    }
    return s[0].done == kWrs && s[1].done == kWrs;
  });
  ASSERT_EQ(s[0].done, kWrs);
  ASSERT_EQ(s[1].done, kWrs);
  const double vl0 = double(at_first_done.classes[0].xmit_bytes);
  const double vl1 = double(at_first_done.classes[1].xmit_bytes);
  std::printf("bottleneck when the first flow finished: VL0 %.0f KiB, VL1 %.0f KiB (%.2f : 1)\n", vl0 / 1024,
              vl1 / 1024, vl0 / vl1);
  EXPECT_NEAR(vl0 / vl1, 3.0, 0.3);
  const dp::PortSnapshot end = out.snapshot(lab.sched.now());
  EXPECT_EQ(end.port_xmit_discards, 0u);
  EXPECT_EQ(lab.host(0).hca->counters().retransmitted_packets + lab.host(1).hca->counters().retransmitted_packets,
            0u);
}

}  // namespace
}  // namespace vf::test
