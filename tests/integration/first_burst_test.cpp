// A RoCE vHCA resolves its peer's MAC when the QP's address vector is set
// (modify_qp to RTR), as the kernel does for rxe and mlx5, not on the first
// packet: 256 RDMA WRITEs an unmodified ib_write_bw posts right after RTR,
// on a fabricd whose neighbour caches are empty, complete with no packet
// parked and dropped behind ARP, no NAK and no retransmission.
#include <gtest/gtest.h>

#include "fabricd_fixture.hpp"
#include "perftest_pair.hpp"

namespace vf::test {
namespace {

TEST(FirstBurst, TwoHundredFiftySixWritesRightAfterRtrNeedNoRetransmission) {
  Fabricd d(default_config());
  const std::string hca0 = R"({fabric="roce",hca="vroce0"})";
  ASSERT_EQ(metric_sample(d, "vfabric_neigh_resolved_total" + hca0), 0u) << "the cache starts empty";
  // -t 256: perftest posts all 256 before it polls (4 packets each: 1024).
  const PerftestPair p =
      perftest_pair(d, "ib_write_bw", "vroce1", "vroce0", {"-x", "1", "-s", "4096", "-n", "256", "-t", "256"}, 19950);
  ASSERT_TRUE(p.ok()) << p.describe();
  EXPECT_GE(metric_sample(d, "vfabric_neigh_resolved_total" + hca0), 1u) << "vroce0 resolved vroce1 during the run";
  EXPECT_EQ(metric_sample(d, "vfabric_neigh_unresolved_discards_total" + hca0), 0u);
  EXPECT_EQ(metric_sample(d, "vfabric_retransmitted_packets_total" + hca0), 0u);
  EXPECT_EQ(metric_sample(d, "vfabric_rcvd_seq_err_total" + hca0), 0u) << "no sequence-error NAK";
  EXPECT_EQ(metric_sample(d, "vfabric_out_of_seq_request_total" + std::string(R"({fabric="roce",hca="vroce1"})")), 0u);
}

}  // namespace
}  // namespace vf::test
