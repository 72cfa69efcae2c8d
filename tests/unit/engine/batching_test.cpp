// DMA batching: the requester fills a burst of packets with one
// process_vm_readv, the responder places a receive burst with one
// process_vm_writev per app. These tests pin down that it stays batched (DMA
// calls per message), and that batching changes nothing an app or the peer
// can see: data order, which packets go out when memory is unreachable, the
// exact completion and NAK of a failed placement, and that no ACK, NAK or
// receive completion ever precedes the placement of the data it covers.
#include <sys/mman.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/unit/engine/harness.hpp"

namespace vf::engine::test {
namespace {

using Batching = Pair;
using vf::wire::AckType;

uint64_t dma_calls(const Hca& h) { return h.counters().dma_calls; }


// A mapping of `pages` pages whose page `hole` is unmapped after `register_`
// has registered the whole range.
struct HoleyBuffer {
  uint8_t* p = nullptr;
  size_t pg = size_t(sysconf(_SC_PAGESIZE));
  unsigned pages, hole;
  HoleyBuffer(unsigned n, unsigned h) : pages(n), hole(h) {
    p = static_cast<uint8_t*>(
        mmap(nullptr, n * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  }
  void punch() { EXPECT_EQ(munmap(p + hole * pg, pg), 0); }
  ~HoleyBuffer() {
    for (unsigned i = 0; i < pages; ++i)
      if (i != hole) munmap(p + i * pg, pg);
  }
};

TEST_F(Batching, SixtyFourKibMessageCostsOneDmaCallPerSide) {
  ConnParams p;
  p.mtu = IBV_MTU_4096;
  setup(p);
  constexpr uint32_t kLen = 65536;
  constexpr int kMsgs = 8;
  fill_pattern(buf_a.data(), kMsgs * kLen, 21);
  const uint64_t a0 = dma_calls(hca_a), b0 = dma_calls(hca_b);
  const uint64_t pkts0 = hca_a.counters().tx_packets;
  for (int i = 0; i < kMsgs; ++i) {
    app_b->post_recv(*qp_b, recv_wqe(i, {sge(buf_b.data() + i * kLen, kLen, mr_b.lkey)}));
    app_a->post_send(*qp_a, send_wqe(i, {sge(buf_a.data() + i * kLen, kLen, mr_a.lkey)}));
    auto rc = wait_cqes(*app_b, *cq_b, 1);
    auto sc = wait_cqes(*app_a, *cq_a, 1);
    ASSERT_EQ(rc.size(), 1u);
    ASSERT_EQ(sc.size(), 1u);
    EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(rc[0].byte_len, kLen);
    EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS);
  }
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), kMsgs * kLen), 0);
  EXPECT_EQ(hca_a.counters().tx_packets - pkts0, 16u * kMsgs);  // data; A sends no ACKs here
  // Packet at a time this was 16 reads + 16 writes per message.
  EXPECT_LE(dma_calls(hca_a) - a0, 2u * kMsgs);
  EXPECT_LE(dma_calls(hca_b) - b0, 2u * kMsgs);
  EXPECT_EQ(hca_a.counters().dma_errors + hca_b.counters().dma_errors, 0u);
}

