// Directed-route SMPs hop by hop (IBA 14.2.2): a requester, switches and a
// destination each apply dr_start / dr_receive / dr_respond to the MAD as it
// travels, and the path written into it is the one it took.
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "daemon/mad/dr_smp.hpp"

namespace vf::mad {
namespace {

Mad dr_get(std::initializer_list<uint8_t> path) {
  Mad m{};
  m[0] = 1;
  m[1] = kClassSmiDr;
  m[2] = 1;
  m[3] = kGet;
  put_be(&m[32], 2, kPermissiveLid);
  put_be(&m[34], 2, kPermissiveLid);
  unsigned hop = 0;
  for (uint8_t p : path) m[kDrInitialPath + ++hop] = p;
  m[7] = uint8_t(hop);
  return m;
}

// What the SMA does to a request it answers: GetResp with the D bit.
void answer(Mad& m) {
  m[3] = kGetResp;
  set_status(m, kStatusDrDirection);
}

// R (a CA) -1- [1] S1 [3] --- [2] S2 [5] --- [1] D (a CA); S1 and S2 have 8 ports.
struct Chain {
  struct End {
    int node;
    uint8_t port;
  };
  std::map<std::pair<int, uint8_t>, End> cable{{{0, 1}, {1, 1}}, {{1, 1}, {0, 1}}, {{1, 3}, {2, 2}},
                                               {{2, 2}, {1, 3}}, {{2, 5}, {3, 1}}, {{3, 1}, {2, 5}}};
  static bool is_switch(int n) { return n == 1 || n == 2; }
  static unsigned nports(int n) { return is_switch(n) ? 8 : 1; }
  // Carries `m` out of `node`'s `port` and lets each node act until one
  // keeps it (kLocal) or drops it; returns where it stopped and how.
  std::pair<int, DrStep> travel(int node, uint8_t port, Mad& m) {
    for (int hops = 0; hops < 70; ++hops) {
      const auto to = cable.find({node, port});
      if (to == cable.end()) return {node, DrStep::kDrop};
      node = to->second.node;
      const DrAction a = dr_receive(m, is_switch(node), to->second.port, nports(node));
      if (a.step != DrStep::kOut) return {node, a.step};
      port = a.port;
    }
    return {node, DrStep::kDrop};
  }
};

TEST(DrSmp, ARequestFollowsItsInitialPathAndItsResponseRetracesTheReturnPath) {
  Chain c;
  Mad m = dr_get({1, 3, 5});
  const DrAction start = dr_start(m);
  ASSERT_EQ(start.step, DrStep::kOut);
  EXPECT_EQ(start.port, 1);
  auto [at, step] = c.travel(0, start.port, m);
  EXPECT_EQ(at, 3) << "three hops: R -> S1 -> S2 -> D";
  ASSERT_EQ(step, DrStep::kLocal);
  EXPECT_EQ(hop_ptr(m), 4) << "hop_cnt + 1 at the destination";
  EXPECT_EQ(return_path(m, 1), 1) << "S1 was entered by its port 1";
  EXPECT_EQ(return_path(m, 2), 2) << "S2 by its port 2";
  EXPECT_EQ(return_path(m, 3), 1) << "D by its port 1";

  answer(m);
  const DrAction back = dr_respond(m);
  ASSERT_EQ(back.step, DrStep::kOut);
  EXPECT_EQ(back.port, 1) << "out of the port the request came in by";
  std::tie(at, step) = c.travel(3, back.port, m);
  EXPECT_EQ(at, 0) << "back at the requester";
  EXPECT_EQ(step, DrStep::kLocal);
  EXPECT_EQ(hop_ptr(m), 0);
}

TEST(DrSmp, HopCountZeroIsTheRequestersOwnPort) {
  Mad m = dr_get({});
  EXPECT_EQ(dr_start(m).step, DrStep::kLocal);
  answer(m);
  EXPECT_EQ(dr_respond(m).step, DrStep::kLocal);
  EXPECT_EQ(hop_ptr(m), 0);
}

TEST(DrSmp, PathsThatCannotBeFollowedAreDropped) {
  Chain c;
  // A CA does not forward: D is reached after two hops, the third names a port past it.
  Mad through_ca = dr_get({1, 3, 5, 1});
  c.cable[{3, 2}] = {1, 4};
  auto [at, step] = c.travel(0, dr_start(through_ca).port, through_ca);
  EXPECT_EQ(at, 3);
  EXPECT_EQ(step, DrStep::kDrop);

  Mad no_port = dr_get({1, 9});  // S1 has 8 ports
  std::tie(at, step) = c.travel(0, dr_start(no_port).port, no_port);
  EXPECT_EQ(at, 1);
  EXPECT_EQ(step, DrStep::kDrop);

  Mad port_zero = dr_get({1, 0});
  EXPECT_EQ(c.travel(0, dr_start(port_zero).port, port_zero).second, DrStep::kDrop);

  Mad lid_routed_part = dr_get({1, 3});
  put_be(&lid_routed_part[34], 2, 7);  // DrDLID 7: a LID-routed tail, not followed
  EXPECT_EQ(dr_start(lid_routed_part).step, DrStep::kDrop);

  Mad too_long = dr_get({1});
  too_long[7] = 64;  // more hops than the 64-byte path holds
  EXPECT_EQ(dr_start(too_long).step, DrStep::kDrop);

  Mad started_twice = dr_get({1, 3});
  ASSERT_EQ(dr_start(started_twice).step, DrStep::kOut);
  EXPECT_EQ(dr_start(started_twice).step, DrStep::kDrop) << "the hop pointer is no longer 0";
}

TEST(DrSmp, ForgedHopPointersAreDropped) {
  Mad m = dr_get({1, 3, 5});
  EXPECT_EQ(dr_receive(m, true, 1, 8).step, DrStep::kDrop) << "an outgoing SMP never arrives with hop pointer 0";
  set_hop_ptr(m, 9);
  EXPECT_EQ(dr_receive(m, true, 1, 8).step, DrStep::kDrop) << "past the hop count";
  answer(m);
  set_hop_ptr(m, 3);
  EXPECT_EQ(dr_receive(m, false, 1, 1).step, DrStep::kDrop) << "a CA does not pass a response on";
  set_hop_ptr(m, 2);
  EXPECT_EQ(dr_respond(m).step, DrStep::kDrop) << "a response starts at hop_cnt + 1";
}

}  // namespace
}  // namespace vf::mad
