// IBA credit-based link flow control on one link, in virtual time: port `a`
// sends, port `b` receives into a VL buffer that the test empties when it
// wants to (as a congested switch would). The invariants: nothing goes before
// the peer's first FCP, a receive buffer never overflows, nothing is dropped
// on a data VL, the counts survive wrapping modulo 4096, a lost or corrupted
// FCP is replaced by the resend rule, a retrained link starts clean, VL15 is
// not flow controlled, and each VL has its own credits.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <vector>

#include "dataplane/fabric/ib_credits.hpp"
#include "dataplane/wire/fcp.hpp"
#include "tests/unit/dataplane/test_frames.hpp"

namespace vf::dp {
namespace {

using test::make_ib;

constexpr uint64_t G = 1'000'000'000ULL;
constexpr uint32_t kFrame = 1000;  // 16 blocks

struct CreditLink {
  explicit CreditLink(CreditConfig cc = small(), LinkParams lp = {10 * G, 200, 4096})
      : link(s, LinkLayer::kInfiniBand, lp) {
        holder.port = &b;
    b.set_owner(&holder, &test::Holder::on_rx);
    connect_ports(a, b, link);
    ca = std::make_unique<IbCredits>(a, vf::test::test_mbuf_pool(), cc);
    cb = std::make_unique<IbCredits>(b, vf::test::test_mbuf_pool(), cc);
  }
  ~CreditLink() {
    ca.reset();
    cb.reset();
  }
  static CreditConfig small() {
    CreditConfig c;
    c.data_vls = 2;
    c.vl_buffer_bytes = 8 * 1024;  // 128 blocks: 8 frames of kFrame
    c.vl15_buffer_bytes = 1024;
    return c;
  }
  // Queues n data frames on `vl` at a, tagged first..first+n-1.
  void send(unsigned n, unsigned vl = 0, uint32_t first = 1, uint32_t len = kFrame) {
    for (unsigned i = 0; i < n; ++i)
      ASSERT_TRUE(a.enqueue(vl, make_ib(len, uint8_t(vl), uint8_t(vl), 2, first + i)));
  }
  void run_for(Nanos d) { s.advance_to(s.now() + d); }
  unsigned arrived() const { return unsigned(holder.tags.size()); }