TEST_F(Batching, OneWritePerAppForABurstOfManyMessagesAndQps) {
  setup();  // MTU 1024
  // Two more QP pairs of the same apps, and a second app on B.
  auto [qa2, qb2] = another_pair();
  auto [qa3, qb3] = another_pair();
  App app_b2(hca_b, 3);
  const uint32_t pd2 = app_b2.alloc_pd();
  auto cq2 = app_b2.cq();
  std::vector<uint8_t> buf2(1 << 16, 0);
  auto mr2 = app_b2.mr(pd2, buf2.data(), buf2.size());
  auto qa4 = app_a->qp(pd_a, *cq_a, *cq_a);
  auto qb4 = app_b2.qp(pd2, *cq2, *cq2);
  connect(*app_a, *qa4, kLidA, app_b2, *qb4, kLidB, params);

  struct Flow {
    AppQp* qa;
    AppQp* qb;
    App* app;
    uint8_t* dst;
    uint32_t lkey;
  } flows[] = {{qp_a.get(), qp_b.get(), app_b.get(), buf_b.data(), mr_b.lkey},
               {qa2.get(), qb2.get(), app_b.get(), buf_b.data() + 200000, mr_b.lkey},
               {qa3.get(), qb3.get(), app_b.get(), buf_b.data() + 400000, mr_b.lkey},
               {qa4.get(), qb4.get(), &app_b2, buf2.data(), mr2.lkey}};
  // Three messages per flow, gathered from 2 SGEs, scattered over 3 (odd
  // sizes, so pieces split across packets and SGEs).
  const uint32_t lens[3] = {1500, 3000, 200};
  fill_pattern(buf_a.data(), 100000, 22);
  uint64_t id = 0;
  for (int f = 0; f < 4; ++f) {
    uint32_t off = 0;
    for (uint32_t len : lens) {
      uint8_t* d = flows[f].dst + off * 2;
      flows[f].app->post_recv(*flows[f].qb,
                              recv_wqe(id, {sge(d, 700, flows[f].lkey), sge(d + 1000, 1, flows[f].lkey),
                                            sge(d + 2000, 4000, flows[f].lkey)}));
      const uint8_t* s = buf_a.data() + f * 20000 + off;
      app_a->post_send(*flows[f].qa, send_wqe(id, {sge(s, len / 3, mr_a.lkey),
                                                   sge(s + 10000 - len, len - len / 3, mr_a.lkey)}));
      off += 7000;
      ++id;
    }
  }
  const uint64_t b0 = dma_calls(hca_b);
  auto rc = wait_cqes(*app_b, *cq_b, 9);
  auto rc2 = wait_cqes(app_b2, *cq2, 3);
  ASSERT_EQ(rc.size(), 9u);
  ASSERT_EQ(rc2.size(), 3u);
  rc.insert(rc.end(), rc2.begin(), rc2.end());
  // Every packet arrived in one burst: one write per app placed all of it.
  EXPECT_EQ(dma_calls(hca_b) - b0, 2u);
  std::set<uint64_t> ids;
  for (auto& e : rc) {
    EXPECT_EQ(e.status, IBV_WC_SUCCESS);
    EXPECT_EQ(e.byte_len, lens[e.wr_id % 3]);
    ids.insert(e.wr_id);
  }
  EXPECT_EQ(ids.size(), 12u);
  for (int f = 0; f < 4; ++f) {
    uint32_t off = 0;
    for (uint32_t len : lens) {
      const uint8_t* s = buf_a.data() + f * 20000 + off;
      std::vector<uint8_t> want(s, s + len / 3);
      want.insert(want.end(), s + 10000 - len, s + 10000 - len + (len - len / 3));
      const uint8_t* d = flows[f].dst + off * 2;
      std::vector<uint8_t> got(d, d + std::min(len, 700u));
      if (len > 700) got.push_back(d[1000]);
      if (len > 701) got.insert(got.end(), d + 2000, d + 2000 + (len - 701));
      EXPECT_EQ(got, want) << "flow " << f << " len " << len;
      off += 7000;
    }
  }
}

// A send buffer with a hole: packets wholly before the hole go out, the one
// the hole falls in (even partly) and everything after do not; one read for
// the burst.
TEST_F(Batching, PartialReadSendsOnlyWholePacketsThenFails) {
  setup();  // MTU 1024
  for (uint32_t start : {0u, 512u}) {
    SCOPED_TRACE(start);
    auto [qa, qb] = another_pair();
    HoleyBuffer hb(3, 1);
    fill_pattern(hb.p, hb.pg, 23);
    auto mr = app_a->mr(pd_a, hb.p, 3 * hb.pg);
    hb.punch();
    std::vector<uint8_t> dst(3 * hb.pg, 0);
    auto dmr = app_b->mr(pd_b, dst.data(), dst.size());
    app_b->post_recv(*qb, recv_wqe(1, {sge(dst.data(), uint32_t(dst.size()), dmr.lkey)}));
    const size_t log0 = net.log.size();
    const uint64_t a0 = dma_calls(hca_a), err0 = hca_a.counters().dma_errors;
    app_a->post_send(*qa, send_wqe(7, {sge(hb.p + start, uint32_t(2 * hb.pg), mr.lkey)}));
    run_for(1'000'000);
    auto sc = app_a->drain(*cq_a);
    ASSERT_EQ(sc.size(), 1u);
    EXPECT_EQ(sc[0].wr_id, 7u);
    EXPECT_EQ(sc[0].status, IBV_WC_LOC_PROT_ERR);
    EXPECT_EQ(app_a->query(*qa).attr.qp_state, IBV_QPS_ERR);
    EXPECT_EQ(dma_calls(hca_a) - a0, 1u);
    EXPECT_EQ(hca_a.counters().dma_errors - err0, 1u);
    std::vector<Sent> data;
    for (size_t i = log0; i < net.log.size(); ++i)
      if (net.log[i].from_lid == kLidA && net.log[i].dqpn == qb->qpn) data.push_back(net.log[i]);
    const size_t whole = (hb.pg - start) / 1024;  // packets before the hole
    ASSERT_EQ(data.size(), whole);
    for (size_t i = 0; i < whole; ++i) {
      EXPECT_EQ(data[i].psn, params.psn_a + i);
      EXPECT_EQ(data[i].len, 12u + 1024u);
    }
    // What did go out carried the right bytes (query_qp places what B holds).
    app_b->query(*qb);
    EXPECT_EQ(std::memcmp(dst.data(), hb.p + start, whole * 1024), 0);
    EXPECT_TRUE(app_b->drain(*cq_b).empty());  // the message never completed
  }
}

