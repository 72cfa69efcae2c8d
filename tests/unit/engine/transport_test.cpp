// RC transport: SEND/RECV data paths, segmentation, PSNs, loss, retransmission
// timing, RNR, duplicates, reordering -- all in virtual time.
#include <arpa/inet.h>

#include "tests/unit/engine/harness.hpp"

namespace vf::engine::test {
namespace {

constexpr Nanos timeout_ns(uint8_t t) { return Nanos(4096) << t; }
constexpr Nanos kRnr12 = 640'000;  // IBA RNR timer code 12 = 0.64 ms

using Transport = Pair;

TEST_F(Transport, SendRecvSinglePacket) {
  setup();
  fill_pattern(buf_a.data(), 100, 1);
  app_b->post_recv(*qp_b, recv_wqe(77, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(11, {sge(buf_a.data(), 100, mr_a.lkey)}));
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  auto sc = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(rc.size(), 1u);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rc[0].opcode, IBV_WC_RECV);
  EXPECT_EQ(rc[0].wr_id, 77u);
  EXPECT_EQ(rc[0].byte_len, 100u);
  EXPECT_EQ(rc[0].qp_num, qp_b->qpn);
  EXPECT_EQ(rc[0].src_qp, qp_a->qpn);
  EXPECT_EQ(rc[0].slid, kLidA);
  EXPECT_EQ(rc[0].wc_flags, 0u);
  EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(sc[0].opcode, IBV_WC_SEND);
  EXPECT_EQ(sc[0].wr_id, 11u);
  EXPECT_EQ(sc[0].qp_num, qp_a->qpn);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 100), 0);
  EXPECT_EQ(buf_b[100], 0);
  // One request, one ACK: the first PSN is the one set by modify_qp.
  auto data = sent_by(kLidA, false);
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].psn, params.psn_a);
  EXPECT_EQ(data[0].opcode, vf::wire::kSendOnly);
  EXPECT_TRUE(data[0].ackreq);
  EXPECT_EQ(data[0].dqpn, qp_b->qpn);
  EXPECT_EQ(sent_by(kLidB, true).size(), 1u);
  // Nothing left to do: no timer armed, poll idle, rings consumed.
  EXPECT_TRUE(sched.idle());
  EXPECT_FALSE(hca_a.poll(64));
  EXPECT_FALSE(hca_b.poll(64));
  EXPECT_EQ(qp_a->sq.hdr()->consumer, 1u);
  EXPECT_EQ(qp_b->rq.hdr()->consumer, 1u);
}

TEST_F(Transport, MultiPacketMultiSge) {
  setup();  // path MTU 1024
  uint8_t* a = buf_a.data();
  fill_pattern(a, 100000, 2);
  // 5500 bytes gathered from three SGEs, scattered into four.
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data() + 0, 2000, mr_b.lkey),
                                       sge(buf_b.data() + 5000, 10, mr_b.lkey),
                                       sge(buf_b.data() + 9000, 2500, mr_b.lkey),
                                       sge(buf_b.data() + 20000, 5000, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(a + 10, 1000, mr_a.lkey), sge(a + 50000, 3000, mr_a.lkey),
                                       sge(a + 7, 1500, mr_a.lkey)}));
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rc[0].byte_len, 5500u);
  std::vector<uint8_t> want, got;
  want.insert(want.end(), a + 10, a + 1010);
  want.insert(want.end(), a + 50000, a + 53000);
  want.insert(want.end(), a + 7, a + 1507);
  const uint8_t* b = buf_b.data();
  got.insert(got.end(), b, b + 2000);
  got.insert(got.end(), b + 5000, b + 5010);
  got.insert(got.end(), b + 9000, b + 11500);
  got.insert(got.end(), b + 20000, b + 20000 + 5500 - 4510);
  EXPECT_EQ(got, want);
  auto data = sent_by(kLidA, false);
  ASSERT_EQ(data.size(), 6u);  // ceil(5500 / 1024)
  EXPECT_EQ(data[0].opcode, vf::wire::kSendFirst);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(data[i].opcode, vf::wire::kSendMiddle);
  EXPECT_EQ(data[5].opcode, vf::wire::kSendLast);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(data[i].psn, params.psn_a + i);
  EXPECT_EQ(data[0].len, 12u + 1024u);
  EXPECT_EQ(data[5].len, 12u + 5500u - 5 * 1024u);  // 380: no pad
  EXPECT_TRUE(data[5].ackreq);
  EXPECT_FALSE(data[0].ackreq);
}

