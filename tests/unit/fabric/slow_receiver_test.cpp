// A receiving host slower than its link (rx_rate): its NIC's buffer fills
// and the link's flow control pushes back -- the vHCA sends PFC XOFF to its
// switch on the lossless priority, IB stops returning credits -- so nothing
// is lost and the flow runs at the host's rate. Without PFC the NIC drops
// (rx_discards_phy) and RC retransmits. Virtual time; the figures are exact.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

using engine::test::AppCq;
using engine::test::AppQp;
using engine::test::ConnParams;

constexpr uint64_t kLinkRate = 10'000'000'000ULL;
constexpr uint64_t kHostRate = 2'000'000'000ULL;
constexpr uint32_t kMsg = 64 * 1024;
constexpr unsigned kWrs = 32, kRoce = 3;

struct Outcome {
  unsigned completed = 0;
  bool data_ok = false;
  double goodput_bps = 0;
  uint64_t rx_discards_phy = 0, retransmitted = 0, switch_drops = 0;
  uint64_t host_tx_pause = 0, switch_rx_pause = 0, switch_xmit_wait_ns = 0;
};

Outcome run(LinkLayer ll, bool pfc, Nanos limit) {
  LabConfig c;
  c.link_layer = ll;
  c.link = {kLinkRate, 500, ll == LinkLayer::kInfiniBand ? 4096u : 1500u};
  c.rx_rate_bps[1] = kHostRate;
  if (ll == LinkLayer::kEthernet) {
    c.port.eth.trust_dscp = true;
    c.default_tclass = 106;  // DSCP 26: priority 3
    if (pfc) c.port.eth.pfc.enable = 1u << kRoce;
  }
  FabricLab lab(c);
  auto& a = *lab.host(0).app;
  auto& b = *lab.host(1).app;
  std::vector<uint8_t> src(size_t(kWrs) * kMsg), dst(src.size(), 0);
  engine::test::fill_pattern(src.data(), src.size(), 5);
  const uint32_t pa = a.alloc_pd(), pb = b.alloc_pd();
  const auto smr = a.mr(pa, src.data(), src.size());
  const auto dmr = b.mr(pb, dst.data(), dst.size());
  auto cq = a.cq(255), bcq = b.cq(255);
  engine::test::QpCaps caps;
  caps.send_wr = 64;
  auto qp = a.qp(pa, *cq, *cq, caps);
  auto peer = b.qp(pb, *bcq, *bcq);
  ConnParams p;
  p.mtu = ll == LinkLayer::kInfiniBand ? IBV_MTU_4096 : IBV_MTU_1024;
  lab.connect(0, *qp, 1, *peer, p);
  for (unsigned k = 0; k < kWrs; ++k) {
    vhca_send_wqe w = engine::test::send_wqe(k, {engine::test::sge(src.data() + size_t(k) * kMsg, kMsg, smr.lkey)},
                                             IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE);
    w.remote_addr = reinterpret_cast<uint64_t>(dst.data()) + size_t(k) * kMsg;
    w.rkey = dmr.rkey;
    a.post_send(*qp, w);
  }
  Outcome o;
  const Nanos start = lab.sched.now();
  lab.run_until(
      [&] {
        vhca_cqe e;
        while (a.poll_cq(*cq, e)) o.completed += e.status == IBV_WC_SUCCESS;
        return o.completed == kWrs;
      },
      limit);
  const Nanos now = lab.sched.now();
  o.goodput_bps = double(o.completed) * kMsg * 8 / (double(now - start) / 1e9);
  o.data_ok = o.completed == kWrs && std::memcmp(src.data(), dst.data(), src.size()) == 0;
  o.rx_discards_phy = lab.host(1).port->snapshot(now).rx_discards_phy;
  o.retransmitted = lab.host(0).hca->counters().retransmitted_packets;
  const dp::PortSnapshot to_b = lab.switch_port_to(1).snapshot(now);
  o.switch_drops = to_b.port_xmit_discards + lab.switch_port_to(0).snapshot(now).port_rcv_discards;
  o.switch_xmit_wait_ns = to_b.port_xmit_wait_ns;
  if (ll == LinkLayer::kEthernet) {
    o.host_tx_pause = lab.host_pfc(1).snapshot().prio[kRoce].tx_pause;
    o.switch_rx_pause = lab.switch_pfc_to(1).snapshot().prio[kRoce].rx_pause;
  }
  std::printf("%s%s: %u/%u WRITEs, %.3f Gb/s, %llu rx_discards_phy, %llu retransmitted, %llu PFC frames from the "
              "host, %.3f ms the switch waited\n",
              ll == LinkLayer::kInfiniBand ? "IB credits" : "RoCEv2", ll == LinkLayer::kInfiniBand ? "" : pfc ? " with PFC" : " without PFC",
              o.completed, kWrs, o.goodput_bps / 1e9, (unsigned long long)o.rx_discards_phy,
              (unsigned long long)o.retransmitted, (unsigned long long)o.host_tx_pause,
              double(o.switch_xmit_wait_ns) / 1e6);
  return o;
}

// The host takes 2 Gb/s of frames; RoCE's payload is 1024 of every 1078
// frame bytes (Ethernet, IPv4, UDP, BTH, RETH on the first, ICRC, FCS), so
// about 1.9 Gb/s of WRITE payload is what it can absorb.
TEST(SlowReceiver, RoceV2HostSendsPfcWhenItsNicBufferFillsAndLosesNothing) {
  const Outcome o = run(LinkLayer::kEthernet, true, 2'000'000'000ULL);
  EXPECT_TRUE(o.data_ok);
  EXPECT_GT(o.host_tx_pause, 0u) << "the vHCA paused its switch";
  EXPECT_EQ(o.switch_rx_pause, o.host_tx_pause);
  EXPECT_GT(o.switch_xmit_wait_ns, 0u);
  EXPECT_EQ(o.rx_discards_phy + o.retransmitted + o.switch_drops, 0u);
  EXPECT_GT(o.goodput_bps, 0.85 * kHostRate * 1024 / 1078);
  EXPECT_LT(o.goodput_bps, double(kHostRate));
}

TEST(SlowReceiver, RoceV2WithoutPfcTheNicDropsAndRcRetransmits) {
  const Outcome o = run(LinkLayer::kEthernet, false, 50'000'000ULL);
  EXPECT_GT(o.rx_discards_phy, 0u);
  EXPECT_GT(o.retransmitted, 0u);
  EXPECT_EQ(o.host_tx_pause, 0u);
}

TEST(SlowReceiver, InfiniBandCreditsHoldTheSenderBackWithoutLoss) {
  const Outcome o = run(LinkLayer::kInfiniBand, false, 2'000'000'000ULL);
  EXPECT_TRUE(o.data_ok);
  EXPECT_GT(o.switch_xmit_wait_ns, 0u) << "the switch waited for the vHCA's credits";
  EXPECT_EQ(o.rx_discards_phy + o.retransmitted + o.switch_drops, 0u);
  EXPECT_GT(o.goodput_bps, 0.85 * kHostRate);
  EXPECT_LT(o.goodput_bps, double(kHostRate));
}

}  // namespace
}  // namespace vf::test