// A receive buffer with a hole, and another QP's message in the same burst:
// the packet that hits the hole fails exactly as packet-at-a-time placement
// failed it; the other QP is placed anyway.
TEST_F(Batching, PartialWriteFailsThatPacketOnlyOthersStillPlaced) {
  setup();  // MTU 1024
  auto [qa2, qb2] = another_pair();
  HoleyBuffer hb(3, 1);
  auto mr = app_b->mr(pd_b, hb.p, 3 * hb.pg);
  hb.punch();
  fill_pattern(buf_a.data(), 3 * hb.pg, 24);
  fill_pattern(buf_a.data() + 500000, 5000, 25);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(hb.p, uint32_t(3 * hb.pg), mr.lkey)}));
  app_b->post_recv(*qb2, recv_wqe(2, {sge(buf_b.data() + 500000, 8192, mr_b.lkey)}));
  const Counters b0 = hca_b.counters();
  app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), uint32_t(3 * hb.pg), mr_a.lkey)}));
  app_a->post_send(*qa2, send_wqe(2, {sge(buf_a.data() + 500000, 5000, mr_a.lkey)}));
  run_for(1'000'000);

  auto rc = app_b->drain(*cq_b);
  ASSERT_EQ(rc.size(), 2u);
  for (auto& e : rc) {
    if (e.wr_id == 1) {
      EXPECT_EQ(e.status, IBV_WC_LOC_PROT_ERR);
      EXPECT_EQ(e.byte_len, 0u);
    } else {
      EXPECT_EQ(e.status, IBV_WC_SUCCESS);
      EXPECT_EQ(e.byte_len, 5000u);
    }
  }
  EXPECT_EQ(std::memcmp(buf_b.data() + 500000, buf_a.data() + 500000, 5000), 0);
  EXPECT_EQ(std::memcmp(hb.p, buf_a.data(), hb.pg), 0);  // placed before the hole
  // One NAK for qp_a: Remote Operational Error at the first packet in the hole.
  const uint32_t per_page = uint32_t(hb.pg / 1024);
  std::vector<Sent> resp;
  for (auto& s : sent_by(kLidB, true))
    if (s.dqpn == qp_a->qpn) resp.push_back(s);
  ASSERT_EQ(resp.size(), 1u);
  EXPECT_EQ(vf::wire::syndrome_type(resp[0].syndrome), AckType::kNak);
  EXPECT_EQ(vf::wire::syndrome_value(resp[0].syndrome), vf::wire::kNakRemoteOperationalError);
  EXPECT_EQ(resp[0].psn, params.psn_a + per_page);
  const Counters& b = hca_b.counters();
  EXPECT_EQ(b.dma_errors - b0.dma_errors, 1u);
  // The packets behind it were dropped, as they were on arrival at a QP in ERR.
  EXPECT_EQ(b.rx_dropped - b0.rx_dropped, 3 * per_page - per_page - 1);
  EXPECT_LE(b.dma_calls - b0.dma_calls, 2u);  // one write, plus one for what was behind the failure
  EXPECT_EQ(app_b->query(*qp_b).attr.qp_state, IBV_QPS_ERR);
  EXPECT_EQ(app_b->query(*qb2).attr.qp_state, IBV_QPS_RTS);
  auto sc = app_a->drain(*cq_a);
  ASSERT_EQ(sc.size(), 2u);
  for (auto& e : sc) EXPECT_EQ(e.status, e.wr_id == 1 ? IBV_WC_REM_OP_ERR : IBV_WC_SUCCESS);
}

