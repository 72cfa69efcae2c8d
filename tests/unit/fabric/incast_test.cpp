// Four RC senders WRITE into one vHCA through one switch at line rate: the
// switch's egress port towards the target receives four links' worth of
// frames and can send one.
//  - InfiniBand: credit-based link flow control makes that lossless. Nothing
//    is dropped or retransmitted; the senders wait for credit (PortXmitWait),
//    share the bottleneck evenly and fill it to its analytic goodput.
//  - RoCEv2 without PFC: the egress port drops (PortXmitDiscards) and the
//    senders recover by RC retransmission.
//  - RoCEv2 with PFC on the RoCE priority (trust DSCP, DSCP 26 -> priority 3,
//    as RoCE guides set it up): the switch's ingress ports send XOFF before
//    their buffers overflow, the vHCAs pause, nothing is dropped or
//    retransmitted and the bottleneck runs near its analytic goodput.
// Either run is deterministic: twice the same counters, completions and
// finishing time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

using engine::test::AppCq;
using engine::test::AppQp;
using engine::test::ConnParams;

constexpr unsigned kSenders = 4;
constexpr unsigned kTarget = kSenders;  // host index
constexpr unsigned kWrs = 32;           // per sender
constexpr uint32_t kMsg = 64 * 1024;
constexpr uint64_t kRate = 2'000'000'000ULL;  // 2 Gb/s, 500 ns: the measurement

struct IncastResult {
  std::vector<int> statuses;                // sender << 8 | status, in completion order
  std::vector<std::vector<Nanos>> done_at;  // per sender, each WR's completion time
  uint64_t switch_discards = 0;             // PortXmitDiscards towards the target
  uint64_t switch_rcv_discards = 0;         // refused at the switch's ingress ports
  uint64_t switch_rcv_pkts = 0;
  uint64_t senders_xmit_pkts = 0;
  uint64_t senders_xmit_wait_ns = 0;
  uint64_t retransmitted = 0;
  uint64_t seq_naks = 0;
  uint64_t timeouts = 0;
  uint64_t target_rx_pkts = 0;
  uint64_t out_of_sequence = 0;     // at the target (mlx5's name)
  uint64_t switch_tx_pause = 0;     // PFC frames the switch sent the senders (priority 3)
  uint64_t senders_rx_pause = 0;    // ...and the senders received
  uint64_t senders_paused_us = 0;   // rx_prio3_pause_duration summed
  uint64_t headroom_overflow = 0;   // at the switch
  uint64_t headroom_peak = 0;       // most headroom one switch port ever held
  uint64_t ecn_marked = 0;          // by the switch port towards the target
  uint64_t np_cnp_sent = 0;         // by the target
  uint64_t rp_cnp_handled = 0;      // by the senders
  Nanos start = 0, finish = 0;
  bool data_ok = false;
  bool operator==(const IncastResult&) const = default;
};

constexpr unsigned kRoce = 3;  // the lossless priority

