// HCA egress is per class: when one VL cannot send (no credit, here a closed
// gate standing in for it), QPs on that VL wait -- queued, never dropped --
// while QPs whose SL maps to another VL keep going. With one transmit-space
// test for the whole port, the blocked VL's full queue would stop them all.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/support/fabric_lab.hpp"

namespace vf::test {
namespace {

using engine::test::AppCq;
using engine::test::AppQp;
using engine::test::ConnParams;

constexpr uint32_t kMsg = 64 * 1024;

struct Gate {
  bool closed[dp::kNumDataClasses] = {};
  static bool may(void* ctx, unsigned cls, uint32_t) {
    return cls >= dp::kNumDataClasses || !static_cast<Gate*>(ctx)->closed[cls];
  }
};

TEST(ClassEgress, ABlockedVlStallsOnlyItsOwnQps) {
  LabConfig c;
  c.hosts = 2;
  c.link = {2'000'000'000ULL, 500, 4096};
  FabricLab lab(c);
  auto& a = *lab.host(0).app;
  auto& b = *lab.host(1).app;
  ConnParams p;
  p.mtu = IBV_MTU_4096;

  const uint32_t pda = a.alloc_pd(), pdb = b.alloc_pd();
  std::vector<uint8_t> src(64 * kMsg, 0x5A), dst(64 * kMsg, 0);
  const auto mra = a.mr(pda, src.data(), src.size());
  const auto mrb = b.mr(pdb, dst.data(), dst.size());
  auto cqa = a.cq(255), cqb = b.cq(255);
  // SL 0 -> VL 0 and SL 1 -> VL 1 (the port's default SL n -> VL n).
  auto q0 = a.qp(pda, *cqa, *cqa), q1 = a.qp(pda, *cqa, *cqa);
  auto r0 = b.qp(pdb, *cqb, *cqb), r1 = b.qp(pdb, *cqb, *cqb);
  lab.connect(0, *q0, 1, *r0, p, /*sl=*/0);
  lab.connect(0, *q1, 1, *r1, p, /*sl=*/1);

  Gate gate;
  gate.closed[0] = true;
  dp::Port& out = lab.host(0).port->port();
  out.set_gate({&gate, &Gate::may, nullptr});

  auto write = [&](AppQp& q, uint64_t id, size_t at) {
    vhca_send_wqe w = engine::test::send_wqe(
        id, {engine::test::sge(src.data() + at, kMsg, mra.lkey)}, IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE);
    w.remote_addr = reinterpret_cast<uint64_t>(dst.data()) + at;
    w.rkey = mrb.rkey;
    a.post_send(q, w);
  };
  // VL 0 gets more than its egress queue holds (32 x 16 packets vs 256) and
  // fills it before the SL 1 work is even posted.
  for (unsigned k = 0; k < 32; ++k) write(*q0, 100 + k, size_t(k) * kMsg);
  lab.settle();
  ASSERT_EQ(out.class_queued(0), c.port.queue_pkts);
  for (unsigned k = 0; k < 8; ++k) write(*q1, 200 + k, size_t(32 + k) * kMsg);

  unsigned done0 = 0, done1 = 0;
  auto count = [&] {
    vhca_cqe e;
    while (a.poll_cq(*cqa, e)) {
      EXPECT_EQ(e.status, IBV_WC_SUCCESS) << "wr " << e.wr_id;
      (e.qp_num == q0->qpn ? done0 : done1)++;
    }
  };
  ASSERT_TRUE(lab.run_until([&] { return count(), done1 == 8; }, lab.sched.now() + 20'000'000));
  EXPECT_EQ(done0, 0u) << "VL 0 sent nothing";
  EXPECT_EQ(out.class_queued(0), c.port.queue_pkts) << "VL 0's queue filled and the engine held the rest";
  EXPECT_EQ(out.snapshot(lab.sched.now()).port_xmit_discards, 0u) << "nothing dropped at the source";

  gate.closed[0] = false;
  out.wake();
  ASSERT_TRUE(lab.run_until([&] { return count(), done0 == 32; }));
  EXPECT_EQ(std::memcmp(dst.data(), src.data(), 40 * kMsg), 0) << "both VLs delivered everything";
  EXPECT_EQ(out.snapshot(lab.sched.now()).port_xmit_discards, 0u);
}

}  // namespace
}  // namespace vf::test
