// Workload plans (sim/plan.hpp) and vfabric-sim's placement: every
// collective sends and receives what its algorithm's formula says (the
// figures nccl-tests' bus bandwidth is built on), to the peers it names;
// flows, incasts and permutations are what they claim; bad input is refused
// with where and why.
#include "sim/plan.hpp"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "sim/workload_options.hpp"

namespace vf::sim {
namespace {

// Every step's send is the matching receive at its peer, byte for byte.
void expect_consistent(const Plan& p) {
  for (size_t r = 0; r < p.ranks.size(); ++r)
    for (size_t s = 0; s < p.ranks[r].size(); ++s) {
      const Step& st = p.ranks[r][s];
      if (st.send_to < 0) continue;
      const Step& in = p.ranks.at(size_t(st.send_to)).at(size_t(st.peer_step));
      EXPECT_EQ(in.recv_from, int(r)) << "rank " << r << " step " << s;
      EXPECT_EQ(in.recv_bytes, st.send_bytes) << "rank " << r << " step " << s;
    }
}

TEST(Plan, RingAllReduceSendsTwiceNMinusOneOverNOfTheBufferToItsNeighbour) {
  const size_t n = 8;
  const uint64_t bytes = 8 << 20;
  const Plan p = collective_plan(Collective::AllReduce, Algorithm::Ring, n, bytes);
  EXPECT_DOUBLE_EQ(p.bus_factor, 2.0 * 7 / 8);
  expect_consistent(p);
  for (size_t r = 0; r < n; ++r) {
    EXPECT_EQ(p.ranks[r].size(), 2 * (n - 1));
    EXPECT_EQ(p.sent_by(r), 2 * (n - 1) * bytes / n);
    EXPECT_EQ(p.received_by(r), 2 * (n - 1) * bytes / n);
    for (const Step& s : p.ranks[r]) {
      EXPECT_EQ(s.send_to, int((r + 1) % n));
      EXPECT_EQ(s.recv_from, int((r + n - 1) % n));
    }
    EXPECT_EQ(p.ranks[r][0].wait, Wait::None);
    EXPECT_EQ(p.ranks[r][1].wait, Wait::Piece);
  }
}

TEST(Plan, ARingSplitsABufferThatDoesNotDivideEvenly) {
  const Plan p = collective_plan(Collective::AllReduce, Algorithm::Ring, 3, 1000);
  expect_consistent(p);
  EXPECT_EQ(p.total_bytes(), 2u * 2 * 1000);  // 2(N-1) chunks of every byte's share, over all ranks
  // Each step forwards the chunk that arrived the step before: same size.
  for (size_t r = 0; r < 3; ++r)
    for (size_t s = 1; s < p.ranks[r].size(); ++s) EXPECT_EQ(p.ranks[r][s].send_bytes, p.ranks[r][s - 1].recv_bytes);
}

TEST(Plan, HalvingDoublingExchangesWithPartnersAPowerOfTwoAway) {
  const size_t n = 16;
  const uint64_t bytes = 1 << 20;
  const Plan p = collective_plan(Collective::AllReduce, Algorithm::HalvingDoubling, n, bytes);
  expect_consistent(p);
  for (size_t r = 0; r < n; ++r) {
    ASSERT_EQ(p.ranks[r].size(), 8u);  // log2(16) halving + log2(16) doubling
    EXPECT_EQ(p.sent_by(r), 2 * (n - 1) * bytes / n);
    EXPECT_EQ(p.ranks[r][0].send_to, int(r ^ 8));
    EXPECT_EQ(p.ranks[r][0].send_bytes, bytes / 2);
    EXPECT_EQ(p.ranks[r][3].send_to, int(r ^ 1));
    EXPECT_EQ(p.ranks[r][4].send_to, int(r ^ 1));
    EXPECT_EQ(p.ranks[r][4].send_bytes, bytes / n);
    EXPECT_EQ(p.ranks[r][7].send_bytes, bytes / 2);
    EXPECT_EQ(p.ranks[r][1].wait, Wait::Step);
  }
}

TEST(Plan, AllGatherAndReduceScatterAreOneHalfOfAllReduce) {
  for (Algorithm a : {Algorithm::Ring, Algorithm::HalvingDoubling})
    for (Collective c : {Collective::AllGather, Collective::ReduceScatter}) {
      const Plan p = collective_plan(c, a, 8, 1 << 20);
      expect_consistent(p);
      EXPECT_DOUBLE_EQ(p.bus_factor, 7.0 / 8);
      for (size_t r = 0; r < 8; ++r) EXPECT_EQ(p.sent_by(r), 7u * (1 << 20) / 8) << to_string(c) << to_string(a);
    }
}

TEST(Plan, AllToAllSendsAnNthToEveryOtherRankOnce) {
  const size_t n = 6;
  const Plan p = collective_plan(Collective::AllToAll, Algorithm::Direct, n, 6000);
  expect_consistent(p);
  for (size_t r = 0; r < n; ++r) {
    std::set<int> to;
    for (const Step& s : p.ranks[r]) {
      EXPECT_EQ(s.send_bytes, 1000u);
      EXPECT_EQ(s.wait, Wait::None);
      to.insert(s.send_to);
    }
    EXPECT_EQ(to.size(), n - 1);
    EXPECT_FALSE(to.count(int(r)));
  }
}

TEST(Plan, WhatCannotRunSaysWhy) {
  EXPECT_NE(plan_problem(Collective::AllReduce, Algorithm::HalvingDoubling, 6, 1 << 20).find("power-of-two"),
            std::string::npos);
  EXPECT_NE(plan_problem(Collective::AllToAll, Algorithm::Ring, 4, 1 << 20).find("direct"), std::string::npos);
  EXPECT_NE(plan_problem(Collective::AllReduce, Algorithm::Ring, 1, 1 << 20).find("2 ranks"), std::string::npos);
  EXPECT_NE(plan_problem(Collective::AllReduce, Algorithm::Ring, 8, 4).find("one byte per rank"), std::string::npos);
  EXPECT_THROW(collective_plan(Collective::AllReduce, Algorithm::HalvingDoubling, 6, 1 << 20), std::invalid_argument);
  EXPECT_EQ(parse_collective("all_reduce"), Collective::AllReduce);
  EXPECT_EQ(parse_collective("AllToAll"), Collective::AllToAll);
  EXPECT_FALSE(parse_collective("broadcast"));
  EXPECT_EQ(parse_algorithm("hd"), Algorithm::HalvingDoubling);
}

TEST(Plan, IncastAndPermutation) {
  const Plan in = incast_plan(8, 3, {0, 1, 2}, 4096);
  expect_consistent(in);
  EXPECT_EQ(in.received_by(3), 3u * 4096);
  EXPECT_EQ(in.ranks[3].size(), 3u);
  EXPECT_THROW(incast_plan(8, 3, {3}, 4096), std::invalid_argument);

  for (size_t n : {2u, 3u, 7u, 64u}) {
    const Plan p = permutation_plan(n, 1000, 42);
    expect_consistent(p);
    std::set<int> targets;
    for (size_t r = 0; r < n; ++r) {
      EXPECT_EQ(p.sent_by(r), 1000u);
      EXPECT_EQ(p.received_by(r), 1000u);
      for (const Step& s : p.ranks[r])
        if (s.send_to >= 0) {
          EXPECT_NE(s.send_to, int(r));
          targets.insert(s.send_to);
        }
    }
    EXPECT_EQ(targets.size(), n);
    // The same seed, the same permutation.
    EXPECT_EQ(permutation_plan(n, 1000, 42).ranks[0][0].send_to, p.ranks[0][0].send_to);
  }
}

TEST(Plan, AFlowListIsReadWithUnitsCommentsAndStartTimes) {
  std::istringstream in("# src dst bytes start\n0 1 64KiB\n2 1 4096 10us  # late\n\n3 0 1MiB 1.5ms\n");
  const Plan p = flows_plan(4, in, "t.txt");
  expect_consistent(p);
  EXPECT_EQ(p.received_by(1), 65536u + 4096);
  EXPECT_EQ(p.ranks[2][0].start, 10'000u);
  EXPECT_EQ(p.ranks[3][0].start, 1'500'000u);
  EXPECT_EQ(p.bytes, 1u << 20);
  auto error = [](const std::string& text) {
    std::istringstream bad(text);
    try {
      flows_plan(4, bad, "t.txt");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error("0 1 64KiB\n0 9 1KiB\n").find("t.txt:2:"), std::string::npos);
  EXPECT_NE(error("0 0 1KiB\n").find("sends to itself"), std::string::npos);
  EXPECT_NE(error("0 1 lots\n").find("not a size"), std::string::npos);
  EXPECT_NE(error("0 1 1KiB soon\n").find("not a start time"), std::string::npos);
  EXPECT_NE(error("0 1 1KiB 0 extra\n").find("'extra'"), std::string::npos);
  EXPECT_NE(error("# nothing\n").find("no flows"), std::string::npos);
  std::istringstream one("0 1 1KiB\n");
  EXPECT_THROW(flows_plan(1, one, "t.txt"), std::invalid_argument);
}

TEST(Placement, LinearStridedAndRandomPlaceEachRankOnItsOwnVhca) {
  EXPECT_EQ(place_ranks(8, 0, "linear", 1), (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(place_ranks(8, 4, "linear", 1), (std::vector<size_t>{0, 1, 2, 3}));
  // Stride 2 over 8: one rank per pair of hosts first, then the rest.
  EXPECT_EQ(place_ranks(8, 0, "strided:2", 1), (std::vector<size_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  const auto a = place_ranks(64, 0, "random:7", 1), b = place_ranks(64, 0, "random:7", 99);
  EXPECT_EQ(a, b);  // the placement's own seed wins
  EXPECT_EQ(std::set<size_t>(a.begin(), a.end()).size(), 64u);
  EXPECT_NE(a, place_ranks(64, 0, "linear", 1));
  EXPECT_THROW(place_ranks(8, 9, "linear", 1), std::invalid_argument);
  EXPECT_THROW(place_ranks(8, 0, "diagonal", 1), std::invalid_argument);
  EXPECT_THROW(place_ranks(8, 0, "strided:0", 1), std::invalid_argument);
}

TEST(Placement, MakePlanNamesWhatToFix) {
  WorkloadOptions o;
  o.workload = "allreduce";
  o.size = "lots";
  EXPECT_THROW(make_plan(o, 8), std::invalid_argument);
  o.size = "1MiB";
  EXPECT_EQ(make_plan(o, 8).algo, "ring");
  o.workload = "alltoall";
  EXPECT_EQ(make_plan(o, 8).algo, "direct");
  o.workload = "broadcast";
  try {
    make_plan(o, 8);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("allreduce, allgather"), std::string::npos);
  }
  o.workload = "flows";
  EXPECT_THROW(make_plan(o, 1), std::invalid_argument);  // before any file is read
  o.workload = "incast";
  o.receiver = 8;
  EXPECT_THROW(make_plan(o, 8), std::invalid_argument);
  o.receiver = 0;
  o.senders = 3;
  EXPECT_EQ(make_plan(o, 8).received_by(0), 3u << 20);
}

}  // namespace
}  // namespace vf::sim
