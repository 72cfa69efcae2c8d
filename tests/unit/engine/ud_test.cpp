// UD QPs: state transitions and their masks, datagrams with and without a
// GRH and on RoCEv2 (the bytes of the receive buffer's GRH area), immediate
// data, Q_Keys (mismatch dropped, the controlled-Q_Key bit), one-packet
// messages (> MTU -> LOC_LEN_ERR and SQE), receives without a WQE or with too
// small a buffer, SRQs, and batched placement.
#include "tests/unit/engine/ud_fixture.hpp"

namespace vf::engine::test {
namespace {

using vf::wire::opcode;
using vf::wire::Transport;

class Ud : public UdPair {};

TEST_F(Ud, TransitionsAndMasks) {
  build(false);
  AppQp q;
  ASSERT_EQ(create_qp_ex(*app_a, pd_a, *cq_a, *cq_a, IBV_QPT_UD, 0, q), 0);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qkey = 0xABCD;
  constexpr uint32_t kInit = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
  EXPECT_EQ(app_a->modify(q, a, kInit), EINVAL);  // Q_Key required
  EXPECT_EQ(app_a->modify(q, a, kInit | IBV_QP_QKEY | IBV_QP_ACCESS_FLAGS), EINVAL);  // not for UD
  ASSERT_EQ(app_a->modify(q, a, kInit | IBV_QP_QKEY), 0);
  EXPECT_EQ(app_a->query(q).attr.qkey, 0xABCDu);
  EXPECT_EQ(app_a->query(q).init.qp_type, unsigned(IBV_QPT_UD));
  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTR;
  a.ah_attr = ib_ah(kLidB);
  a.path_mtu = IBV_MTU_1024;
  EXPECT_EQ(app_a->modify(q, a, IBV_QP_STATE | IBV_QP_AV), EINVAL);       // connected attrs
  EXPECT_EQ(app_a->modify(q, a, IBV_QP_STATE | IBV_QP_PATH_MTU), EINVAL);
  ASSERT_EQ(app_a->modify(q, a, IBV_QP_STATE), 0);
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 9;
  a.timeout = 14;
  EXPECT_EQ(app_a->modify(q, a, IBV_QP_STATE), EINVAL);  // SQ_PSN required
  EXPECT_EQ(app_a->modify(q, a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT), EINVAL);
  ASSERT_EQ(app_a->modify(q, a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
  a.qkey = 0x5555;
  ASSERT_EQ(app_a->modify(q, a, IBV_QP_STATE | IBV_QP_QKEY), 0);  // RTS -> RTS
  EXPECT_EQ(app_a->query(q).attr.qkey, 0x5555u);
  EXPECT_EQ(app_a->query(q).attr.qp_state, IBV_QPS_RTS);
}

TEST_F(Ud, SendRecvIbWithoutGrh) {
  build(false);
  const uint32_t ah = ah_to_b(false, 5);
  post_b(1);
  send_ud(1, 300, ah);
  run_for(100'000);
  auto sa = app_a->drain(*cq_a);
  ASSERT_EQ(sa.size(), 1u);
  EXPECT_EQ(sa[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(sa[0].opcode, unsigned(IBV_WC_SEND));
  EXPECT_EQ(sa[0].byte_len, 300u);
  auto rb = app_b->drain(*cq_b);
  ASSERT_EQ(rb.size(), 1u);
  const vhca_cqe& c = rb[0];
  EXPECT_EQ(c.status, IBV_WC_SUCCESS);
  EXPECT_EQ(c.opcode, unsigned(IBV_WC_RECV));
  EXPECT_EQ(c.wr_id, 1u);
  EXPECT_EQ(c.byte_len, 340u);  // payload + the 40-byte GRH area
  EXPECT_EQ(c.qp_num, qp_b->qpn);
  EXPECT_EQ(c.src_qp, qp_a->qpn);
  EXPECT_EQ(c.slid, kLidA);
  EXPECT_EQ(c.sl, 5);
  EXPECT_EQ(c.pkey_index, 0);
  EXPECT_EQ(c.wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM), 0u);
  EXPECT_TRUE(payload_ok(1, 300));
  for (int i = 0; i < 40; ++i) ASSERT_EQ(rbuf(1)[i], 0xEE) << "GRH area written without a GRH";
  EXPECT_EQ(rbuf(1)[340], 0xEE);  // nothing past the datagram
  // One UD SEND Only packet, no ACK either way.
  ASSERT_EQ(net->log.size(), 1u);
  EXPECT_EQ(net->log[0].opcode, opcode(Transport::kUD, vf::wire::kSendOnly));
  EXPECT_FALSE(net->log[0].ackreq);
  EXPECT_EQ(net->log[0].dqpn, qp_b->qpn);
}

TEST_F(Ud, SendWithImmAndGrhOnIb) {
  build(false);
  const uint32_t ah = ah_to_b(true);
  post_b(2);
  send_ud(2, 1000, ah, kQkeyB, IBV_WR_SEND_WITH_IMM, htobe32(0xCAFEF00D));
  run_for(100'000);
  auto rb = app_b->drain(*cq_b);
  ASSERT_EQ(rb.size(), 1u);
  const vhca_cqe& c = rb[0];
  EXPECT_EQ(c.status, IBV_WC_SUCCESS);
  EXPECT_EQ(c.byte_len, 1040u);
  EXPECT_EQ(c.wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM), unsigned(IBV_WC_GRH | IBV_WC_WITH_IMM));
  EXPECT_EQ(c.imm_data, htobe32(0xCAFEF00D));
  EXPECT_EQ(c.src_qp, qp_a->qpn);
  EXPECT_TRUE(payload_ok(2, 1000));
  const uint8_t* g = rbuf(2);
  EXPECT_EQ(g[0] >> 4, 6);                                   // IP version 6 layout
  EXPECT_EQ(((g[0] & 0xF) << 4) | (g[1] >> 4), 0x28);       // traffic class
  EXPECT_EQ(((g[1] & 0xF) << 16) | (g[2] << 8) | g[3], 0x12345);  // flow label
  EXPECT_EQ(g[6], 0x1B);                                     // next header: IBA
  EXPECT_EQ(g[7], 33);                                       // hop limit
  EXPECT_EQ(std::memcmp(g + 8, gid_a.raw, 16), 0);           // SGID: the sender
  EXPECT_EQ(std::memcmp(g + 24, gid_b.raw, 16), 0);          // DGID
  auto sa = app_a->drain(*cq_a);
  ASSERT_EQ(sa.size(), 1u);
  EXPECT_EQ(sa[0].status, IBV_WC_SUCCESS);
}

TEST_F(Ud, RoceIpv4GrhAreaHoldsTheIpv4Header) {
  build(true);
  const uint32_t ah = ah_to_b();
  post_b(3);
  send_ud(3, 200, ah);
  run_for(100'000);
  auto rb = app_b->drain(*cq_b);
  ASSERT_EQ(rb.size(), 1u);
  const vhca_cqe& c = rb[0];
  EXPECT_EQ(c.status, IBV_WC_SUCCESS);
  EXPECT_EQ(c.byte_len, 240u);
  EXPECT_TRUE(c.wc_flags & IBV_WC_GRH);
  EXPECT_TRUE(payload_ok(3, 200));
  const uint8_t* g = rbuf(3);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(g[i], 0) << i;  // not an IPv6 header (version != 6)
  const uint8_t* ip = g + 20;
  EXPECT_EQ(ip[0], 0x45);  // what ibv_init_ah_from_wc looks for
  EXPECT_EQ(ip[1], 0x28);  // TOS
  EXPECT_EQ(ip[8], 33);    // TTL = hop limit
  EXPECT_EQ(ip[9], 17);    // UDP
  EXPECT_EQ(std::memcmp(ip + 12, gid_a.raw + 12, 4), 0);  // source address
  EXPECT_EQ(std::memcmp(ip + 16, gid_b.raw + 12, 4), 0);
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += uint32_t(ip[i]) << 8 | ip[i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  EXPECT_EQ(sum, 0xFFFFu);  // header checksum valid
}

TEST_F(Ud, RoceAhNeedsGrh) {
  build(true);
  uint32_t h = 0;
  EXPECT_EQ(create_ah(*app_a, pd_a, ib_ah(kLidB), h), EINVAL);
  ibv_ah_attr a = global_ah(7, gid_b);  // the LID is ignored on RoCE
  EXPECT_EQ(create_ah(*app_a, pd_a, a, h), 0);
}

TEST_F(Ud, QkeyMismatchIsDroppedAndCounted) {
  build(false);
  const uint32_t ah = ah_to_b();
  post_b(4);
  const uint64_t dropped = hca_b->counters().rx_dropped;
  send_ud(4, 100, ah, kQkeyB + 1);
  run_for(100'000);
  EXPECT_TRUE(app_b->drain(*cq_b).empty());
  EXPECT_EQ(hca_b->counters().qkey_violations, 1u);
  EXPECT_EQ(hca_b->counters().rx_dropped, dropped + 1);
  vhca_query_port_req pq{};
  pq.port_num = 1;
  vhca_query_port_rsp pr{};
  ASSERT_EQ(hca_b->query_port(app_b->id(), pq, pr), 0);
  EXPECT_EQ(pr.attr.qkey_viol_cntr, 1u);
  // The sender cannot tell: its WQE completed when the packet left.
  auto sa = app_a->drain(*cq_a);
  ASSERT_EQ(sa.size(), 1u);
  EXPECT_EQ(sa[0].status, IBV_WC_SUCCESS);
  // The receive WQE is still there for the right Q_Key.
  send_ud(5, 100, ah);
  run_for(100'000);
  auto rb = app_b->drain(*cq_b);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].wr_id, 4u);
  EXPECT_EQ(rb[0].status, IBV_WC_SUCCESS);
}

TEST_F(Ud, ControlledQkeyBitUsesTheQpsOwnQkey) {
  build(false);
  const uint32_t ah = ah_to_b();
  post_b(6);
  post_b(7);
  // A's own Q_Key (kQkeyA) is not B's: the high bit makes A use it -> dropped.
  send_ud(6, 64, ah, 0x80000000u | kQkeyB);
  run_for(100'000);
  EXPECT_TRUE(app_b->drain(*cq_b).empty());
  EXPECT_EQ(hca_b->counters().qkey_violations, 1u);
  // With A's Q_Key set to B's, the same WR gets through.
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.qkey = kQkeyB;
  ASSERT_EQ(app_a->modify(*qp_a, a, IBV_QP_STATE | IBV_QP_QKEY), 0);
  send_ud(7, 64, ah, 0x80000000u);
  run_for(100'000);
  auto rb = app_b->drain(*cq_b);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rb[0].wr_id, 6u);
}

// uverbs' rule: only CAP_NET_RAW may give a QP a controlled Q_Key (QP1's
// 0x80010000 among them), or any app could forge the CM's datagrams.
TEST_F(Ud, ControlledQkeysNeedThePrivilegeTheDaemonGrants) {
  build(false);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.qkey = 0x80010000u;
  EXPECT_EQ(app_a->modify(*qp_a, a, IBV_QP_STATE | IBV_QP_QKEY), EPERM);
  EXPECT_EQ(app_a->query(*qp_a).attr.qkey, kQkeyA) << "a refused modify changes nothing";
  hca_a->allow_controlled_qkeys(1);
  EXPECT_EQ(app_a->modify(*qp_a, a, IBV_QP_STATE | IBV_QP_QKEY), 0);
  EXPECT_EQ(app_a->query(*qp_a).attr.qkey, 0x80010000u);
  a.qkey = 0x7FFFFFFFu;  // the high bit clear: anyone's
  EXPECT_EQ(app_b->modify(*qp_b, a, IBV_QP_STATE | IBV_QP_QKEY), 0);
}

TEST_F(Ud, MessageOverMtuIsLocalLengthErrorAndSqe) {
  build(false, IBV_MTU_1024);
  const uint32_t ah = ah_to_b();
  post_b(10);  // for the datagram that fits, below
  send_ud(8, 1025, ah);
  send_ud(9, 100, ah);  // behind the failed WQE: flushed
  run_for(100'000);
  auto sa = app_a->drain(*cq_a);
  ASSERT_EQ(sa.size(), 2u);
  EXPECT_EQ(sa[0].wr_id, 8u);
  EXPECT_EQ(sa[0].status, IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(sa[1].wr_id, 9u);
  EXPECT_EQ(sa[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(app_a->query(*qp_a).attr.qp_state, IBV_QPS_SQE);
  EXPECT_TRUE(net->log.empty());
  // Posted while in SQE and not yet seen by the poll loop: still flushed,
  // even when the app moves the QP back to RTS first.
  send_ud(11, 100, ah);
  ibv_qp_attr back{};
  back.qp_state = IBV_QPS_RTS;
  ASSERT_EQ(app_a->modify(*qp_a, back, IBV_QP_STATE), 0);
  run_for(100'000);
  sa = app_a->drain(*cq_a);
  ASSERT_EQ(sa.size(), 1u);
  EXPECT_EQ(sa[0].wr_id, 11u);
  EXPECT_EQ(sa[0].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_TRUE(net->log.empty());
  // Back in RTS: sending works again; exactly the MTU fits.
  send_ud(10, 1024, ah);
  run_for(100'000);
  sa = app_a->drain(*cq_a);
  ASSERT_EQ(sa.size(), 1u);
  EXPECT_EQ(sa[0].status, IBV_WC_SUCCESS);
  auto rb = app_b->drain(*cq_b);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].wr_id, 10u);
  EXPECT_EQ(rb[0].byte_len, 1064u);
  EXPECT_TRUE(payload_ok(10, 1024));
}

TEST_F(Ud, SqeKeepsReceiving) {
  build(false);
  const uint32_t ah = ah_to_b();
  // B's SQ fails (bad opcode); it still receives.
  app_b->post_send(*qp_b, ud_wqe(1, {}, 0, qp_a->qpn, kQkeyA, IBV_WR_RDMA_WRITE));
  post_b(11);
  run_for(100'000);
  auto sb = app_b->drain(*cq_b);
  ASSERT_EQ(sb.size(), 1u);
  EXPECT_EQ(sb[0].status, IBV_WC_LOC_QP_OP_ERR);
  EXPECT_EQ(app_b->query(*qp_b).attr.qp_state, IBV_QPS_SQE);
  send_ud(11, 10, ah);
  run_for(100'000);
  auto rb = app_b->drain(*cq_b);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].status, IBV_WC_SUCCESS);
}

TEST_F(Ud, NoReceiveWqeDropsAndCounts) {
  build(false);
  const uint32_t ah = ah_to_b();
  send_ud(12, 100, ah);
  run_for(100'000);
  EXPECT_TRUE(app_b->drain(*cq_b).empty());
  EXPECT_EQ(hca_b->counters().ud_no_wqe_drops, 1u);
  EXPECT_EQ(hca_b->counters().rnr_naks_sent, 0u);
  EXPECT_EQ(net->log.size(), 1u);  // no NAK of any kind
  EXPECT_EQ(app_b->query(*qp_b).attr.qp_state, IBV_QPS_RTS);
  post_b(13);
  send_ud(13, 100, ah);
  run_for(100'000);
  auto rb = app_b->drain(*cq_b);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].status, IBV_WC_SUCCESS);
  EXPECT_TRUE(payload_ok(13, 100));
}

TEST_F(Ud, TooSmallBufferIsLocalLengthErrorQpStaysUsable) {
  build(false);
  const uint32_t ah = ah_to_b();
  post_b(14, 40 + 99);  // one byte short
  post_b(15);
  send_ud(14, 100, ah);
  send_ud(15, 100, ah);
  run_for(100'000);
  auto rb = app_b->drain(*cq_b);
  ASSERT_EQ(rb.size(), 2u);
  EXPECT_EQ(rb[0].wr_id, 14u);
  EXPECT_EQ(rb[0].status, IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(rb[1].wr_id, 15u);
  EXPECT_EQ(rb[1].status, IBV_WC_SUCCESS);
  EXPECT_TRUE(payload_ok(15, 100));
  EXPECT_EQ(rbuf(14)[40], 0xEE);  // nothing written
  EXPECT_EQ(app_b->query(*qp_b).attr.qp_state, IBV_QPS_RTS);
}

TEST_F(Ud, BadReceiveKeyIsProtectionErrorAndQpFails) {
  build(false);
  const uint32_t ah = ah_to_b();
  app_b->post_recv(*qp_b, recv_wqe(16, {sge(rbuf(16), 4096, mr_b.lkey ^ 0x100)}));
  send_ud(16, 100, ah);
  run_for(100'000);
  auto rb = app_b->drain(*cq_b);
  ASSERT_GE(rb.size(), 1u);
  EXPECT_EQ(rb[0].wr_id, 16u);
  EXPECT_EQ(rb[0].status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(app_b->query(*qp_b).attr.qp_state, IBV_QPS_ERR);
}

TEST_F(Ud, WrongOpcodeAndForeignAhFailTheWqe) {
  build(false);
  const uint32_t ah = ah_to_b();
  struct Case {
    uint8_t opcode;
    uint32_t ah;
    ibv_wc_status want;
  };
  // Another PD of the same client, and an AH of another client of vhca_a.
  const uint32_t pd2 = app_a->alloc_pd();
  uint32_t ah_pd2 = 0, ah_other = 0;
  ASSERT_EQ(create_ah(*app_a, pd2, ib_ah(kLidB), ah_pd2), 0);
  App other(*hca_a, 9);
  const uint32_t opd = other.alloc_pd();
  ASSERT_EQ(create_ah(other, opd, ib_ah(kLidB), ah_other), 0);
  const Case cases[] = {
      {IBV_WR_RDMA_WRITE, ah, IBV_WC_LOC_QP_OP_ERR},
      {IBV_WR_RDMA_READ, ah, IBV_WC_LOC_QP_OP_ERR},
      {IBV_WR_ATOMIC_FETCH_AND_ADD, ah, IBV_WC_LOC_QP_OP_ERR},
      {IBV_WR_SEND, ah_other, IBV_WC_LOC_QP_OP_ERR},  // not this client's AH
      {IBV_WR_SEND, 4242, IBV_WC_LOC_QP_OP_ERR},      // no such AH
      {IBV_WR_SEND, ah_pd2, IBV_WC_LOC_PROT_ERR},     // the QP's client, another PD
  };
  unsigned i = 0;
  for (const Case& c : cases) {
    send_ud(20 + i, 64, c.ah, kQkeyB, c.opcode);
    run_for(100'000);
    auto sa = app_a->drain(*cq_a);
    ASSERT_EQ(sa.size(), 1u) << "case " << i;
    EXPECT_EQ(sa[0].status, unsigned(c.want)) << "case " << i;
    EXPECT_EQ(app_a->query(*qp_a).attr.qp_state, IBV_QPS_SQE);
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTS;
    ASSERT_EQ(app_a->modify(*qp_a, a, IBV_QP_STATE), 0);
    ++i;
  }
  EXPECT_TRUE(net->log.empty());
  // A destroyed AH is refused too.
  ASSERT_EQ(destroy_ah(*app_a, ah), 0);
  send_ud(30, 64, ah);
  run_for(100'000);
  auto sa = app_a->drain(*cq_a);
  ASSERT_EQ(sa.size(), 1u);
  EXPECT_EQ(sa[0].status, IBV_WC_LOC_QP_OP_ERR);
}

TEST_F(Ud, ReceivesThroughAnSrq) {
  build(false);
  // B: an SRQ shared by two UD QPs.
  AppSrq s;
  ASSERT_EQ(create_srq(*app_b, pd_b, 8, 1, s), 0);
  AppQp b1, b2;
  ASSERT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_UD, s.handle, b1), 0);
  ASSERT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_UD, s.handle, b2), 0);
  ud_up(*app_b, b1, kQkeyB);
  ud_up(*app_b, b2, kQkeyB);
  for (uint64_t id = 1; id <= 4; ++id)
    post_srq(s, recv_wqe(id, {sge(rbuf(id), 4096, mr_b.lkey)}));
  const uint32_t ah = ah_to_b();
  const uint32_t dst[4] = {b2.qpn, b1.qpn, b1.qpn, b2.qpn};
  for (uint64_t i = 0; i < 4; ++i) send_ud(50 + i, 100 + uint32_t(i), ah, kQkeyB, IBV_WR_SEND, 0, dst[i]);
  run_for(100'000);
  auto rb = app_b->drain(*cq_b);
  ASSERT_EQ(rb.size(), 4u);
  for (unsigned i = 0; i < 4; ++i) {
    EXPECT_EQ(rb[i].status, IBV_WC_SUCCESS);
    EXPECT_EQ(rb[i].wr_id, i + 1);  // the SRQ's order, whichever QP
    EXPECT_EQ(rb[i].qp_num, dst[i]);
    EXPECT_EQ(rb[i].byte_len, 140 + i);
  }
  EXPECT_EQ(srq_consumer(s), 4u);
  // No WQE left: dropped and counted, not an error.
  send_ud(60, 10, ah, kQkeyB, IBV_WR_SEND, 0, b1.qpn);
  run_for(100'000);
  EXPECT_TRUE(app_b->drain(*cq_b).empty());
  EXPECT_EQ(hca_b->counters().ud_no_wqe_drops, 1u);
}

TEST_F(Ud, BurstIsPlacedWithOneWrite) {
  build(false);
  const uint32_t ah = ah_to_b();
  for (uint64_t id = 1; id <= 10; ++id) post_b(id);
  const uint64_t calls = hca_b->counters().dma_calls;
  for (uint64_t id = 1; id <= 10; ++id) send_ud(id, 500, ah);
  run_for(100'000);
  auto rb = app_b->drain(*cq_b);
  ASSERT_EQ(rb.size(), 10u);
  for (unsigned i = 0; i < 10; ++i) {
    EXPECT_EQ(rb[i].wr_id, i + 1);
    EXPECT_TRUE(payload_ok(i + 1, 500));
  }
  EXPECT_EQ(hca_b->counters().dma_calls, calls + 1);
}

TEST_F(Ud, ReceiveOnlyFromRtrAndNotOnRc) {
  build(false);
  const uint32_t ah = ah_to_b();
  // A UD datagram for an RC QP's number is dropped.
  auto rc = std::make_unique<AppQp>();
  ASSERT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_RC, 0, *rc), 0);
  const uint64_t dropped = hca_b->counters().rx_dropped;
  send_ud(70, 10, ah, kQkeyB, IBV_WR_SEND, 0, rc->qpn);
  // And one for a UD QP still in INIT.
  AppQp init;
  ASSERT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_UD, 0, init), 0);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qkey = kQkeyB;
  ASSERT_EQ(app_b->modify(init, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
  app_b->post_recv(init, recv_wqe(71, {sge(rbuf(71), 4096, mr_b.lkey)}));
  send_ud(71, 10, ah, kQkeyB, IBV_WR_SEND, 0, init.qpn);
  run_for(100'000);
  EXPECT_TRUE(app_b->drain(*cq_b).empty());
  EXPECT_EQ(hca_b->counters().rx_dropped, dropped + 2);
}

}  // namespace
}  // namespace vf::engine::test