  Scheduler s;
  Port a{s, "a", LinkLayer::kInfiniBand};
  Port b{s, "b", LinkLayer::kInfiniBand};
  test::Holder holder;
  Link link;
  std::unique_ptr<IbCredits> ca, cb;
};

TEST(IbCredits, NothingGoesBeforeThePeersFirstFcp) {
  CreditLink l;
  l.send(1);
  l.run_for(150);  // the peer's FCP is still on its way back
  EXPECT_EQ(l.link.a_to_b().frames_sent.get(), l.ca->snapshot().fcp_sent)
      << "only a's own first FCPs (one per VL) left";
  EXPECT_EQ(l.a.class_queued(0), 1u);
  EXPECT_FALSE(l.ca->snapshot().vl[0].fccl_known);
  l.run_for(10'000);
  EXPECT_EQ(l.arrived(), 1u);
  const CreditSnapshot s = l.ca->snapshot();
  EXPECT_TRUE(s.vl[0].fccl_known);
  EXPECT_FALSE(s.init) << "both VLs heard from the peer";
  EXPECT_EQ(s.vl[0].fctbs, 16u);
}

TEST(IbCredits, AFullBufferStopsTheSenderWithoutLoss) {
  CreditLink l;
  l.holder.hold[0] = true;
  l.send(40);
  l.run_for(1'000'000);
  // 8 KiB of buffer = 8 frames of 16 blocks; the rest waits at the sender.
  EXPECT_EQ(l.arrived(), 8u);
  const CreditSnapshot rb = l.cb->snapshot();
  EXPECT_EQ(rb.vl[0].used_blocks, 128u);
  EXPECT_EQ(rb.vl[0].peak_blocks, 128u);
  EXPECT_EQ(l.a.class_queued(0), 32u);
  EXPECT_EQ(l.ca->snapshot().vl[0].credits, 0u);
  const PortSnapshot pa = l.a.snapshot(l.s.now());
  EXPECT_GT(pa.port_xmit_wait_ns, 900'000u) << "waiting for credit is PortXmitWait";
  // Empty the buffer a few times: everything arrives, in order, never more
  // than the buffer held at once, nothing dropped anywhere.
  for (int round = 0; round < 10 && l.arrived() < 40; ++round) {
    l.holder.let_go(0);
    l.run_for(100'000);
  }
  l.holder.let_go(0);
  EXPECT_EQ(l.arrived(), 40u);
  for (unsigned i = 0; i < l.holder.tags.size(); ++i) EXPECT_EQ(l.holder.tags[i], i + 1);
  EXPECT_LE(l.cb->snapshot().vl[0].peak_blocks, 128u);
  const PortSnapshot pb = l.b.snapshot(l.s.now());
  EXPECT_EQ(pa.port_xmit_discards + pb.port_rcv_errors + pb.port_rcv_discards +
                pb.excessive_buffer_overrun_errors,
            0u);
}

TEST(IbCredits, CountsSurviveWrappingModulo4096) {
  CreditLink l;
  constexpr unsigned kN = 600;  // 9600 blocks: the counts wrap twice
  for (unsigned done = 0; done < kN; done += 50) {
    l.send(50, 0, done + 1);
    l.run_for(200'000);
  }
  EXPECT_EQ(l.arrived(), kN);
  const CreditSnapshot sa = l.ca->snapshot(), sb = l.cb->snapshot();
  EXPECT_EQ(sa.vl[0].fctbs, (kN * 16) % 4096);
  EXPECT_EQ(sb.vl[0].abr, (kN * 16) % 4096) << "ABR follows FCTBS";
  EXPECT_EQ(sb.vl[0].used_blocks, 0u);
  EXPECT_EQ(sa.vl[0].credits, 128u) << "the whole buffer is granted again";
}

// Drops (or corrupts) every flow-control packet on b -> a while `on`.
struct FcpFault {
  bool on = false, corrupt = false;
  uint64_t hit = 0;
  static WireVerdict pass(void* ctx, rte_mbuf* m, const WireTime&, const WireTime&) {
    auto& f = *static_cast<FcpFault*>(ctx);
    if (!f.on || rte_pktmbuf_pkt_len(m) != wire::kFcpLen) return WireVerdict::kPass;
    ++f.hit;
    if (!f.corrupt) return WireVerdict::kLose;
    rte_pktmbuf_mtod(m, uint8_t*)[3] ^= 0x40;  // FCCL changes, LPCRC does not
    return WireVerdict::kPass;
  }
};

// a sends 16 packets, b holds the 8 its buffer takes, then frees them while
// every FCP b sends back is lost (or damaged) for `faulty_for`.
void free_while_fcps_fail(CreditLink& l, FcpFault& fault, Nanos faulty_for) {
  l.link.b_to_a().set_impairment({&fault, &FcpFault::pass});
  l.holder.hold[0] = true;
  l.send(16);
  l.run_for(500'000);
  ASSERT_EQ(l.arrived(), 8u);
  fault.on = true;
  l.holder.let_go(0);
  l.run_for(faulty_for);
}

void lost_fcp_is_recovered(bool corrupt) {
  CreditLink l;
  FcpFault fault;
  fault.corrupt = corrupt;
  // b frees its buffer, but the FCPs that say so are lost / damaged...
  free_while_fcps_fail(l, fault, 5'000);
  EXPECT_GT(fault.hit, 0u);
  EXPECT_EQ(l.arrived(), 8u) << "the sender still believes the buffer is full";
  // ...until the resend rule's next round gets through.
  fault.on = false;
  const Nanos period = fcp_resend_period(10 * G);
  l.run_for(4 * period);
  EXPECT_EQ(l.arrived(), 16u);
  if (corrupt) {
    EXPECT_EQ(l.ca->snapshot().fcp_errors, fault.hit);
    EXPECT_EQ(l.a.snapshot(0).port_rcv_errors, fault.hit) << "a bad LPCRC is a receive error";
  }
}

// Every FCP that would return credit is lost for longer than the receiver's
// rounds take to go quiet (kMaxIdleResend): the starved sender's own rounds
// keep carrying its FCTBS (slowing to one per kMaxIdleResend), and the
// receiver answers the first one that arrives once the fault is gone -- no
// deadlock after a lossy spell.
TEST(IbCredits, AStarvedSenderGetsItsCreditBackAfterThePeerWentQuiet) {
  CreditLink l;
  FcpFault fault;
  free_while_fcps_fail(l, fault, 3 * kMaxIdleResend);
  EXPECT_EQ(l.arrived(), 8u);
  fault.on = false;
  // The starved sender asks once per kMaxIdleResend by now.
  l.run_for(kMaxIdleResend + 4 * fcp_resend_period(10 * G));
  EXPECT_EQ(l.arrived(), 16u);
  // Once fed, both ends go quiet again: the answers stop with the need.
  l.run_for(2 * kMaxIdleResend);
  const uint64_t sent = l.ca->snapshot().fcp_sent + l.cb->snapshot().fcp_sent;
  l.run_for(kMaxIdleResend);
  EXPECT_EQ(l.ca->snapshot().fcp_sent + l.cb->snapshot().fcp_sent, sent) << "an idle link sends no FCPs";
}

TEST(IbCredits, ALostFcpIsReplacedByTheResendRule) { lost_fcp_is_recovered(false); }
TEST(IbCredits, ACorruptFcpIsCountedAndReplaced) { lost_fcp_is_recovered(true); }

TEST(IbCredits, AnFcpThatFoundNoMbufGoesOutLater) {
  CreditLink l;
  l.holder.hold[0] = true;
  l.send(16);
  l.run_for(500'000);
  ASSERT_EQ(l.arrived(), 8u);
  // The pool runs dry just as b frees its buffer: the FCP cannot be built...
  std::vector<rte_mbuf*> hog;
  while (rte_mbuf* m = rte_pktmbuf_alloc(vf::test::test_mbuf_pool())) hog.push_back(m);
  for (rte_mbuf* m : l.holder.held[0]) {  // released, but their mbufs kept too
    hog.push_back(m);
    l.b.release(0, rte_pktmbuf_pkt_len(m));
  }
  l.holder.held[0].clear();
  l.run_for(5'000);
  EXPECT_GT(l.cb->snapshot().fcp_unsent, 0u);
  EXPECT_EQ(l.arrived(), 8u);
  // ...and stays due: once mbufs are back, a later turn sends it.
  for (rte_mbuf* m : hog) rte_pktmbuf_free(m);
  l.run_for(4 * fcp_resend_period(10 * G));
  EXPECT_EQ(l.arrived(), 16u);
}

TEST(IbCredits, ARetrainedLinkStartsFromACleanCreditState) {
  CreditLink l;
  l.send(20);
  l.run_for(500'000);
  ASSERT_EQ(l.arrived(), 20u);
  ASSERT_EQ(l.ca->snapshot().vl[0].fctbs, 320u);
  l.a.set_link_up(false);
  EXPECT_EQ(l.a.snapshot(0).link_downed, 1u) << "LinkDownedCounter";
  l.a.set_link_up(true);  // a retrains: clean state, Init FCPs
  CreditSnapshot sa = l.ca->snapshot();
  EXPECT_TRUE(sa.init);
  EXPECT_EQ(sa.vl[0].fctbs, 0u);
  EXPECT_FALSE(sa.vl[0].fccl_known) << "nothing may go until the peer answers";
  l.run_for(100'000);
  // b saw Init FCPs and restarted too; both ends agree again.
  sa = l.ca->snapshot();
  const CreditSnapshot sb = l.cb->snapshot();
  EXPECT_FALSE(sa.init);
  EXPECT_FALSE(sb.init);
  EXPECT_EQ(sb.vl[0].abr, 0u);
  EXPECT_EQ(sb.vl[0].fctbs, 0u) << "b restarted its own count";
  l.send(5, 0, 21);
  l.run_for(100'000);
  EXPECT_EQ(l.arrived(), 25u);
  EXPECT_EQ(l.ca->snapshot().vl[0].fctbs, 80u);
  EXPECT_EQ(l.cb->snapshot().vl[0].abr, 80u);
}

TEST(IbCredits, Vl15IsNotFlowControlledAndDropsWhenItsBufferIsFull) {
  CreditLink l;
  l.run_for(10'000);
  l.holder.hold[kMgmtClass] = true;
  for (uint32_t i = 0; i < 10; ++i) ASSERT_TRUE(l.a.enqueue(kMgmtClass, make_ib(256, kVl15, 0, 2, i)));
  l.run_for(100'000);
  // 1 KiB of VL15 buffer: 4 packets fit, 6 were sent anyway and dropped.
  EXPECT_EQ(l.holder.held[kMgmtClass].size(), 4u);
  EXPECT_EQ(l.b.snapshot(0).vl15_dropped, 6u);
  EXPECT_EQ(l.a.snapshot(0).port_xmit_wait_ns, 0u) << "VL15 never waits for credit";
  EXPECT_EQ(l.cb->snapshot().vl15_used, 1024u);
  l.holder.let_go(kMgmtClass);
  EXPECT_EQ(l.cb->snapshot().vl15_used, 0u);
}

TEST(IbCredits, AnOverrunIsCountedAndDropped) {
  CreditLink l;
  l.run_for(10'000);
  l.holder.hold[0] = true;
  // A sender that ignores credits: straight onto the wire, 10 frames into 8.
  for (uint32_t i = 0; i < 10; ++i) {
    l.run_for(2'000);  // the wire is idle again
    l.link.a_to_b().send(make_ib(kFrame, 0, 0, 2, i));
  }
  l.run_for(10'000);
  EXPECT_EQ(l.holder.held[0].size(), 8u);
  const PortSnapshot pb = l.b.snapshot(0);
  EXPECT_EQ(pb.excessive_buffer_overrun_errors, 2u);
  EXPECT_EQ(pb.port_rcv_errors, 2u);
  EXPECT_EQ(l.cb->snapshot().vl[0].used_blocks, 128u) << "the buffer never held more than it has";
}

TEST(IbCredits, EachVlHasItsOwnCredits) {
  CreditLink l;
  l.holder.hold[0] = true;  // VL0's receiver is stuck, VL1's is not
  l.send(20, 0, 1);
  l.send(20, 1, 101);
  l.run_for(1'000'000);
  unsigned vl1 = 0;
  for (uint32_t t : l.holder.tags) vl1 += t > 100;
  EXPECT_EQ(vl1, 20u) << "VL1 flowed past the blocked VL0";
  EXPECT_EQ(l.holder.held[0].size(), 8u);
  EXPECT_EQ(l.a.class_queued(0), 12u);
}

TEST(IbCredits, RefusesABufferSmallerThanOnePacket) {
  Scheduler s;
  Port a{s, "a", LinkLayer::kInfiniBand}, b{s, "b", LinkLayer::kInfiniBand};
  Link link(s, LinkLayer::kInfiniBand, {10 * G, 200, 4096});
  connect_ports(a, b, link);
  CreditConfig c;
  c.vl_buffer_bytes = 4096;  // a 4096-MTU packet is 4096 + headers
  EXPECT_THROW(IbCredits(a, vf::test::test_mbuf_pool(), c), std::invalid_argument);
  c.vl_buffer_bytes = 8192;
  c.data_vls = 9;
  EXPECT_THROW(IbCredits(a, vf::test::test_mbuf_pool(), c), std::invalid_argument);
}

TEST(IbCredits, AQuietLinkStopsResendingAndTrafficStartsItAgain) {
  CreditLink l;
  l.run_for(1'000'000'000);  // a second of nothing
  EXPECT_TRUE(l.s.idle()) << "no timer left: an idle daemon sleeps";
  const uint64_t fcps = l.cb->snapshot().fcp_sent;
  EXPECT_LT(fcps, 40u) << "the rounds backed off";
  l.send(3);
  l.run_for(1'000'000);
  EXPECT_EQ(l.arrived(), 3u);
  EXPECT_GT(l.cb->snapshot().fcp_sent, fcps);
}

TEST(IbCredits, DefaultBufferCoversTheCreditLoop) {
  // 100 Gb/s, 5 us each way: 1.25 MB round trip -> capped at the 2048-block window.
  EXPECT_EQ(default_vl_buffer({100 * G, 5000, 4096}, 4224), 2048u * 64);
  // 2 Gb/s, 500 ns: small; at least 32 KiB.
  EXPECT_EQ(default_vl_buffer({2 * G, 500, 4096}, 4224), 32768u);
  // The IBA's 65,536 symbol times, at least kMinResend.
  EXPECT_EQ(fcp_resend_period(2 * G), 262'144u);
  EXPECT_EQ(fcp_resend_period(100 * G), kMinResend);
}

}  // namespace
}  // namespace vf::dp
