// PFC's head-of-line blocking, made visible. Two switches joined by one
// uplink; four senders (two behind the uplink, two on the far switch) WRITE
// into one target T, and a victim V sends to an idle host D over the same
// uplink on the same lossless priority. T's switch port can drain a quarter
// of what arrives, so the far switch's ingress from the uplink fills with
// frames for T and it pauses the uplink -- and V's frames for the idle D wait
// behind them. ECN marking and DCQCN slow the incast senders to what T can
// take, so the far switch pauses the uplink far less and V gets its share
// back, partly. Nothing is dropped in either case: PFC keeps it lossless, at V's
// expense. Virtual time; the figures are exact.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

using engine::test::AppCq;
using engine::test::AppQp;
using engine::test::ConnParams;

constexpr uint64_t kRate = 2'000'000'000ULL;
constexpr uint32_t kMsg = 64 * 1024;
constexpr unsigned kIncastWrs = 60, kVictimWrs = 16;
enum Host : unsigned { kA0, kA1, kVictim, kTarget, kIdle, kB0, kB1, kHosts };

// One RC flow of WRITEs from `from` into a buffer of `to`.
struct Flow {
  std::vector<uint8_t> src, dst;
  vhca_reg_mr_rsp smr{}, dmr{};
  std::unique_ptr<AppCq> cq, peer_cq;
  std::unique_ptr<AppQp> qp, peer;
  unsigned done = 0;

  Flow(FabricLab& lab, unsigned from, unsigned to, unsigned wrs) : src(size_t(wrs) * kMsg, 7), dst(src.size()) {
    auto& a = *lab.host(from).app;
    auto& b = *lab.host(to).app;
    const uint32_t pa = a.alloc_pd(), pb = b.alloc_pd();
    smr = a.mr(pa, src.data(), src.size());
    dmr = b.mr(pb, dst.data(), dst.size());
    cq = a.cq(255);
    peer_cq = b.cq(255);
    engine::test::QpCaps caps;
    caps.send_wr = 64;
    qp = a.qp(pa, *cq, *cq, caps);
    peer = b.qp(pb, *peer_cq, *peer_cq);
    lab.connect(from, *qp, to, *peer);
    for (unsigned k = 0; k < wrs; ++k) {
      vhca_send_wqe w = engine::test::send_wqe(
          k, {engine::test::sge(src.data() + size_t(k) * kMsg, kMsg, smr.lkey)}, IBV_SEND_SIGNALED,
          IBV_WR_RDMA_WRITE);
      w.remote_addr = reinterpret_cast<uint64_t>(dst.data()) + size_t(k) * kMsg;
      w.rkey = dmr.rkey;
      a.post_send(*qp, w);
    }
  }
  void poll(engine::test::App& a) {
    vhca_cqe e;
    while (a.poll_cq(*cq, e)) {
      EXPECT_EQ(e.status, IBV_WC_SUCCESS);
      ++done;
    }
  }
};

struct Result {
  double victim_bps = 0;
  uint64_t uplink_pauses = 0;  // PFC frames the far switch sent up the uplink
  uint64_t uplink_paused_us = 0;
  uint64_t drops = 0;
  uint64_t victim_cnps = 0;  // CNPs the victim's flow was slowed by (marked behind the incast)
};

LabTopology two_switches(bool dcqcn) {
  LabTopology t;
  t.link_layer = LinkLayer::kEthernet;
  t.switches = {{"sw0", 4}, {"sw1", 5}};
  const dp::LinkParams l{kRate, 500, 1500};
  t.hosts = {{"sw0", 1, l}, {"sw0", 2, l}, {"sw0", 3, l}, {"sw1", 1, l}, {"sw1", 2, l}, {"sw1", 3, l}, {"sw1", 4, l}};
  t.cables = {{"sw0", 4, "sw1", 5, l}};
  t.port.eth.trust_dscp = true;
  t.port.eth.pfc.enable = 1u << 3;
  // As RoCE guides set it: XOFF well above ECN's Kmax, so marking acts
  // before pausing does (the headroom above XOFF is computed from the link).
  t.port.eth.pfc.xoff_bytes = 64 * 1024;
  t.port.eth.pfc.xon_bytes = 64 * 1024 - 2 * 1518;
  t.default_tclass = 106;  // DSCP 26, ECT(0): everything on lossless priority 3
  if (dcqcn) {
    t.port.eth.ecn = {true, 8 * 1024, 32 * 1024, 0.05};  // fabricd's defaults
    t.dcqcn.rp_enabled = t.dcqcn.np_enabled = true;
  }
  return t;
}