TEST_F(Transport, PathMtuCappedByPort) {
  reconfigure([](HcaConfig&, PortInfo& p) { p.mtu = 2048; });
  ConnParams p;
  p.mtu = IBV_MTU_4096;
  setup(p);
  EXPECT_EQ(app_a->query(*qp_a).attr.path_mtu, IBV_MTU_4096);  // what was set
  fill_pattern(buf_a.data(), 5000, 3);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 8192, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 5000, mr_a.lkey)}));
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(sent_by(kLidA, false).size(), 3u);  // 2048 + 2048 + 904
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 5000), 0);
}

TEST_F(Transport, SendWithImmediate) {
  setup();
  fill_pattern(buf_a.data(), 3000, 4);
  const uint32_t imm = htonl(0x12345678);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 3000, mr_a.lkey)}, IBV_SEND_SIGNALED,
                                   IBV_WR_SEND_WITH_IMM, imm));
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  auto sc = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rc[0].opcode, IBV_WC_RECV);
  EXPECT_EQ(rc[0].wc_flags & IBV_WC_WITH_IMM, unsigned(IBV_WC_WITH_IMM));
  EXPECT_EQ(rc[0].imm_data, imm);  // network order end to end
  EXPECT_EQ(rc[0].byte_len, 3000u);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].opcode, IBV_WC_SEND);
  auto data = sent_by(kLidA, false);
  ASSERT_EQ(data.size(), 3u);
  EXPECT_EQ(data[2].opcode, vf::wire::kSendLastImm);
  EXPECT_EQ(data[2].len, 12u + 4u + 3000u - 2048u);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 3000), 0);
}

TEST_F(Transport, InlineSendAndZeroLength) {
  setup();
  uint8_t data[201];
  fill_pattern(data, sizeof(data), 5);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_b->post_recv(*qp_b, recv_wqe(2, {sge(buf_b.data() + 8192, 4096, mr_b.lkey)}));
  app_a->post_send(*qp_a, inline_wqe(10, data, sizeof(data)));
  std::memset(data, 0xEE, sizeof(data));  // the WQE holds the bytes, not a pointer
  app_a->post_send(*qp_a, send_wqe(11, {}));
  auto rc = wait_cqes(*app_b, *cq_b, 2);
  ASSERT_EQ(rc.size(), 2u);
  EXPECT_EQ(rc[0].byte_len, 201u);
  EXPECT_EQ(rc[1].byte_len, 0u);
  EXPECT_EQ(rc[1].status, IBV_WC_SUCCESS);
  uint8_t want[201];
  fill_pattern(want, sizeof(want), 5);
  EXPECT_EQ(std::memcmp(want, buf_b.data(), sizeof(want)), 0);
  auto sent = sent_by(kLidA, false);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].len, 12u + 204u);  // 201 + 3 pad
  EXPECT_EQ(sent[1].len, 12u);
}

TEST_F(Transport, PsnWrapsAt24Bits) {
  ConnParams p;
  p.mtu = IBV_MTU_256;
  p.psn_a = 0xFFFFF0;
  setup(p);
  fill_pattern(buf_a.data(), 40 * 256, 6);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 65536, mr_b.lkey)}));
  app_b->post_recv(*qp_b, recv_wqe(2, {sge(buf_b.data() + 65536, 65536, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), 40 * 256, mr_a.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 300, mr_a.lkey)}));
  auto rc = wait_cqes(*app_b, *cq_b, 2);
  auto sc = wait_cqes(*app_a, *cq_a, 2);
  ASSERT_EQ(rc.size(), 2u);
  ASSERT_EQ(sc.size(), 2u);
  EXPECT_EQ(rc[0].byte_len, 40u * 256u);
  EXPECT_EQ(rc[1].byte_len, 300u);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 40 * 256), 0);
  auto data = sent_by(kLidA, false);
  ASSERT_EQ(data.size(), 42u);
  EXPECT_EQ(data[15].psn, 0xFFFFFFu);
  EXPECT_EQ(data[16].psn, 0u);
  EXPECT_EQ(data[41].psn, 25u);
  EXPECT_EQ(app_b->query(*qp_b).attr.rq_psn, 0xFFFFF0u);
}

