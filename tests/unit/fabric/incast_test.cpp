// Four RC senders WRITE into one vHCA through one switch at line rate: the
// switch's egress port towards the target receives four links' worth of
// frames and can send one. Today neither link layer is lossless, so that
// port drops (PortXmitDiscards) and the senders recover by RC
// retransmission; the flow-control issues turn these expectations into "no
// drop, PortXmitWait instead". The run is deterministic: twice the same
// counters, completions and finishing time.
#include <gtest/gtest.h>

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

struct IncastResult {
  std::vector<int> statuses;  // per sender, per WR, in completion order
  uint64_t switch_discards = 0;
  uint64_t switch_rcv_pkts = 0;
  uint64_t senders_xmit_pkts = 0;
  uint64_t retransmitted = 0;
  uint64_t seq_naks = 0;
  uint64_t timeouts = 0;
  uint64_t target_rx_pkts = 0;
  Nanos finish = 0;
  bool data_ok = false;
  bool operator==(const IncastResult&) const = default;
};

IncastResult run_incast(LinkLayer ll) {
  LabConfig c;
  c.link_layer = ll;
  c.hosts = kSenders + 1;
  // 2 Gb/s, 500 ns: the rates of the measurement in the IB fabric issue.
  c.link = {2'000'000'000ULL, 500, ll == LinkLayer::kInfiniBand ? 4096u : 1500u};
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
  for (unsigned i = 0; i < kSenders; ++i)
    for (unsigned k = 0; k < kWrs; ++k) {
      vhca_send_wqe w = engine::test::send_wqe(
          k, {engine::test::sge(s[i].buf.data() + size_t(k) * kMsg, kMsg, s[i].mr.lkey)},
          IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE);
      w.remote_addr = reinterpret_cast<uint64_t>(sink.data()) + (size_t(i) * kWrs + k) * kMsg;
      w.rkey = tmr.rkey;
      lab.host(i).app->post_send(*s[i].qp, w);
    }

  IncastResult r;
  std::vector<unsigned> done(kSenders, 0);
  lab.run_until([&] {
    bool all = true;
    for (unsigned i = 0; i < kSenders; ++i) {
      vhca_cqe e;
      while (lab.host(i).app->poll_cq(*s[i].cq, e)) {
        r.statuses.push_back(int(i) << 8 | e.status);
        ++done[i];
      }
      all &= done[i] == kWrs;
    }
    return all;
  });
  r.finish = lab.sched.now();
  const auto to_target = lab.switch_port_to(kTarget).snapshot(r.finish);
  r.switch_discards = to_target.port_xmit_discards;
  for (unsigned i = 0; i < kSenders; ++i) {
    r.switch_rcv_pkts += lab.switch_port_to(i).snapshot(r.finish).port_rcv_pkts;
    r.senders_xmit_pkts += lab.host(i).port->port().snapshot(r.finish).port_xmit_pkts;
    const auto& ec = lab.host(i).hca->counters();
    r.retransmitted += ec.retransmitted_packets;
    r.timeouts += ec.retransmit_timeouts;
    r.seq_naks += ec.seq_naks_rcvd;
  }
  r.target_rx_pkts = lab.host(kTarget).hca->counters().rx_packets;
  r.data_ok = true;
  for (unsigned i = 0; i < kSenders; ++i)
    r.data_ok &= std::memcmp(sink.data() + size_t(i) * kWrs * kMsg, s[i].buf.data(), s[i].buf.size()) == 0;
  return r;
}

class Incast : public ::testing::TestWithParam<LinkLayer> {};

TEST_P(Incast, FourIntoOneDropsAtTheSwitchAndRecoversByRetransmission) {
  const IncastResult r = run_incast(GetParam());
  std::printf("incast: %zu WRs, %llu frames sent, %llu dropped at the switch, %llu retransmitted, "
              "%llu NAKs, %llu timeouts, %.3f ms virtual\n",
              r.statuses.size(), (unsigned long long)r.senders_xmit_pkts,
              (unsigned long long)r.switch_discards, (unsigned long long)r.retransmitted,
              (unsigned long long)r.seq_naks, (unsigned long long)r.timeouts, double(r.finish) / 1e6);
  ASSERT_EQ(r.statuses.size(), size_t(kSenders) * kWrs) << "every WRITE completes";
  for (int st : r.statuses) EXPECT_EQ(st & 0xFF, IBV_WC_SUCCESS) << "sender " << (st >> 8);
  EXPECT_TRUE(r.data_ok) << "every byte arrived where it was written";
  // Four links into one: the egress port towards the target overflows...
  EXPECT_GT(r.switch_discards, 0u);
  // ...every frame a sender put on its wire reached the switch (links are
  // not lossy, only the full queue is)...
  EXPECT_EQ(r.switch_rcv_pkts, r.senders_xmit_pkts);
  // ...and RC recovers what was dropped: a NAK or a timeout, then go-back-N.
  EXPECT_GT(r.retransmitted, 0u);
  EXPECT_GT(r.seq_naks + r.timeouts, 0u);
  const uint64_t data_pkts = uint64_t(kSenders) * kWrs * (kMsg / (GetParam() == LinkLayer::kInfiniBand ? 4096 : 1024));
  EXPECT_GE(r.senders_xmit_pkts, data_pkts + r.retransmitted);
  // 8 MiB over one 2 Gb/s link takes at least 33.5 ms of virtual time.
  EXPECT_GT(r.finish, Nanos(uint64_t(kSenders) * kWrs * kMsg * 8 / 2));
}

TEST_P(Incast, IsDeterministic) {
  const IncastResult a = run_incast(GetParam());
  const IncastResult b = run_incast(GetParam());
  EXPECT_TRUE(a == b) << "finish " << a.finish << " vs " << b.finish << ", discards "
                      << a.switch_discards << " vs " << b.switch_discards << ", retransmitted "
                      << a.retransmitted << " vs " << b.retransmitted;
}

INSTANTIATE_TEST_SUITE_P(LinkLayers, Incast,
                         ::testing::Values(LinkLayer::kInfiniBand, LinkLayer::kEthernet),
                         [](const auto& i) {
                           return i.param == LinkLayer::kInfiniBand ? "InfiniBand" : "RoceV2";
                         });

}  // namespace
}  // namespace vf::test