Result run(bool incast, bool dcqcn) {
  FabricLab lab(two_switches(dcqcn), 300);
  std::vector<std::unique_ptr<Flow>> senders;
  if (incast)
    for (unsigned h : {kA0, kA1, kB0, kB1}) senders.push_back(std::make_unique<Flow>(lab, h, kTarget, kIncastWrs));
  const Nanos start = lab.sched.now();
  Flow victim(lab, kVictim, kIdle, kVictimWrs);
  lab.run_until([&] {
    victim.poll(*lab.host(kVictim).app);
    return victim.done == kVictimWrs;
  });
  Result r;
  r.victim_bps = double(kVictimWrs) * kMsg * 8 / (double(lab.sched.now() - start) / 1e9);
  const dp::Pfc& far = *lab.fabric.pfc(lab.fabric.port({"sw1", 5}));
  r.uplink_pauses = far.snapshot().prio[3].tx_pause;
  const dp::Pfc& near = *lab.fabric.pfc(lab.fabric.port({"sw0", 4}));
  r.uplink_paused_us = near.snapshot().prio[3].rx_pause_duration;
  for (const auto& s : lab.fabric.switches())
    for (unsigned p = 1; p <= s->nports(); ++p) {
      const dp::PortSnapshot ps = s->port(p).snapshot(lab.sched.now());
      r.drops += ps.port_xmit_discards + ps.port_rcv_discards;
    }
  r.victim_cnps = lab.host(kVictim).hca->counters().rp_cnp_handled;
  for (const auto& s : senders) EXPECT_LT(s->done, kIncastWrs) << "the incast outlasted the victim's flow";
  return r;
}

TEST(PfcHol, AVictimToAnIdleHostLosesThroughputBehindAPausedUplinkAndDcqcnGivesItBack) {
  const Result alone = run(false, false), pfc = run(true, false), ecn = run(true, true);
  std::printf("victim to an idle host: alone %.3f Gb/s; beside the incast with PFC %.3f Gb/s "
              "(uplink paused %llu times, %.3f ms); with PFC+ECN+DCQCN %.3f Gb/s (%llu pauses, %.3f ms, "
              "%llu CNPs slowed the victim too): HOL cost %.2fx, DCQCN gives back %.2fx\n",
              alone.victim_bps / 1e9, pfc.victim_bps / 1e9, (unsigned long long)pfc.uplink_pauses,
              double(pfc.uplink_paused_us) / 1e3, ecn.victim_bps / 1e9, (unsigned long long)ecn.uplink_pauses,
              double(ecn.uplink_paused_us) / 1e3, (unsigned long long)ecn.victim_cnps,
              alone.victim_bps / pfc.victim_bps, ecn.victim_bps / pfc.victim_bps);
  EXPECT_EQ(alone.uplink_pauses, 0u);
  // The uplink's fair share for the victim would be 1 Gb/s (the incast
  // flows behind it can use only 0.5 Gb/s each); PFC gives it far less.
  EXPECT_LT(pfc.victim_bps, 0.5 * alone.victim_bps);
  EXPECT_GT(pfc.uplink_pauses, 0u);
  // ECN + DCQCN: the uplink is paused a fraction of the time and the victim
  // gets a clearly larger share -- not all of it back: its frames queue
  // behind the incast's at the near switch, get marked there, and DCQCN
  // slows it too (measured: 7.4x less pause time, 1.35x the goodput).
  EXPECT_LT(ecn.uplink_paused_us, pfc.uplink_paused_us / 4);
  EXPECT_GT(ecn.victim_bps, 1.2 * pfc.victim_bps);
  EXPECT_GT(ecn.victim_cnps, 0u);
  EXPECT_EQ(pfc.drops + ecn.drops + alone.drops, 0u) << "lossless throughout";
}

}  // namespace
}  // namespace vf::test
