// Loopback inside a vHCA, in virtual time: two QPs of one vHCA, and a QP
// connected to itself, exchange RDMA WRITEs over both link layers. The HCA
// turns the packets round itself: they never reach its port's wire or the
// switch, and show in loopback_pkts instead.
#include <gtest/gtest.h>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

using engine::test::ConnParams;

LabConfig lab_config(LinkLayer ll) {
  LabConfig c;
  c.link_layer = ll;
  return c;
}

void expect_never_on_the_wire(FabricLab& lab) {
  const dp::HcaPortSnapshot h = lab.host(0).port->snapshot(lab.sched.now());
  EXPECT_GT(h.loopback_pkts, 0u);
  EXPECT_EQ(h.loopback_drops, 0u);
  EXPECT_EQ(h.port.port_xmit_pkts, 0u) << "looped-back packets never reach the port";
  EXPECT_EQ(h.port.port_rcv_pkts, 0u);
  EXPECT_EQ(lab.switch_port_to(0).snapshot(0).port_rcv_pkts, 0u) << "nor the switch";
}

class Loopback : public ::testing::TestWithParam<LinkLayer> {};

TEST_P(Loopback, TwoQpsOfOneVhcaTalkWithoutTheSwitch) {
  FabricLab lab(lab_config(GetParam()));
  WriteFlow f(lab, 0, 0, 64 * 1024, 16);
  ASSERT_TRUE(lab.run_until([&] { return f.poll(); }, lab.sched.now() + 100'000'000));
  EXPECT_EQ(f.ok, 16u);
  EXPECT_EQ(f.failed, 0u);
  EXPECT_TRUE(f.delivered());
  expect_never_on_the_wire(lab);
}

TEST_P(Loopback, AQpConnectedToItselfWritesIntoItsOwnMemory) {
  using namespace engine::test;
  FabricLab lab(lab_config(GetParam()));
  auto& a = *lab.host(0).app;
  const uint32_t pd = a.alloc_pd();
  std::vector<uint8_t> buf(8192, 0);
  for (size_t i = 0; i < 4096; ++i) buf[i] = uint8_t(i * 13);
  const auto mr = a.mr(pd, buf.data(), buf.size());
  auto cq = a.cq();
  auto qp = a.qp(pd, *cq, *cq);
  ConnParams p;
  ASSERT_EQ(a.modify(*qp, init_attr(p.access), kInitMask), 0);
  ibv_qp_attr rtr = rtr_attr(qp->qpn, 0, p.psn_a, p);  // its own QPN, and its own PSN
  rtr.ah_attr = lab.av_to(0);
  ASSERT_EQ(a.modify(*qp, rtr, kRtrMask), 0);
  ASSERT_EQ(a.modify(*qp, rts_attr(p.psn_a, p), kRtsMask), 0);
  vhca_send_wqe w = send_wqe(1, {sge(buf.data(), 4096, mr.lkey)}, IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE);
  w.remote_addr = reinterpret_cast<uint64_t>(buf.data() + 4096);
  w.rkey = mr.rkey;
  a.post_send(*qp, w);
  vhca_cqe e{};
  ASSERT_TRUE(lab.run_until([&] { return a.poll_cq(*cq, e); }, lab.sched.now() + 10'000'000));
  EXPECT_EQ(e.status, IBV_WC_SUCCESS);
  EXPECT_TRUE(std::equal(buf.begin(), buf.begin() + 4096, buf.begin() + 4096));
  expect_never_on_the_wire(lab);
}

INSTANTIATE_TEST_SUITE_P(LinkLayers, Loopback, ::testing::Values(LinkLayer::kInfiniBand, LinkLayer::kEthernet),
                         [](const auto& p) { return p.param == LinkLayer::kInfiniBand ? "Ib" : "Roce"; });

}  // namespace
}  // namespace vf::test
