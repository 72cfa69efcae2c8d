// Unmodified Debian Open MPI 4.1 over its UCX PML on vHCAs: mpi_collectives
// (this directory) checks every element of MPI_Allreduce, MPI_Allgather,
// MPI_Alltoall, MPI_Bcast and MPI_Reduce_scatter_block at sizes on both
// sides of UCX's rendezvous threshold. Shared memory, TCP and the openib BTL
// are excluded and UCX gets only the verbs transports, so the data can only
// cross the vHCAs; their port counters must show it did.
#include <gtest/gtest.h>

#include <thread>

#include "stacks.hpp"

namespace vf::test {
namespace {

using namespace std::chrono_literals;

// What a lab passes mpirun to run over UCX on vHCAs. Open MPI 4.1's UCX PML
// declines devices other than mlx* unless pml_ucx_devices says otherwise.
std::vector<std::string> mpirun(int ranks) {
  return {"mpirun", "-np", std::to_string(ranks), "--allow-run-as-root", "--oversubscribe", "--timeout", "150",
          "--mca", "pml", "ucx", "--mca", "pml_ucx_devices", "any", "--mca", "btl", "self",
          "--mca", "oob_tcp_if_include", "lo", "-x", "UCX_TLS=rc_verbs,ud_verbs:aux,self"};
}

class OpenMpiUcx : public ::testing::TestWithParam<StackFabric> {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(stacks_config(4)); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }
  static RunResult run_mpi(std::vector<std::string> argv) {
    argv.push_back(VF_MPI_COLLECTIVES_PATH);
    return run(argv, daemon_->app_env(), 180s);
  }
  // Waits (bounded) for sysfs's once-a-second refresh to show `grew`.
  template <typename Pred>
  static bool eventually(Pred grew) {
    for (int i = 0; i < 30; ++i) {
      if (grew()) return true;
      std::this_thread::sleep_for(100ms);
    }
    return grew();
  }
  static Fabricd* daemon_;
};
Fabricd* OpenMpiUcx::daemon_ = nullptr;

void expect_checked(const RunResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("collective calls checked, 0 wrong"), std::string::npos) << r.describe();
}

TEST_P(OpenMpiUcx, FourRanksEachOnItsOwnVhcaGetEveryCollectiveRight) {
  const StackFabric& f = GetParam();
  PortTraffic before[4];
  for (int i = 0; i < 4; ++i) before[i] = port_traffic(*daemon_, f, i);
  auto argv = mpirun(4);
  argv.insert(argv.end(), {"-x", std::string("VF_HCA_PREFIX=") + f.prefix, VF_RANK_HCA_PATH});
  expect_checked(run_mpi(argv));
  // Every rank sent over its own port: its share of ~1.5 MiB of collectives, not loopback or TCP.
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(eventually([&] { return port_traffic(*daemon_, f, i).xmit_bytes > before[i].xmit_bytes + (512 << 10); }))
        << f.hca(i) << " carried less than 512 KiB";
}

TEST_P(OpenMpiUcx, TwoRanksOnOneVhcaLoopBackInsideIt) {
  const StackFabric& f = GetParam();
  const PortTraffic before = port_traffic(*daemon_, f, 3);
  auto argv = mpirun(2);
  argv.insert(argv.end(), {"-x", "UCX_NET_DEVICES=" + f.hca(3) + ":1"});
  expect_checked(run_mpi(argv));
  EXPECT_TRUE(eventually([&] { return port_traffic(*daemon_, f, 3).loopback_pkts > before.loopback_pkts + 200; }))
      << f.hca(3) << " looped back almost nothing";
}

INSTANTIATE_TEST_SUITE_P(Fabrics, OpenMpiUcx, ::testing::Values(kIbStack, kRoceStack),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