// headroom: the switch ports' PFC headroom; 0 = computed from the link.
// dcqcn: ECN marking at the switch and DCQCN at the vHCAs on top of PFC.
IncastResult run_incast(LinkLayer ll, bool pfc = false, uint32_t headroom = 0, bool dcqcn = false) {
  LabConfig c;
  c.link_layer = ll;
  c.hosts = kSenders + 1;
  c.link = {kRate, 500, ll == LinkLayer::kInfiniBand ? 4096u : 1500u};
  if (pfc) {
    c.port.eth.trust_dscp = true;
    c.port.eth.pfc.enable = 1u << kRoce;
    c.default_tclass = 106;  // DSCP 26 (priority 3), ECT(0)
    c.port.eth.pfc.headroom_bytes = headroom;
  }
  if (dcqcn) {
    c.port.eth.ecn = {true, 8 * 1024, 32 * 1024, 0.05};  // the fabricd default
    c.dcqcn.rp_enabled = c.dcqcn.np_enabled = true;
  }
  FabricLab lab(c);
  ConnParams p;
  p.mtu = ll == LinkLayer::kInfiniBand ? IBV_MTU_4096 : IBV_MTU_1024;

  auto& target = *lab.host(kTarget).app;
  std::vector<uint8_t> sink(size_t(kSenders) * kWrs * kMsg, 0);
  const uint32_t tpd = target.alloc_pd();
  const auto tmr = target.mr(tpd, sink.data(), sink.size());
  auto tcq = target.cq(1023);

  struct Sender {
    uint32_t pd;
    std::vector<uint8_t> buf;
    vhca_reg_mr_rsp mr;
    std::unique_ptr<AppCq> cq;
    std::unique_ptr<AppQp> qp, peer;
  };
  std::vector<Sender> s(kSenders);
  for (unsigned i = 0; i < kSenders; ++i) {
    auto& app = *lab.host(i).app;
    s[i].pd = app.alloc_pd();
    s[i].buf.resize(size_t(kWrs) * kMsg);
    engine::test::fill_pattern(s[i].buf.data(), s[i].buf.size(), i + 1);
    s[i].mr = app.mr(s[i].pd, s[i].buf.data(), s[i].buf.size());
    s[i].cq = app.cq(255);
    s[i].qp = app.qp(s[i].pd, *s[i].cq, *s[i].cq);
    s[i].peer = target.qp(tpd, *tcq, *tcq);
    lab.connect(i, *s[i].qp, kTarget, *s[i].peer, p);
  }
  IncastResult r;
  r.start = lab.sched.now();
  for (unsigned i = 0; i < kSenders; ++i)
    for (unsigned k = 0; k < kWrs; ++k) {
      vhca_send_wqe w = engine::test::send_wqe(
          k, {engine::test::sge(s[i].buf.data() + size_t(k) * kMsg, kMsg, s[i].mr.lkey)},
          IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE);
      w.remote_addr = reinterpret_cast<uint64_t>(sink.data()) + (size_t(i) * kWrs + k) * kMsg;
      w.rkey = tmr.rkey;
      lab.host(i).app->post_send(*s[i].qp, w);
    }

  r.done_at.resize(kSenders);
  lab.run_until([&] {
    bool all = true;
    for (unsigned i = 0; i < kSenders; ++i) {
      vhca_cqe e;
      while (lab.host(i).app->poll_cq(*s[i].cq, e)) {
        r.statuses.push_back(int(i) << 8 | e.status);
        r.done_at[i].push_back(lab.sched.now());
      }
      all &= r.done_at[i].size() == kWrs;
    }
    return all;
  });
  r.finish = lab.sched.now();
  r.switch_discards = lab.switch_port_to(kTarget).snapshot(r.finish).port_xmit_discards;
  for (unsigned i = 0; i < kSenders; ++i) {
    const dp::PortSnapshot in = lab.switch_port_to(i).snapshot(r.finish);
    r.switch_rcv_pkts += in.port_rcv_pkts;
    r.switch_rcv_discards += in.port_rcv_discards + in.excessive_buffer_overrun_errors;
    const dp::PortSnapshot out = lab.host(i).port->port().snapshot(r.finish);
    r.senders_xmit_pkts += out.port_xmit_pkts;
    r.senders_xmit_wait_ns += out.port_xmit_wait_ns;
    const auto& ec = lab.host(i).hca->counters();
    r.retransmitted += ec.retransmitted_packets;
    r.timeouts += ec.retransmit_timeouts;
    r.seq_naks += ec.seq_naks_rcvd;
  }
  r.target_rx_pkts = lab.host(kTarget).hca->counters().rx_packets;
  r.out_of_sequence = lab.host(kTarget).hca->counters().out_of_sequence;
  if (ll == LinkLayer::kEthernet)
    for (unsigned i = 0; i <= kSenders; ++i) {
      const dp::PfcPrioritySnapshot sw = lab.switch_pfc_to(i).snapshot().prio[kRoce];
      const dp::PfcPrioritySnapshot host = lab.host_pfc(i).snapshot().prio[kRoce];
      r.switch_tx_pause += sw.tx_pause;
      r.headroom_overflow += sw.headroom_overflow;
      r.headroom_peak = std::max(r.headroom_peak, sw.headroom_peak);
      r.senders_rx_pause += host.rx_pause;
      r.senders_paused_us += host.rx_pause_duration;
      if (const dp::EcnMarker* e = lab.fabric.ecn(lab.switch_port_to(i))) r.ecn_marked += e->snapshot(kRoce).ecn_marked;
      r.rp_cnp_handled += lab.host(i).hca->counters().rp_cnp_handled;
    }
  r.np_cnp_sent = lab.host(kTarget).hca->counters().np_cnp_sent;
  r.data_ok = true;
  for (unsigned i = 0; i < kSenders; ++i)
    r.data_ok &= std::memcmp(sink.data() + size_t(i) * kWrs * kMsg, s[i].buf.data(), s[i].buf.size()) == 0;
  return r;
}