TEST_F(Transport, LostPacketRetransmittedExactlyAtTimeout) {
  setup();
  fill_pattern(buf_a.data(), 100, 7);
  bool dropped = false;
  net.filter = [&](const Sent& s) {
    if (s.from_lid == kLidA && !s.is_ack() && !dropped) {
      dropped = true;
      return Verdict{Verdict::kDrop};
    }
    return Verdict{};
  };
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 100, mr_a.lkey)}));
  auto sc = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS);
  auto data = sent_by(kLidA, false);
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[1].psn, data[0].psn);
  EXPECT_EQ(data[1].t - data[0].t, timeout_ns(params.timeout));  // 4.096 us * 2^14
  EXPECT_EQ(hca_a.counters().retransmit_timeouts, 1u);
  EXPECT_EQ(hca_a.counters().retransmitted_packets, 1u);
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 100), 0);
}

TEST_F(Transport, LostMiddlePacketRecoveredBySequenceNak) {
  setup();
  fill_pattern(buf_a.data(), 8000, 8);
  const uint32_t victim = params.psn_a + 2;
  bool dropped = false;
  net.filter = [&](const Sent& s) {
    if (s.from_lid == kLidA && !s.is_ack() && s.psn == victim && !dropped) {
      dropped = true;
      return Verdict{Verdict::kDrop};
    }
    return Verdict{};
  };
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 8192, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 8000, mr_a.lkey)}));
  auto sc = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS);
  EXPECT_LT(sched.now(), timeout_ns(params.timeout));  // no timeout involved
  EXPECT_EQ(hca_a.counters().retransmit_timeouts, 0u);
  EXPECT_EQ(hca_b.counters().seq_naks_sent, 1u);  // one NAK, then silence until the gap fills
  EXPECT_EQ(hca_a.counters().seq_naks_rcvd, 1u);
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].byte_len, 8000u);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 8000), 0);
}

TEST_F(Transport, LostAckAnsweredByDuplicateReAck) {
  setup();
  fill_pattern(buf_a.data(), 500, 9);
  bool dropped = false;
  net.filter = [&](const Sent& s) {
    if (s.from_lid == kLidB && s.is_ack() && !dropped) {
      dropped = true;
      return Verdict{Verdict::kDrop};
    }
    return Verdict{};
  };
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_b->post_recv(*qp_b, recv_wqe(2, {sge(buf_b.data() + 4096, 4096, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 500, mr_a.lkey)}));
  auto sc = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(sched.now(), timeout_ns(params.timeout) + 2 * kDelay);
  EXPECT_EQ(hca_b.counters().duplicate_requests, 1u);
  auto rc = app_b->drain(*cq_b);
  ASSERT_EQ(rc.size(), 1u);  // the duplicate consumed no receive
  EXPECT_EQ(rc[0].wr_id, 1u);
}

