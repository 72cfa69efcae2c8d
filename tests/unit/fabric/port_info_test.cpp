// A port's attributes live in one record, the HcaPort's PortInfo: when its
// owner changes the state or the LID (as an operator or a subnet manager
// does), the engine's query_port reports the new values at once and the
// frames follow -- nothing holds a copy.
#include <gtest/gtest.h>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

ibv_port_attr query(LabHost& h) {
  vhca_query_port_req q{};
  q.port_num = 1;
  vhca_query_port_rsp r{};
  EXPECT_EQ(h.hca->query_port(h.app->id(), q, r), 0);
  return r.attr;
}

TEST(PortInfo, QueryPortReportsTheLiveRecord) {
  FabricLab lab(LabConfig{});
  LabHost& h = lab.host(0);
  ibv_port_attr a = query(h);
  EXPECT_EQ(a.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(a.phys_state, 5);
  EXPECT_EQ(a.lid, 1);
  EXPECT_EQ(a.active_mtu, IBV_MTU_4096);

  h.port->set_state(PortState::kDown, PhysState::kDisabled);
  a = query(h);
  EXPECT_EQ(a.state, IBV_PORT_DOWN);
  EXPECT_EQ(a.phys_state, 3);
  EXPECT_FALSE(h.port->passes_data());

  h.port->set_state(PortState::kActive, PhysState::kLinkUp);
  h.port->set_lid(0x21, 1);
  a = query(h);
  EXPECT_EQ(a.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(a.lid, 0x21);
  EXPECT_EQ(a.lmc, 1);
}

// With its LID changed (and the switch told, as an SM would), the host is
// reached at the new LID and its frames carry the new SLID: RC traffic
// between it and a peer connected to the new LID completes.
TEST(PortInfo, TrafficFollowsALidChange) {
  FabricLab lab(LabConfig{});
  lab.host(1).port->set_lid(0x40);
  lab.fabric.set_lft("sw0", 0x40, 2);
  auto& a = *lab.host(0).app;
  auto& b = *lab.host(1).app;
  const uint32_t pda = a.alloc_pd(), pdb = b.alloc_pd();
  std::vector<uint8_t> src(4096, 0x3C), dst(4096, 0);
  const auto mra = a.mr(pda, src.data(), src.size());
  const auto mrb = b.mr(pdb, dst.data(), dst.size());
  auto cqa = a.cq(), cqb = b.cq();
  auto qa = a.qp(pda, *cqa, *cqa), qb = b.qp(pdb, *cqb, *cqb);
  // The lab's av_to() uses the LIDs it assigned; connect by hand to 0x40.
  using namespace engine::test;
  ConnParams p;
  ASSERT_EQ(a.modify(*qa, init_attr(p.access), kInitMask), 0);
  ASSERT_EQ(b.modify(*qb, init_attr(p.access), kInitMask), 0);
  ASSERT_EQ(a.modify(*qa, rtr_attr(qb->qpn, 0x40, p.psn_b, p), kRtrMask), 0);
  ASSERT_EQ(b.modify(*qb, rtr_attr(qa->qpn, lab.host(0).lid, p.psn_a, p), kRtrMask), 0);
  ASSERT_EQ(a.modify(*qa, rts_attr(p.psn_a, p), kRtsMask), 0);
  ASSERT_EQ(b.modify(*qb, rts_attr(p.psn_b, p), kRtsMask), 0);
  vhca_send_wqe w = send_wqe(1, {sge(src.data(), 4096, mra.lkey)}, IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE);
  w.remote_addr = reinterpret_cast<uint64_t>(dst.data());
  w.rkey = mrb.rkey;
  a.post_send(*qa, w);
  vhca_cqe e{};
  ASSERT_TRUE(lab.run_until([&] { return a.poll_cq(*cqa, e); }, 1'000'000'000));
  EXPECT_EQ(e.status, IBV_WC_SUCCESS);
  EXPECT_EQ(dst, src);
  // b's ACKs left with SLID 0x40, which a's QP accepts only because it
  // expects its peer there.
  EXPECT_EQ(lab.host(0).hca->counters().rx_dropped, 0u);
}

}  // namespace
}  // namespace vf::test