void print(const char* what, const IncastResult& r) {
  std::printf("%s: %zu WRs, %llu frames sent, %llu dropped at the switch, %llu retransmitted, "
              "%llu NAKs, %llu timeouts, %.3f ms PortXmitWait at the senders, %.3f ms virtual\n",
              what, r.statuses.size(), (unsigned long long)r.senders_xmit_pkts,
              (unsigned long long)(r.switch_discards + r.switch_rcv_discards),
              (unsigned long long)r.retransmitted, (unsigned long long)r.seq_naks,
              (unsigned long long)r.timeouts, double(r.senders_xmit_wait_ns) / 1e6,
              double(r.finish - r.start) / 1e6);
}

void expect_all_delivered(const IncastResult& r) {
  ASSERT_EQ(r.statuses.size(), size_t(kSenders) * kWrs) << "every WRITE completes";
  for (int st : r.statuses) EXPECT_EQ(st & 0xFF, IBV_WC_SUCCESS) << "sender " << (st >> 8);
  EXPECT_TRUE(r.data_ok) << "every byte arrived where it was written";
}

TEST(Incast, InfiniBandCreditsMakeItLossless) {
  const IncastResult r = run_incast(LinkLayer::kInfiniBand);
  print("incast IB", r);
  expect_all_delivered(r);
  EXPECT_EQ(r.switch_discards, 0u) << "no PortXmitDiscards on the congested port";
  EXPECT_EQ(r.switch_rcv_discards, 0u) << "no receive buffer ever overran";
  EXPECT_EQ(r.retransmitted + r.seq_naks + r.timeouts, 0u) << "RC never had to recover anything";
  EXPECT_EQ(r.switch_rcv_pkts, r.senders_xmit_pkts);
  EXPECT_EQ(r.target_rx_pkts, uint64_t(kSenders) * kWrs * (kMsg / 4096)) << "each packet once";
  // Four links' worth into one: the senders waited for credit.
  EXPECT_GT(r.senders_xmit_wait_ns, 0u);

  // Goodput of the bottleneck against the analytic figure: every WRITE packet
  // carries 4096 payload bytes in LRH 8 + BTH 12 + ICRC 4 + VCRC 2 (+ RETH 16
  // on the first of each message); ACKs and credits flow the other way.
  const double payload = double(kSenders) * kWrs * kMsg;
  const double pkts_per_msg = kMsg / 4096.0;
  const double wire = payload + double(kSenders) * kWrs * (pkts_per_msg * 26 + 16);
  const double analytic_bps = double(kRate) * payload / wire;
  const double goodput_bps = payload * 8 / (double(r.finish - r.start) / 1e9);
  std::printf("incast IB goodput %.4f Gb/s, analytic %.4f Gb/s\n", goodput_bps / 1e9, analytic_bps / 1e9);
  EXPECT_GT(goodput_bps, 0.98 * analytic_bps);
  EXPECT_LE(goodput_bps, analytic_bps);

  // Fairness: when the first sender has finished, each has delivered within
  // 10 % of a fair share of what all four have.
  Nanos first_done = kNever;
  for (const auto& d : r.done_at) first_done = std::min(first_done, d.back());
  std::vector<size_t> by_then(kSenders);
  size_t total = 0;
  for (unsigned i = 0; i < kSenders; ++i) {
    by_then[i] = size_t(std::count_if(r.done_at[i].begin(), r.done_at[i].end(),
                                      [&](Nanos t) { return t <= first_done; }));
    total += by_then[i];
  }
  for (unsigned i = 0; i < kSenders; ++i)
    EXPECT_NEAR(double(by_then[i]), double(total) / kSenders, 0.1 * double(total) / kSenders)
        << "sender " << i << " had " << by_then[i] << " of " << total << " WRITEs done";
}