TEST_F(Transport, RetryExhaustedAtExpectedTimeThenFlush) {
  ConnParams p;
  p.retry_cnt = 3;
  p.timeout = 10;
  setup(p);
  net.filter = [&](const Sent& s) {
    return s.from_lid == kLidA ? Verdict{Verdict::kDrop} : Verdict{};
  };
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), 100, mr_a.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 100, mr_a.lkey)}, 0));  // unsignaled
  const Nanos t0 = sched.now();
  auto sc = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_GE(sc.size(), 1u);
  EXPECT_EQ(sc[0].wr_id, 1u);
  EXPECT_EQ(sc[0].status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_EQ(sched.now(), t0 + 4 * timeout_ns(10));  // 1 try + 3 retries, each waited out
  std::vector<Nanos> first_psn_times;
  for (auto& s : sent_by(kLidA, false))
    if (s.psn == p.psn_a) first_psn_times.push_back(s.t);
  ASSERT_EQ(first_psn_times.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(first_psn_times[i], t0 + i * timeout_ns(10));
  EXPECT_EQ(app_a->query(*qp_a).attr.qp_state, IBV_QPS_ERR);
  // The rest of the SQ is flushed, reported even though unsignaled; so is
  // whatever is posted later.
  app_a->post_send(*qp_a, send_wqe(3, {sge(buf_a.data(), 100, mr_a.lkey)}));
  app_a->post_recv(*qp_a, recv_wqe(4, {sge(buf_a.data(), 100, mr_a.lkey)}));
  auto more = wait_cqes(*app_a, *cq_a, 4 - sc.size());
  std::vector<vhca_cqe> fl(sc.begin() + 1, sc.end());
  fl.insert(fl.end(), more.begin(), more.end());
  ASSERT_EQ(fl.size(), 3u);
  EXPECT_EQ(fl[0].wr_id, 2u);
  EXPECT_EQ(fl[0].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(fl[1].wr_id, 3u);
  EXPECT_EQ(fl[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(fl[2].wr_id, 4u);
  EXPECT_EQ(fl[2].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(fl[2].opcode, IBV_WC_RECV);
  EXPECT_EQ(qp_a->sq.hdr()->consumer, 3u);
  // No completion reports the QP fatal: the CQE did.
  EXPECT_EQ(ev_a.count(IBV_EVENT_QP_FATAL, qp_a->handle), 0u);
}

TEST_F(Transport, RnrNakThenRetryAfterMinRnrTimer) {
  setup();  // min_rnr_timer 12 = 0.64 ms, rnr_retry 7 = forever
  fill_pattern(buf_a.data(), 2000, 10);
  app_a->post_send(*qp_a, send_wqe(5, {sge(buf_a.data(), 2000, mr_a.lkey)}));
  run_for(1'000'000);  // 1 ms: an RNR NAK, a retry, another RNR NAK
  auto naks = sent_by(kLidB, true);
  ASSERT_GE(naks.size(), 2u);
  EXPECT_EQ(vf::wire::syndrome_type(naks[0].syndrome), vf::wire::AckType::kRnrNak);
  EXPECT_EQ(vf::wire::syndrome_value(naks[0].syndrome), 12);
  EXPECT_EQ(naks[0].psn, params.psn_a);
  EXPECT_TRUE(app_a->drain(*cq_a).empty());
  app_b->post_recv(*qp_b, recv_wqe(9, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  auto sc = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS);
  // Every retry starts exactly min_rnr_timer after its RNR NAK arrived.
  auto data = sent_by(kLidA, false);
  std::vector<Nanos> firsts;
  for (auto& s : data)
    if (s.psn == params.psn_a) firsts.push_back(s.t);
  naks = sent_by(kLidB, true);
  size_t rnr = 0;
  for (auto& n : naks)
    if (vf::wire::syndrome_type(n.syndrome) == vf::wire::AckType::kRnrNak) {
      ASSERT_LT(rnr + 1, firsts.size());
      EXPECT_EQ(firsts[rnr + 1], n.t + kDelay + kRnr12);
      ++rnr;
    }
  EXPECT_EQ(rnr, hca_b.counters().rnr_naks_sent);
  EXPECT_EQ(firsts.size(), rnr + 1);
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].byte_len, 2000u);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 2000), 0);
}

TEST_F(Transport, RnrRetryExhausted) {
  ConnParams p;
  p.rnr_retry = 2;
  setup(p);
  app_a->post_send(*qp_a, send_wqe(5, {sge(buf_a.data(), 100, mr_a.lkey)}));
  app_a->post_send(*qp_a, send_wqe(6, {sge(buf_a.data(), 100, mr_a.lkey)}));
  auto sc = wait_cqes(*app_a, *cq_a, 2);
  ASSERT_EQ(sc.size(), 2u);
  EXPECT_EQ(sc[0].wr_id, 5u);
  EXPECT_EQ(sc[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
  EXPECT_EQ(sc[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(hca_b.counters().rnr_naks_sent, 3u);  // the try and 2 retries
  // try at 0, NAK back at 2d, retry at 2d+R, ... third NAK back at 6d+2R
  EXPECT_EQ(sched.now(), 6 * kDelay + 2 * kRnr12);
  EXPECT_EQ(app_a->query(*qp_a).attr.qp_state, IBV_QPS_ERR);
}

TEST_F(Transport, DuplicatedPacketsAreHarmless) {
  setup();
  net.filter = [](const Sent&) { return Verdict{Verdict::kDuplicate}; };
  fill_pattern(buf_a.data(), 5 * 3000, 11);
  for (int i = 0; i < 5; ++i)
    app_b->post_recv(*qp_b, recv_wqe(i, {sge(buf_b.data() + i * 4096, 4096, mr_b.lkey)}));
  app_b->post_recv(*qp_b, recv_wqe(99, {sge(buf_b.data() + 100000, 4096, mr_b.lkey)}));
  for (int i = 0; i < 5; ++i)
    app_a->post_send(*qp_a, send_wqe(i, {sge(buf_a.data() + i * 3000, 3000, mr_a.lkey)}));
  auto sc = wait_cqes(*app_a, *cq_a, 5);
  ASSERT_EQ(sc.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(sc[i].wr_id, uint64_t(i));
    EXPECT_EQ(sc[i].status, IBV_WC_SUCCESS);
  }
  run_for(timeout_ns(params.timeout) * 2);
  auto rc = app_b->drain(*cq_b);
  ASSERT_EQ(rc.size(), 5u);  // receive 99 untouched
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(rc[i].wr_id, uint64_t(i));
    EXPECT_EQ(rc[i].byte_len, 3000u);
    EXPECT_EQ(std::memcmp(buf_a.data() + i * 3000, buf_b.data() + i * 4096, 3000), 0);
  }
  EXPECT_GT(hca_b.counters().duplicate_requests, 0u);
  EXPECT_TRUE(app_a->drain(*cq_a).empty());
  EXPECT_EQ(app_a->query(*qp_a).attr.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(app_b->query(*qp_b).attr.qp_state, IBV_QPS_RTS);
}

TEST_F(Transport, ReorderedPacketRecovered) {
  setup();
  fill_pattern(buf_a.data(), 4096, 12);
  const uint32_t late = params.psn_a + 1;
  net.filter = [&](const Sent& s) {
    if (s.from_lid == kLidA && !s.is_ack() && s.psn == late && s.t == 0)
      return Verdict{Verdict::kDeliver, 5 * kDelay};  // overtaken by psn+2, psn+3
    return Verdict{};
  };
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 4096, mr_a.lkey)}));
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 4096), 0);
  EXPECT_EQ(hca_b.counters().seq_naks_sent, 1u);
  auto sc = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS);
}