// Every ACK, NAK and receive completion B produces is checked, at the moment
// it is produced, against B's memory: the data it covers must be there.
// Loss, duplicates, reordering and an RNR wait exercise every response path.
TEST_F(Batching, NoAckNakOrCompletionBeforeItsDataIsPlaced) {
  setup();  // MTU 1024: 64 packets per message
  constexpr uint32_t kLen = 65536, kPkts = 64;
  constexpr int kMsgs = 4;
  fill_pattern(buf_a.data(), kMsgs * kLen, 26);
  size_t checks = 0, violations = 0;
  // PSN index i covered: message i / kPkts and everything before it.
  auto placed_through = [&](int64_t i) {
    if (i < 0) return true;
    const size_t bytes = size_t(i + 1) * 1024;
    ++checks;
    return std::memcmp(buf_a.data(), buf_b.data(), bytes) == 0;
  };
  std::set<uint32_t> seen;
  int n = 0;
  net.filter = [&](const Sent& s) {
    if (s.from_lid == kLidB && s.is_ack() && s.dqpn == qp_a->qpn) {
      const int64_t i = int64_t(vf::wire::psn_diff(s.psn, params.psn_a));
      const bool ack = vf::wire::syndrome_type(s.syndrome) == AckType::kAck;
      if (!placed_through(ack ? i : i - 1)) ++violations;
      return Verdict{};
    }
    if (s.from_lid != kLidA || s.is_ack()) return Verdict{};
    const bool first_time = seen.insert(s.psn).second;
    ++n;
    if (first_time && s.psn == params.psn_a + 70) return Verdict{Verdict::kDrop};  // mid message 1
    if (first_time && s.psn == params.psn_a + 150) return Verdict{Verdict::kDeliver, 3 * kDelay};
    if (n >= 100 && n < 106) return Verdict{Verdict::kDuplicate};
    return Verdict{};
  };
  struct Sink : EventSink {
    std::function<void()> on_cqe;
    void cq_event(ClientId, uint32_t) override { on_cqe(); }
    void async_event(ClientId, ibv_event_type, uint32_t) override {}
  } sink;
  sink.on_cqe = [&] {
    // The CQE just written is the newest in B's ring: its message must be in place.
    const uint32_t prod = cq_b->ring.hdr()->producer;
    vhca_cqe e;
    std::memcpy(&e, cq_b->ring.slot(prod - 1), sizeof(e));
    if (e.status == IBV_WC_SUCCESS && !placed_through(int64_t(e.wr_id + 1) * kPkts - 1)) ++violations;
    app_b->arm(*cq_b, VHCA_CQ_ARM_NEXT);
  };
  hca_b.set_event_sink(&sink);
  app_b->arm(*cq_b, VHCA_CQ_ARM_NEXT);
  // Receives for three messages only: the fourth waits out an RNR NAK.
  for (int i = 0; i < kMsgs - 1; ++i)
    app_b->post_recv(*qp_b, recv_wqe(i, {sge(buf_b.data() + i * kLen, kLen, mr_b.lkey)}));
  for (int i = 0; i < kMsgs; ++i)
    app_a->post_send(*qp_a, send_wqe(i, {sge(buf_a.data() + i * kLen, kLen, mr_a.lkey)}));
  auto rc = wait_cqes(*app_b, *cq_b, kMsgs - 1);
  ASSERT_EQ(rc.size(), size_t(kMsgs - 1));
  app_b->post_recv(*qp_b, recv_wqe(kMsgs - 1, {sge(buf_b.data() + (kMsgs - 1) * kLen, kLen, mr_b.lkey)}));
  auto sc = wait_cqes(*app_a, *cq_a, kMsgs);
  ASSERT_EQ(sc.size(), size_t(kMsgs));
  for (auto& e : sc) EXPECT_EQ(e.status, IBV_WC_SUCCESS);
  rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), kMsgs * kLen), 0);
  // The scenario did exercise what it is meant to.
  EXPECT_GE(hca_b.counters().seq_naks_sent, 1u);
  EXPECT_GE(hca_b.counters().rnr_naks_sent, 1u);
  EXPECT_GE(hca_b.counters().duplicate_requests, 1u);
  EXPECT_GE(checks, 8u);
  EXPECT_LT(dma_calls(hca_b), hca_b.counters().rx_packets / 8);  // and was batched
  EXPECT_EQ(violations, 0u);
  hca_b.set_event_sink(&ev_b);  // `sink` dies with this scope
}

