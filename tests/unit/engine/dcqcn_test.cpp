// The DCQCN reaction point's arithmetic against the paper's equations with
// mlx5's default parameters, step by step in virtual time.
#include "device/engine/dcqcn.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace vf::engine {
namespace {

DcqcnConfig cfg() {
  DcqcnConfig c;
  c.rp_enabled = c.np_enabled = true;
  c.line_rate_mbps = 2000;
  c.rpg_time_reset_ns = 300'000;  // mlx5's timer: the hand-computed steps below use it
  return c;
}

TEST(Dcqcn, TheFirstCnpHalvesTheLineRate) {
  const DcqcnConfig c = cfg();
  DcqcnRp rp;
  EXPECT_EQ(dcqcn_advance(rp, c, 0, 0), 0u) << "not limited before any CNP";
  ASSERT_TRUE(dcqcn_on_cnp(rp, c, 1000));
  EXPECT_TRUE(rp.limited);
  EXPECT_DOUBLE_EQ(rp.rt, 2000);  // the target: the rate before the cut
  EXPECT_DOUBLE_EQ(rp.rc, 1000);  // RC (1 - alpha/2), alpha starting at 1
  EXPECT_DOUBLE_EQ(rp.alpha, 1);  // (1-g) 1 + g
  EXPECT_EQ(dcqcn_advance(rp, c, 1000, 0), 1000u);
}

TEST(Dcqcn, TimerEventsRecoverTowardsTheTargetThenLetGo) {
  const DcqcnConfig c = cfg();
  DcqcnRp rp;
  dcqcn_on_cnp(rp, c, 0);
  // F = 1: the first event is additive already (RT + 5 Mb/s, capped at the
  // line), each then halves RC's distance to RT.
  const double want[] = {1500, 1750, 1875, 1937.5, 1968.75, 1984.375, 1992.1875, 1996.09375, 1998.046875};
  for (unsigned k = 0; k < 9; ++k) {
    dcqcn_advance(rp, c, (k + 1) * 300'000, 0);
    EXPECT_DOUBLE_EQ(rp.rc, want[k]) << "event " << k + 1;
    EXPECT_EQ(rp.t_events, k + 1);
  }
  EXPECT_TRUE(rp.limited);
  dcqcn_advance(rp, c, 10 * 300'000, 0);  // 1999.02: within 1 Mb/s of the line
  EXPECT_FALSE(rp.limited);
  EXPECT_EQ(dcqcn_advance(rp, c, 11 * 300'000, 0), 0u);
}

TEST(Dcqcn, CutsAtMostOncePerMonitorPeriodAndAlphaDecaysBetweenCnps) {
  const DcqcnConfig c = cfg();
  DcqcnRp rp;
  dcqcn_on_cnp(rp, c, 0);
  EXPECT_FALSE(dcqcn_on_cnp(rp, c, 3'999)) << "inside rate_reduce_monitor_period";
  EXPECT_DOUBLE_EQ(rp.rc, 1000);
  // Ten alpha periods (55 us) without a CNP: alpha = (1-g)^10.
  const Nanos t = 10 * 55'000;
  ASSERT_TRUE(dcqcn_on_cnp(rp, c, t));
  const double alpha = std::pow(1 - 1.0 / 256, 10);
  // 550 us is one timer event (300 us): RC 1500 before this cut.
  EXPECT_DOUBLE_EQ(rp.rt, 1500);
  EXPECT_NEAR(rp.rc, 1500 * (1 - alpha / 2), 1e-9);
  EXPECT_NEAR(rp.alpha, (1 - 1.0 / 256) * alpha + 1.0 / 256, 1e-12);
}

TEST(Dcqcn, ByteEventsAndHyperIncrease) {
  DcqcnConfig c = cfg();
  c.rpg_threshold = 2;
  DcqcnRp rp;
  dcqcn_on_cnp(rp, c, 0);
  // Fast recovery while both counters are below F = 2: RT stays.
  dcqcn_advance(rp, c, 1, c.rpg_byte_reset);
  EXPECT_EQ(rp.b_events, 1u);
  EXPECT_DOUBLE_EQ(rp.rt, 2000);
  EXPECT_DOUBLE_EQ(rp.rc, 1500);
  // Cut again from there, then drive both counters past F: additive, then hyper.
  dcqcn_on_cnp(rp, c, 10'000);
  const double rc0 = rp.rc;
  EXPECT_DOUBLE_EQ(rp.rt, 1500);
  for (unsigned k = 1; k <= 3; ++k) dcqcn_advance(rp, c, 10'000 + k * 300'000, 0);  // T = 3
  dcqcn_advance(rp, c, 10'000 + 3 * 300'000, 3ull * c.rpg_byte_reset);                 // B = 3
  EXPECT_EQ(rp.t_events, 3u);
  EXPECT_EQ(rp.b_events, 3u);
  // Events: T1 (fast), T2 (additive: hi=2), T3 (additive), B1 (additive), B2
  // (additive), B3 (hyper: min(3,3) - 2 = 1 step of 50 Mb/s).
  EXPECT_DOUBLE_EQ(rp.rt, 1500 + 4 * 5 + 50);
  EXPECT_GT(rp.rc, rc0);
}

// The paper's F = 5: five timer events of fast recovery -- RC halves its
// distance to RT, RT stays -- before additive increase starts.
TEST(Dcqcn, BelowTheThresholdRecoveryIsFast) {
  DcqcnConfig c;
  c.rp_enabled = true;
  c.line_rate_mbps = 2000;
  c.rpg_threshold = 5;
  DcqcnRp rp;
  dcqcn_on_cnp(rp, c, 0);
  dcqcn_on_cnp(rp, c, 10'000);  // a second cut: RT 1000, RC 500
  ASSERT_DOUBLE_EQ(rp.rt, 1000);
  ASSERT_DOUBLE_EQ(rp.rc, 500);
  double rc = 500;
  for (unsigned k = 1; k <= 4; ++k) {
    dcqcn_advance(rp, c, 10'000 + k * c.rpg_time_reset_ns, 0);
    rc = (1000 + rc) / 2;
    EXPECT_DOUBLE_EQ(rp.rt, 1000) << "fast recovery keeps the target, event " << k;
    EXPECT_DOUBLE_EQ(rp.rc, rc) << "event " << k;
  }
  dcqcn_advance(rp, c, 10'000 + 5 * c.rpg_time_reset_ns, 0);
  EXPECT_DOUBLE_EQ(rp.rt, 1005) << "the fifth event reaches F: additive increase";
}

TEST(Dcqcn, NeverBelowTheMinimumRate) {
  DcqcnConfig c = cfg();
  c.line_rate_mbps = 3;
  c.rpg_min_rate_mbps = 2;
  DcqcnRp rp;
  for (Nanos t = 0; t < 100'000; t += 5'000) dcqcn_on_cnp(rp, c, t);
  EXPECT_DOUBLE_EQ(rp.rc, 2);
}

}  // namespace
}  // namespace vf::engine