TEST_F(Transport, AcksCoalescedOverABurst) {
  setup();
  fill_pattern(buf_a.data(), 64 * 64, 13);
  for (int i = 0; i < 32; ++i)
    app_b->post_recv(*qp_b, recv_wqe(i, {sge(buf_b.data() + i * 64, 64, mr_b.lkey)}));
  for (int i = 0; i < 32; ++i)
    app_a->post_send(*qp_a, send_wqe(i, {sge(buf_a.data() + i * 64, 64, mr_a.lkey)}));
  auto sc = wait_cqes(*app_a, *cq_a, 32);
  ASSERT_EQ(sc.size(), 32u);
  for (auto& e : sc) EXPECT_EQ(e.status, IBV_WC_SUCCESS);
  // 32 messages, each asking for an ACK, arriving in one burst: two ACKs.
  EXPECT_EQ(hca_b.counters().acks_sent, 2u);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 32 * 64), 0);
}

TEST_F(Transport, ManyMessagesUnsignaledWithRingWrap) {
  QpCaps caps;
  caps.send_wr = 16;
  caps.recv_wr = 16;
  setup({}, caps);
  const int kMsgs = 200, kLen = 2000;
  std::vector<uint8_t> src(kMsgs * kLen);
  fill_pattern(src.data(), src.size(), 14);
  vhca_reg_mr_rsp smr = app_a->mr(pd_a, src.data(), src.size());
  int posted = 0, recvd = 0, rposted = 0, signaled = 0;
  std::vector<vhca_cqe> rcqes;
  size_t scqes = 0;
  while (recvd < kMsgs) {
    // Post into whatever ring space the engine's consumer indices free up.
    while (rposted < kMsgs && rposted - int(qp_b->rq.hdr()->consumer) < 16) {
      app_b->post_recv(*qp_b, recv_wqe(rposted, {sge(buf_b.data() + (rposted % 64) * 4096, 4096,
                                                     mr_b.lkey)}));
      ++rposted;
    }
    while (posted < kMsgs && posted - int(qp_a->sq.hdr()->consumer) < 16) {
      const bool sig = posted % 8 == 7;
      signaled += sig;
      app_a->post_send(*qp_a, send_wqe(posted, {sge(src.data() + posted * kLen, kLen, smr.lkey)},
                                       sig ? IBV_SEND_SIGNALED : 0));
      ++posted;
    }
    run_for(5000);
    vhca_cqe e;
    while (app_b->poll_cq(*cq_b, e)) {
      EXPECT_EQ(e.status, IBV_WC_SUCCESS);
      EXPECT_EQ(e.wr_id, uint64_t(recvd));
      EXPECT_EQ(std::memcmp(buf_b.data() + (recvd % 64) * 4096, src.data() + recvd * kLen, kLen), 0)
          << recvd;
      ++recvd;
    }
    while (app_a->poll_cq(*cq_a, e)) {
      EXPECT_EQ(e.status, IBV_WC_SUCCESS);
      EXPECT_EQ(e.wr_id % 8, 7u);
      ++scqes;
    }
    ASSERT_LT(sched.now(), 1'000'000'000u);
  }
  run_for(100'000);
  vhca_cqe e;
  while (app_a->poll_cq(*cq_a, e)) ++scqes;
  EXPECT_EQ(scqes, size_t(signaled));
  EXPECT_EQ(qp_a->sq.hdr()->consumer, uint32_t(kMsgs));
}

TEST_F(Transport, SolicitedAndNextCompletionEvents) {
  setup();
  for (int i = 0; i < 3; ++i)
    app_b->post_recv(*qp_b, recv_wqe(i, {sge(buf_b.data() + i * 4096, 4096, mr_b.lkey)}));
  app_b->arm(*cq_b, VHCA_CQ_ARM_SOLICITED);
  app_a->post_send(*qp_a, send_wqe(0, {sge(buf_a.data(), 10, mr_a.lkey)}));
  ASSERT_EQ(wait_cqes(*app_b, *cq_b, 1).size(), 1u);
  EXPECT_EQ(ev_b.count(-1, cq_b->handle), 0u);  // not solicited
  app_a->post_send(*qp_a,
                   send_wqe(1, {sge(buf_a.data(), 10, mr_a.lkey)}, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED));
  ASSERT_EQ(wait_cqes(*app_b, *cq_b, 1).size(), 1u);
  EXPECT_EQ(ev_b.count(-1, cq_b->handle), 1u);
  // The serial that fired is published: the provider learns its arm is spent.
  EXPECT_EQ(cq_b->ring.hdr()->fired_sn, cq_b->ring.hdr()->arm_sn);
  EXPECT_EQ(ev_a.count(-1, cq_a->handle), 0u);  // A never armed
  app_a->arm(*cq_a, VHCA_CQ_ARM_NEXT);
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 10, mr_a.lkey)}));
  run_for(100'000);
  EXPECT_EQ(ev_a.count(-1, cq_a->handle), 1u);  // one event per arm
  EXPECT_EQ(ev_b.count(-1, cq_b->handle), 1u);
}