// Middle packets wait (no write per poll) until the message's last packet;
// a verb that could observe them -- here dereg_mr -- places them first.
TEST_F(Batching, MiddlePacketsWaitForTheLastOrForAVerb) {
  ConnParams p;
  p.mtu = IBV_MTU_4096;
  setup(p);
  constexpr uint32_t kLen = 65536;
  fill_pattern(buf_a.data(), 2 * kLen, 27);
  // Message 1: the last packet is late; nothing is written until it comes.
  const uint32_t late = params.psn_a + 15;
  net.filter = [&](const Sent& s) {
    return s.from_lid == kLidA && !s.is_ack() && s.psn == late ? Verdict{Verdict::kDeliver, 50'000}
                                                               : Verdict{};
  };
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), kLen, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), kLen, mr_a.lkey)}));
  const uint64_t b0 = dma_calls(hca_b);
  run_for(20'000);
  EXPECT_EQ(hca_b.counters().rx_packets, 15u);
  EXPECT_EQ(dma_calls(hca_b), b0);  // held across many polls
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(dma_calls(hca_b) - b0, 1u);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), kLen), 0);
  ASSERT_EQ(wait_cqes(*app_a, *cq_a, 1).size(), 1u);

  // Message 2: B deregisters its receive MR while 15 packets wait. They were
  // accepted while it was registered, so they land -- before dereg returns.
  std::vector<uint8_t> rbuf(kLen, 0);
  auto rmr = app_b->mr(pd_b, rbuf.data(), rbuf.size());
  const uint32_t late2 = params.psn_a + 31;
  net.filter = [&](const Sent& s) {
    return s.from_lid == kLidA && !s.is_ack() && s.psn == late2 ? Verdict{Verdict::kDeliver, 50'000}
                                                                : Verdict{};
  };
  app_b->post_recv(*qp_b, recv_wqe(2, {sge(rbuf.data(), kLen, rmr.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data() + kLen, kLen, mr_a.lkey)}));
  run_for(20'000);
  const uint64_t b1 = dma_calls(hca_b);
  vhca_handle_req d{};
  d.handle = rmr.mr_handle;
  ASSERT_EQ(hca_b.dereg_mr(app_b->id(), d), 0);
  EXPECT_EQ(dma_calls(hca_b) - b1, 1u);
  EXPECT_EQ(std::memcmp(rbuf.data(), buf_a.data() + kLen, 15 * 4096), 0);
  // The late last packet then finds the key gone: as packet at a time.
  rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_LOC_PROT_ERR);
  auto sc = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status, IBV_WC_REM_OP_ERR);
}

