// Partitions (IBA 10.9): a QP's P_Key index names an entry of its port's
// P_Key table, every packet it sends carries that P_Key, and a packet whose
// P_Key does not match its destination QP's is dropped and counted -- which
// the sender only sees as its retries running out. In virtual time.
#include "tests/unit/engine/harness.hpp"

namespace vf::engine::test {
namespace {

// Both ports: the default partition, partition 1 as full and limited member,
// an invalid (empty) entry, partition 2.
constexpr uint16_t kTable[] = {0xFFFF, 0x8001, 0x0001, 0x0000, 0x8002};
constexpr uint16_t kDefault = 0, kFull1 = 1, kLimited1 = 2, kEmpty = 3, kFull2 = 4;

class Partitions : public Pair {
 protected:
  void SetUp() override {
    reconfigure([](HcaConfig&, PortInfo& p) {
      p.pkeys.assign(std::begin(kTable), std::end(kTable));
      p.pkey_tbl_len = 16;
    });
  }
  // A fresh connection with these P_Key indexes; the retry budget is small
  // so a dropped partition ends quickly.
  ConnParams with(uint16_t a, uint16_t b) {
    ConnParams p;
    p.pkey_index_a = a;
    p.pkey_index_b = b;
    p.timeout = 8;  // 1 ms
    p.retry_cnt = 1;
    return p;
  }
  // One SEND from A to B on a new pair: its send completion status.
  ibv_wc_status send_status(uint16_t a, uint16_t b) {
    setup(with(a, b));
    app_b->post_recv(*qp_b, recv_wqe(7, {sge(buf_b.data(), 4096, mr_b.lkey)}));
    fill_pattern(buf_a.data(), 512, 7);
    app_a->post_send(*qp_a, send_wqe(7, {sge(buf_a.data(), 512, mr_a.lkey)}));
    vhca_cqe e{};
    run_until([&] { return app_a->poll_cq(*cq_a, e); }, sched.now() + 1'000'000'000ull);
    return ibv_wc_status(e.status);
  }
  uint32_t bad_pkey_cntr(Hca& h, App& app) {
    vhca_query_port_req q{};
    q.port_num = 1;
    vhca_query_port_rsp r{};
    EXPECT_EQ(h.query_port(app.id(), q, r), 0);
    return r.attr.bad_pkey_cntr;
  }
};

TEST_F(Partitions, TheTableIsWhatQueryDeviceAndQueryPortReport) {
  setup();
  vhca_query_port_req q{};
  q.port_num = 1;
  vhca_query_port_rsp r{};
  ASSERT_EQ(hca_a.query_port(app_a->id(), q, r), 0);
  EXPECT_EQ(r.attr.pkey_tbl_len, 16);
  vhca_query_device_rsp d{};
  ASSERT_EQ(hca_a.query_device(app_a->id(), d), 0);
  EXPECT_EQ(d.attr.max_pkeys, 16);
}

TEST_F(Partitions, APkeyIndexMustNameAValidEntry) {
  setup();
  auto q = app_a->qp(pd_a, *cq_a, *cq_a);
  EXPECT_EQ(app_a->modify(*q, init_attr(IBV_ACCESS_REMOTE_WRITE, kEmpty), kInitMask), EINVAL);
  EXPECT_EQ(app_a->modify(*q, init_attr(IBV_ACCESS_REMOTE_WRITE, 5), kInitMask), EINVAL) << "past the entries";
  EXPECT_EQ(app_a->modify(*q, init_attr(IBV_ACCESS_REMOTE_WRITE, 200), kInitMask), EINVAL);
  EXPECT_EQ(app_a->query(*q).attr.qp_state, IBV_QPS_RESET) << "a refused modify changes nothing";
  ASSERT_EQ(app_a->modify(*q, init_attr(IBV_ACCESS_REMOTE_WRITE, kFull2), kInitMask), 0);
  EXPECT_EQ(app_a->query(*q).attr.pkey_index, kFull2);
}

TEST_F(Partitions, MembersOfOnePartitionTalk) {
  EXPECT_EQ(send_status(kFull1, kFull1), IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 512), 0);
  EXPECT_EQ(hca_b.counters().pkey_violations, 0u);
}

TEST_F(Partitions, AFullAndALimitedMemberTalk) {
  EXPECT_EQ(send_status(kFull1, kLimited1), IBV_WC_SUCCESS);
  EXPECT_TRUE(exchange_ok(*qp_a, *qp_b)) << "a multi-packet message too";
  EXPECT_EQ(hca_a.counters().pkey_violations + hca_b.counters().pkey_violations, 0u);
}

TEST_F(Partitions, TwoLimitedMembersCannotTalk) {
  EXPECT_EQ(send_status(kLimited1, kLimited1), IBV_WC_RETRY_EXC_ERR);
  EXPECT_GE(hca_b.counters().pkey_violations, 2u) << "the request and its retry";
  EXPECT_EQ(bad_pkey_cntr(hca_b, *app_b), hca_b.counters().pkey_violations);
}

TEST_F(Partitions, AnotherPartitionIsDroppedAndCountedNotAnswered) {
  EXPECT_EQ(send_status(kFull1, kFull2), IBV_WC_RETRY_EXC_ERR);
  EXPECT_GE(hca_b.counters().pkey_violations, 2u);
  EXPECT_EQ(hca_a.counters().pkey_violations, 0u) << "B never answered";
  EXPECT_EQ(hca_b.counters().acks_sent + hca_b.counters().other_naks_sent, 0u);
}

TEST_F(Partitions, TheDefaultPartitionIsAPartitionLikeAnyOther) {
  // The BTH carries the QP's own P_Key, not the default one.
  EXPECT_EQ(send_status(kDefault, kFull1), IBV_WC_RETRY_EXC_ERR);
  EXPECT_GE(hca_b.counters().pkey_violations, 2u);
}

}  // namespace
}  // namespace vf::engine::test