TEST_F(Transport, CommEstablishedOnFirstPacketInRtr) {
  setup();
  // Put B back through RTR: the first packet it gets there reports COMM_EST.
  EXPECT_EQ(ev_b.count(IBV_EVENT_COMM_EST, qp_b->handle), 0u);  // B was RTS before traffic
  ibv_qp_attr reset{};
  reset.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(app_b->modify(*qp_b, reset, IBV_QP_STATE), 0);
  ASSERT_EQ(app_b->modify(*qp_b, init_attr(), kInitMask), 0);
  ASSERT_EQ(app_b->modify(*qp_b, rtr_attr(qp_a->qpn, kLidA, params.psn_a, params), kRtrMask), 0);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), 10, mr_a.lkey)}));
  ASSERT_EQ(wait_cqes(*app_b, *cq_b, 1).size(), 1u);
  EXPECT_EQ(ev_b.count(IBV_EVENT_COMM_EST, qp_b->handle), 1u);
  vhca_handle_req d{};
  d.handle = qp_b->handle;
  vhca_destroy_qp_rsp dr{};
  ASSERT_EQ(hca_b.destroy_qp(app_b->id(), d, dr), 0);
  EXPECT_EQ(dr.events_reported, 1u);
}

TEST_F(Transport, LoopbackOnOneHca) {
  app_a = std::make_unique<App>(hca_a, 1);
  uint32_t pd = app_a->alloc_pd();
  auto cq = app_a->cq();
  auto q1 = app_a->qp(pd, *cq, *cq);
  auto q2 = app_a->qp(pd, *cq, *cq);
  buf_a.assign(65536, 0);
  auto mr = app_a->mr(pd, buf_a.data(), buf_a.size());
  connect(*app_a, *q1, kLidA, *app_a, *q2, kLidA);
  fill_pattern(buf_a.data(), 5000, 15);
  app_a->post_recv(*q2, recv_wqe(1, {sge(buf_a.data() + 32768, 8192, mr.lkey)}));
  app_a->post_send(*q1, send_wqe(2, {sge(buf_a.data(), 5000, mr.lkey)}));
  auto c = wait_cqes(*app_a, *cq, 2);
  ASSERT_EQ(c.size(), 2u);
  for (auto& e : c) EXPECT_EQ(e.status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_a.data() + 32768, 5000), 0);
}

