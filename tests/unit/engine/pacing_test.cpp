// Per-QP pacing in virtual time: a path's static rate (IBA 9.11,
// ibv_ah_attr.static_rate) spaces a requester's packets by their time at that
// rate, exactly; without one the requester sends back to back. UD paces on
// each AH's rate; a value that is no ibv_rate is refused.
#include "device/engine/pacing.hpp"

#include "tests/unit/engine/harness.hpp"
#include "tests/unit/engine/ud_fixture.hpp"

namespace vf::engine::test {
namespace {


TEST(PacingMath, RatesAndPacketTimes) {
  EXPECT_EQ(static_rate_mbps(IBV_RATE_MAX), 0u);
  EXPECT_EQ(static_rate_mbps(IBV_RATE_2_5_GBPS), 2500u);
  EXPECT_EQ(static_rate_mbps(IBV_RATE_100_GBPS), 103125u);
  EXPECT_EQ(static_rate_mbps(IBV_RATE_600_GBPS), 637500u);
  EXPECT_EQ(static_rate_mbps(1), kBadRate);  // no ibv_rate has the value 1
  EXPECT_EQ(static_rate_mbps(23), kBadRate);
  EXPECT_EQ(packet_time_ns(1036, 2500), 3315u);  // 8288 bits at 2.5 Gb/s
  EXPECT_EQ(packet_time_ns(1036, 0), 0u);
}

class Pacing : public Pair {
 protected:
  // Ten 1 KiB packets of one SEND: the times each left the requester.
  std::vector<Nanos> send_ten_packets() {
    fill_pattern(buf_a.data(), 10240, 3);
    app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 10240, mr_b.lkey)}));
    app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), 10240, mr_a.lkey)}));
    auto rc = wait_cqes(*app_b, *cq_b, 1);
    EXPECT_EQ(rc.size(), 1u);
    if (!rc.empty()) {
      EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
    }
    EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 10240), 0);
    std::vector<Nanos> at;
    for (const Sent& s : sent_by(kLidA, false)) at.push_back(s.t);
    return at;
  }
};

TEST_F(Pacing, StaticRateSpacesEveryPacketByItsTime) {
  ConnParams p;
  p.static_rate = IBV_RATE_2_5_GBPS;
  setup(p);  // path MTU 1024: each packet is BTH + 1024 bytes
  const auto at = send_ten_packets();
  ASSERT_EQ(at.size(), 10u);
  const Nanos gap = packet_time_ns(vf::wire::kBthLen + 1024, 2500);
  for (size_t i = 1; i < at.size(); ++i) EXPECT_EQ(at[i] - at[i - 1], gap) << i;
  EXPECT_EQ(app_a->query(*qp_a).attr.ah_attr.static_rate, IBV_RATE_2_5_GBPS);
}

TEST_F(Pacing, WithoutAStaticRateTheBurstGoesAtOnce) {
  setup();
  const auto at = send_ten_packets();
  ASSERT_EQ(at.size(), 10u);
  for (size_t i = 1; i < at.size(); ++i) EXPECT_EQ(at[i], at[0]) << i;
}

TEST_F(Pacing, AValueThatIsNoRateIsRefused) {
  ConnParams p;
  setup(p);
  auto [qa, qb] = another_pair();
  // RTS -> RTS may not carry an AV; a fresh QP's RTR does.
  auto q = app_a->qp(pd_a, *cq_a, *cq_a);
  ASSERT_EQ(app_a->modify(*q, init_attr(), kInitMask), 0);
  p.static_rate = 1;
  EXPECT_EQ(app_a->modify(*q, rtr_attr(qb->qpn, kLidB, 0, p), kRtrMask), EINVAL);
  p.static_rate = IBV_RATE_10_GBPS;
  EXPECT_EQ(app_a->modify(*q, rtr_attr(qb->qpn, kLidB, 0, p), kRtrMask), 0);
}

using UdPacing = UdPair;

TEST_F(UdPacing, EachAhPacesAtItsOwnRate) {
  build(false);
  ibv_ah_attr slow = ib_ah(kLidB, 0);
  slow.static_rate = IBV_RATE_5_GBPS;
  uint32_t ah = 0;
  ASSERT_EQ(create_ah(*app_a, pd_a, slow, ah), 0);
  slow.static_rate = 23;
  uint32_t bad = 0;
  EXPECT_EQ(create_ah(*app_a, pd_a, slow, bad), EINVAL);
  for (uint64_t id = 1; id <= 4; ++id) {
    post_b(id);
    send_ud(id, 500, ah);
  }
  run_for(1'000'000);
  ASSERT_EQ(net->log.size(), 4u);
  // BTH + DETH + 500 bytes at 5 Gb/s.
  const Nanos gap = packet_time_ns(vf::wire::kBthLen + vf::wire::kDethLen + 500, 5000);
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(net->log[i].t - net->log[i - 1].t, gap) << i;
  EXPECT_EQ(app_b->drain(*cq_b).size(), 4u);
}

}  // namespace
}  // namespace vf::engine::test