TEST(Incast, RoceV2WithoutPfcDropsAndRecoversByRetransmission) {
  const IncastResult r = run_incast(LinkLayer::kEthernet);
  print("incast RoCEv2", r);
  expect_all_delivered(r);
  // Four links into one: the egress port towards the target overflows...
  EXPECT_GT(r.switch_discards, 0u);
  // ...every frame a sender put on its wire reached the switch (links are
  // not lossy, only the full queue is)...
  EXPECT_EQ(r.switch_rcv_pkts, r.senders_xmit_pkts);
  // ...and RC recovers what was dropped: a NAK or a timeout, then go-back-N.
  EXPECT_GT(r.retransmitted, 0u);
  EXPECT_GT(r.seq_naks + r.timeouts, 0u);
  EXPECT_GT(r.out_of_sequence, 0u) << "the target saw the gaps the drops left";
  const uint64_t data_pkts = uint64_t(kSenders) * kWrs * (kMsg / 1024);
  EXPECT_GE(r.senders_xmit_pkts, data_pkts + r.retransmitted);
  // 8 MiB over one 2 Gb/s link takes at least 33.5 ms of virtual time.
  EXPECT_GT(r.finish - r.start, Nanos(uint64_t(kSenders) * kWrs * kMsg * 8 / 2));
}

// The wire cost of the RoCEv2 incast's payload at MTU 1024: each packet adds
// Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + preamble 8 + IFG 12,
// the first of each message RETH 16.
double roce_analytic_bps() {
  const double payload = double(kSenders) * kWrs * kMsg;
  const double pkts = payload / 1024;
  const double wire = payload + pkts * 82 + double(kSenders) * kWrs * 16;
  return double(kRate) * payload / wire;
}

double goodput_bps(const IncastResult& r) {
  return double(kSenders) * kWrs * kMsg * 8 / (double(r.finish - r.start) / 1e9);
}

TEST(Incast, RoceV2WithPfcIsLossless) {
  const IncastResult r = run_incast(LinkLayer::kEthernet, true);
  print("incast RoCEv2 PFC", r);
  std::printf("PFC: %llu pause frames sent by the switch, %llu received by the senders, %.3f ms paused, "
              "headroom peak %llu bytes\n",
              (unsigned long long)r.switch_tx_pause, (unsigned long long)r.senders_rx_pause,
              double(r.senders_paused_us) / 1e3, (unsigned long long)r.headroom_peak);
  expect_all_delivered(r);
  EXPECT_EQ(r.switch_discards, 0u) << "no PortXmitDiscards on the congested port";
  EXPECT_EQ(r.switch_rcv_discards, 0u) << "no ingress drop";
  EXPECT_EQ(r.headroom_overflow, 0u);
  EXPECT_EQ(r.retransmitted + r.seq_naks + r.timeouts, 0u) << "RC never had to recover anything";
  EXPECT_EQ(r.switch_rcv_pkts, r.senders_xmit_pkts);
  EXPECT_EQ(r.target_rx_pkts, uint64_t(kSenders) * kWrs * (kMsg / 1024)) << "each packet once";
  // Pauses were sent, arrived and were honoured: the senders waited.
  EXPECT_GT(r.switch_tx_pause, 0u);
  EXPECT_EQ(r.senders_rx_pause, r.switch_tx_pause) << "a clean link delivers every PFC frame";
  EXPECT_GT(r.senders_paused_us, 0u);
  EXPECT_GT(r.senders_xmit_wait_ns, 0u);
  EXPECT_GT(r.headroom_peak, 0u) << "frames kept arriving after XOFF, as the delay model says";
  // The emulated link is the bottleneck, and PFC keeps it busy.
  const double analytic = roce_analytic_bps(), got = goodput_bps(r);
  std::printf("incast RoCEv2 PFC goodput %.4f Gb/s, analytic %.4f Gb/s\n", got / 1e9, analytic / 1e9);
  EXPECT_GT(got, 0.95 * analytic);
  EXPECT_LE(got, analytic);
  // Lossy Ethernet under the same load does worse.
  const IncastResult lossy = run_incast(LinkLayer::kEthernet, false);
  std::printf("incast RoCEv2 without PFC goodput %.4f Gb/s\n", goodput_bps(lossy) / 1e9);
  EXPECT_LT(goodput_bps(lossy), got);
}