TEST_F(Transport, TransmitBackpressureStallsWithoutLoss) {
  setup();
  fill_pattern(buf_a.data(), 10000, 16);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 16384, mr_b.lkey)}));
  port_a.blocked = true;
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 10000, mr_a.lkey)}));
  EXPECT_FALSE(hca_a.poll(64));  // nothing can go out: no work done, nothing lost
  EXPECT_TRUE(net.log.empty());
  EXPECT_GT(hca_a.counters().tx_stalls, 0u);
  port_a.blocked = false;
  hca_a.on_transmit_space();
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 10000), 0);
  EXPECT_EQ(hca_a.counters().retransmitted_packets, 0u);
}


// Records a work queue's consumer index at the moment a CQ event fires, i.e.
// right after the engine wrote the CQE that event announces.
struct ConsumerAtEvent : EventSink {
  const MappedRing* ring = nullptr;
  std::vector<uint32_t> seen;
  void cq_event(ClientId, uint32_t) override {
    seen.push_back(__atomic_load_n(&ring->hdr()->consumer, __ATOMIC_ACQUIRE));
  }
  void async_event(ClientId, ibv_event_type, uint32_t) override {}
};

// An app that polls a completion and posts again at once (perftest keeps its
// queues exactly full) must find the slot free: the consumer index has to be
// published before the CQE, never after.
TEST_F(Transport, WorkQueueSlotIsFreedBeforeItsCompletionIsVisible) {
  setup();
  ConsumerAtEvent at_a, at_b;
  at_a.ring = &qp_a->sq;
  at_b.ring = &qp_b->rq;
  hca_a.set_event_sink(&at_a);
  hca_b.set_event_sink(&at_b);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_a->arm(*cq_a, VHCA_CQ_ARM_NEXT);
  app_b->arm(*cq_b, VHCA_CQ_ARM_NEXT);
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 10, mr_a.lkey)}, IBV_SEND_SIGNALED));
  run_for(100'000);
  EXPECT_EQ(at_a.seen, std::vector<uint32_t>{1u});  // send CQE: SQ slot already returned
  EXPECT_EQ(at_b.seen, std::vector<uint32_t>{1u});  // recv CQE: RQ slot already returned
  hca_a.set_event_sink(&ev_a);
  hca_b.set_event_sink(&ev_b);
}

}  // namespace
}  // namespace vf::engine::test
