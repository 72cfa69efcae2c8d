// Workloads on the virtual-time fabric (sim/plan_run.hpp, run_loop.hpp):
// configs/generated.yaml's fat tree (IB) and rail-optimized cluster (RoCEv2)
// built by ConfigFabric, every collective over RC QPs with every byte
// materialised and checked, a ring at the host link's bound, flows that
// start when the list says, and the same run giving the same time.
#include <gtest/gtest.h>

#include <atomic>
#include <sstream>

#include "daemon/config/config.hpp"
#include "sim/config_fabric.hpp"
#include "sim/plan_run.hpp"
#include "sim/run_loop.hpp"
#include "sim/sim_output.hpp"
#include "sim/workload_options.hpp"

namespace vf::sim {
namespace {

config::Config fabric(const std::string& name) {
  return only_fabric(config::load_config(VF_SOURCE_DIR "/configs/generated.yaml"), name);
}

struct Outcome {
  bool done = false;
  std::string error;
  Nanos elapsed = 0;
  uint64_t delivered = 0, checked = 0;
  size_t qps = 0;
};

Outcome run(const config::Config& cfg, const Plan& p, RunOptions o) {
  ConfigFabric f(cfg);
  f.run_until([] { return false; }, f.sched.now() + 2'000'000);
  o.hosts = place_ranks(f.size(), p.ranks.size(), "linear", 1);
  PlanRun pr(f, p, o);
  pr.start();
  std::atomic<bool> stop{false};
  LoopStats st;
  Outcome out;
  out.done = run_plan(f, pr, stop, f.sched.now() + 1'000'000'000, st, [](const LoopStats&) {}) == LoopEnd::Done;
  out.error = pr.error();
  out.elapsed = pr.finished() - pr.started();
  out.delivered = pr.delivered();
  out.checked = pr.checked();
  out.qps = pr.qps();
  return out;
}

RunOptions checked(uint64_t chunk = 16 * 1024) {
  RunOptions o;
  o.chunk = chunk;
  o.check = true;
  return o;
}

TEST(PlanRun, EveryCollectiveDeliversEveryByteIntactOnBothFabrics) {
  struct Case {
    Collective c;
    Algorithm a;
  };
  for (const char* name : {"ib", "roce"}) {
    const config::Config cfg = fabric(name);
    const size_t n = cfg.fabrics[0].hcas.size();
    for (const Case k : {Case{Collective::AllReduce, Algorithm::Ring}, Case{Collective::AllReduce, Algorithm::HalvingDoubling},
                         Case{Collective::AllGather, Algorithm::Ring}, Case{Collective::ReduceScatter, Algorithm::Ring},
                         Case{Collective::AllToAll, Algorithm::Direct}}) {
      const Plan p = collective_plan(k.c, k.a, n, 256 * 1024 + 8);  // not a multiple of the chunk
      const Outcome o = run(cfg, p, checked());
      SCOPED_TRACE(std::string(name) + " " + to_string(k.c) + " " + to_string(k.a));
      EXPECT_TRUE(o.done) << o.error;
      EXPECT_EQ(o.error, "");
      EXPECT_EQ(o.delivered, p.total_bytes());
      EXPECT_EQ(o.checked, p.total_bytes());
      EXPECT_GT(o.elapsed, 0u);
    }
  }
}

TEST(PlanRun, ARingAllGatherRunsAtTheHostLinksBound) {
  const config::Config cfg = fabric("ib");
  const Plan p = collective_plan(Collective::AllGather, Algorithm::Ring, 8, 8 << 20);
  RunOptions o;
  const Outcome out = run(cfg, p, o);
  ASSERT_TRUE(out.done) << out.error;
  const config::Fabric& f = cfg.fabrics[0];
  const double bound = host_link_bound_gbs(f, *f.link_of("vib0"), 4096);
  const double busbw = figures(p, out.elapsed).busbw_gbs;
  EXPECT_LE(busbw, bound);
  EXPECT_GE(busbw, 0.9 * bound) << "a pipelined ring on a non-blocking tree should fill the host links";
}

TEST(PlanRun, TheSameRunTakesTheSameTimeAndChannelsAddQps) {
  const config::Config cfg = fabric("roce");
  const Plan p = collective_plan(Collective::AllReduce, Algorithm::Ring, 4, 1 << 20);
  const Outcome a = run(cfg, p, RunOptions{}), b = run(cfg, p, RunOptions{});
  ASSERT_TRUE(a.done && b.done);
  EXPECT_EQ(a.elapsed, b.elapsed);
  EXPECT_EQ(a.qps, 8u);  // 4 pairs of neighbours, a QP at each end
  RunOptions two;
  two.channels = 2;
  const Outcome c = run(cfg, p, two);
  ASSERT_TRUE(c.done) << c.error;
  EXPECT_EQ(c.qps, 16u);
}

TEST(PlanRun, AFlowStartsWhenTheListSays) {
  const config::Config cfg = fabric("ib");
  std::istringstream list("0 7 64KiB 200us\n");
  const Plan p = flows_plan(8, list, "list");
  const Outcome o = run(cfg, p, checked());
  ASSERT_TRUE(o.done) << o.error;
  EXPECT_EQ(o.checked, 65536u);
  // 64 KiB at ~12 GB/s is ~5 us on the wire: it finished after its start,
  // not before and not long after.
  EXPECT_GT(o.elapsed, 200'000u);
  EXPECT_LT(o.elapsed, 220'000u);
}

TEST(PlanRun, BadRunsAreRefusedBeforeAnythingIsBuilt) {
  const config::Config cfg = fabric("ib");
  ConfigFabric f(cfg);
  const Plan p = collective_plan(Collective::AllReduce, Algorithm::Ring, 4, 1 << 20);
  RunOptions o;
  o.hosts = {0, 1, 2, 2};
  EXPECT_NE(run_problem(f, p, o).find("two ranks"), std::string::npos);
  o.hosts = {0, 1, 2};
  EXPECT_NE(run_problem(f, p, o).find("4 ranks"), std::string::npos);
  o.hosts = {0, 1, 2, 3};
  o.channels = 0;
  EXPECT_NE(run_problem(f, p, o).find("channels"), std::string::npos);
  o.channels = 1;
  EXPECT_EQ(run_problem(f, p, o), "");
  EXPECT_THROW(PlanRun(f, p, RunOptions{}), std::invalid_argument);
}

}  // namespace
}  // namespace vf::sim