// ECN marking at the congested port and DCQCN at the vHCAs on top of PFC:
// the target turns CE marks into CNPs, the senders slow down, and PFC has
// far less to do -- still lossless.
TEST(Incast, RoceV2WithEcnAndDcqcnPausesLess) {
  const IncastResult pfc = run_incast(LinkLayer::kEthernet, true);
  const IncastResult r = run_incast(LinkLayer::kEthernet, true, 0, true);
  print("incast RoCEv2 PFC+ECN+DCQCN", r);
  std::printf("DCQCN: %llu CE marks, %llu CNPs sent, %llu handled; %llu pause frames (PFC alone: %llu); goodput "
              "%.4f Gb/s (PFC alone %.4f)\n",
              (unsigned long long)r.ecn_marked, (unsigned long long)r.np_cnp_sent,
              (unsigned long long)r.rp_cnp_handled, (unsigned long long)r.switch_tx_pause,
              (unsigned long long)pfc.switch_tx_pause, goodput_bps(r) / 1e9, goodput_bps(pfc) / 1e9);
  expect_all_delivered(r);
  EXPECT_EQ(r.switch_discards + r.switch_rcv_discards + r.headroom_overflow, 0u);
  EXPECT_EQ(r.retransmitted, 0u);
  EXPECT_GT(r.ecn_marked, 0u);
  EXPECT_GT(r.np_cnp_sent, 0u);
  EXPECT_EQ(r.rp_cnp_handled, r.np_cnp_sent) << "every CNP reached its sender's QP";
  EXPECT_LT(r.switch_tx_pause, pfc.switch_tx_pause / 2) << "DCQCN leaves PFC much less to do";
  EXPECT_GT(goodput_bps(r), 0.9 * roce_analytic_bps());
  // The four flows share the bottleneck fairly (Jain's index of the WRITEs
  // each had done when the first finished).
  Nanos first_done = kNever;
  for (const auto& d : r.done_at) first_done = std::min(first_done, d.back());
  double sum = 0, sq = 0;
  for (const auto& d : r.done_at) {
    const double x = double(std::count_if(d.begin(), d.end(), [&](Nanos t) { return t <= first_done; }));
    sum += x;
    sq += x * x;
  }
  const double jain = sum * sum / (double(kSenders) * sq);
  std::printf("DCQCN fairness (Jain) %.4f\n", jain);
  EXPECT_GT(jain, 0.95);
}

// A lab that sizes its headroom below the delay model reproduces what a
// misconfigured switch does: lossless in name, drops in fact.
TEST(Incast, RoceV2WithTooLittleHeadroomDropsAndSaysWhere) {
  const IncastResult r = run_incast(LinkLayer::kEthernet, true, 1100);
  print("incast RoCEv2 PFC, 1100 B headroom", r);
  expect_all_delivered(r);
  EXPECT_GT(r.headroom_overflow, 0u) << "counted as headroom overflow at the switch";
  EXPECT_EQ(r.switch_rcv_discards, r.headroom_overflow) << "and nowhere else";
  EXPECT_EQ(r.switch_discards, 0u) << "the egress queue of a lossless priority never drops";
  EXPECT_GT(r.retransmitted, 0u);
}

class IncastRepeat : public ::testing::TestWithParam<LinkLayer> {};

TEST_P(IncastRepeat, IsDeterministic) {
  const IncastResult a = run_incast(GetParam());
  const IncastResult b = run_incast(GetParam());
  EXPECT_TRUE(a == b) << "finish " << a.finish << " vs " << b.finish << ", discards "
                      << a.switch_discards << " vs " << b.switch_discards << ", retransmitted "
                      << a.retransmitted << " vs " << b.retransmitted;
}

INSTANTIATE_TEST_SUITE_P(LinkLayers, IncastRepeat,
                         ::testing::Values(LinkLayer::kInfiniBand, LinkLayer::kEthernet),
                         [](const auto& i) {
                           return i.param == LinkLayer::kInfiniBand ? "InfiniBand" : "RoceV2";
                         });

}  // namespace
}  // namespace vf::test