// B holds middle packets whose placement will fail (a hole in its receive
// buffer); the failure must still come before anything B then does on that
// QP, as when each packet was placed on arrival: the ACK for B's own SEND is
// dropped by a QP already in error (the SEND is flushed, not completed), and
// a SEND posted later never leaves B.
TEST_F(Batching, HeldFailureComesBeforeLaterResponsesAndSends) {
  setup();  // MTU 1024
  for (bool ack_first : {true, false}) {
    SCOPED_TRACE(ack_first ? "ACK arrives" : "app posts a SEND");
    auto [qa, qb] = another_pair();
    HoleyBuffer hb(3, 1);
    auto mr = app_b->mr(pd_b, hb.p, 3 * hb.pg);
    hb.punch();
    const uint32_t pkts = uint32_t(3 * hb.pg / 1024);
    net.filter = [&, qbn = qb->qpn](const Sent& s) {  // A's last packet comes much later
      return s.from_lid == kLidA && !s.is_ack() && s.dqpn == qbn && s.psn == params.psn_a + pkts - 1
                 ? Verdict{Verdict::kDeliver, 100'000}
                 : Verdict{};
    };
    app_b->post_recv(*qb, recv_wqe(10, {sge(hb.p, uint32_t(3 * hb.pg), mr.lkey)}));
    app_a->post_recv(*qa, recv_wqe(20, {sge(buf_a.data() + 900000, 4096, mr_a.lkey)}));
    app_a->post_send(*qa, send_wqe(30, {sge(buf_a.data(), uint32_t(3 * hb.pg), mr_a.lkey)}));
    if (ack_first) app_b->post_send(*qb, send_wqe(40, {sge(buf_b.data(), 100, mr_b.lkey)}));
    run_for(1500);  // A's packets but the last are held by B; A received B's SEND (if any)
    EXPECT_EQ(app_b->drain(*cq_b).size(), 0u);
    if (!ack_first) app_b->post_send(*qb, send_wqe(40, {sge(buf_b.data(), 100, mr_b.lkey)}));
    run_for(1'000'000);
    auto status_by_id = [](const std::vector<vhca_cqe>& v) {
      std::map<uint64_t, uint32_t> m;
      for (auto& e : v) m[e.wr_id] = e.status;
      return m;
    };
    auto rb = status_by_id(app_b->drain(*cq_b));
    ASSERT_EQ(rb.size(), 2u);
    EXPECT_EQ(rb[10], unsigned(IBV_WC_LOC_PROT_ERR));
    EXPECT_EQ(rb[40], unsigned(IBV_WC_WR_FLUSH_ERR));
    auto ra = status_by_id(app_a->drain(*cq_a));
    ASSERT_EQ(ra.size(), 2u);
    EXPECT_EQ(ra[30], unsigned(IBV_WC_REM_OP_ERR));
    // B's SEND reached A only when it was sent before B's QP failed.
    EXPECT_EQ(ra[20], unsigned(ack_first ? IBV_WC_SUCCESS : IBV_WC_WR_FLUSH_ERR));
    net.filter = nullptr;
  }
}

// The port fills up in the middle of a burst: what was read but not sent is
// read again later; the wire sees each PSN once, in order, nothing lost.
TEST_F(Batching, PortFullMidBurstLosesAndRepeatsNothing) {
  setup();  // MTU 1024
  constexpr uint32_t kLen = 16 * 1024;
  fill_pattern(buf_a.data(), kLen, 28);
  int sent = 0;
  net.filter = [&](const Sent& s) {
    if (s.from_lid == kLidA && !s.is_ack() && ++sent == 5) port_a.blocked = true;
    return Verdict{};
  };
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), kLen, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), kLen, mr_a.lkey)}));
  const uint64_t a0 = dma_calls(hca_a);
  run_for(10'000);
  EXPECT_EQ(sent, 5);
  EXPECT_GT(hca_a.counters().tx_stalls, 0u);
  port_a.blocked = false;
  hca_a.on_transmit_space();
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), kLen), 0);
  auto data = sent_by(kLidA, false);
  ASSERT_EQ(data.size(), 16u);
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(data[i].psn, params.psn_a + i);
  EXPECT_EQ(hca_a.counters().retransmitted_packets, 0u);
  EXPECT_EQ(dma_calls(hca_a) - a0, 2u);  // the burst, then the rest of it again
}

// Go-back-N re-reads the resent packets with one call too; the responder
// places what preceded the gap before its NAK, the rest after the resend.
TEST_F(Batching, GoBackNRereadsAsOneBurst) {
  setup();  // MTU 1024
  fill_pattern(buf_a.data(), 8000, 29);
  bool dropped = false;
  net.filter = [&](const Sent& s) {
    if (s.from_lid == kLidA && !s.is_ack() && s.psn == params.psn_a + 2 && !dropped) {
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
  EXPECT_EQ(hca_a.counters().retransmitted_packets, 6u);
  EXPECT_EQ(dma_calls(hca_a), 2u);  // 8 packets, then the 6 from the gap
  EXPECT_EQ(dma_calls(hca_b), 2u);  // 2 before the NAK, then the 6
  auto rc = wait_cqes(*app_b, *cq_b, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(std::memcmp(buf_a.data(), buf_b.data(), 8000), 0);
}

}  // namespace
}  // namespace vf::engine::test
