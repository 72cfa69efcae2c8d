// The subnet manager's multicast trees on the fat tree: every member gets a
// group's datagram exactly once whoever sends it, nothing else does, no
// switch sees it twice, and branches without members carry nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/sm/mcast_tree.hpp"
#include "daemon/sm/routing.hpp"

namespace vf::sm {
namespace {

const std::string kFatTree = std::string(VF_SOURCE_DIR) + "/configs/fat-tree.yaml";

// What a datagram from `sender` does under `tree`, forwarded as IBA switches
// replicate (every port of the mask but the ingress port).
struct Flood {
  std::map<std::string, int> delivered;       // HCA -> copies
  std::map<std::string, int> switch_visits;   // switch -> times reached
  int links_used = 0;
};

Flood flood(const config::Fabric& f, const McastTree& tree, const std::string& sender) {
  // (node, port) -> (node, port) at the other end of the cable.
  std::map<std::pair<std::string, uint32_t>, std::pair<std::string, uint32_t>> peer;
  for (const config::Link& l : f.links) {
    peer[{l.a.node, l.a.port}] = {l.b.node, l.b.port};
    peer[{l.b.node, l.b.port}] = {l.a.node, l.a.port};
  }
  Flood out;
  std::vector<std::pair<std::string, uint32_t>> arriving{peer.at({sender, 1})};  // (switch, port) a copy enters by
  while (!arriving.empty()) {
    const auto [sw, in] = arriving.back();
    arriving.pop_back();
    if (!f.find_switch(sw)) {
      ++out.delivered[sw];
      continue;
    }
    if (++out.switch_visits[sw] > 4) break;  // a loop: stop, the asserts report it
    const auto it = tree.find(sw);
    if (it == tree.end()) continue;
    for (uint32_t p = 1; p < 256; ++p)
      if (it->second.test(p) && p != in) {
        ++out.links_used;
        arriving.push_back(peer.at({sw, p}));
      }
  }
  return out;
}

void expect_exactly_members(const config::Fabric& f, const McastTree& tree, const std::set<std::string>& members) {
  for (const config::Hca& sender : f.hcas) {
    const Flood fl = flood(f, tree, sender.name);
    for (const config::Hca& h : f.hcas) {
      const int want = members.count(h.name) && h.name != sender.name ? 1 : 0;
      auto it = fl.delivered.find(h.name);
      EXPECT_EQ(it == fl.delivered.end() ? 0 : it->second, want) << "from " << sender.name << " to " << h.name;
    }
    for (const auto& [sw, n] : fl.switch_visits) EXPECT_EQ(n, 1) << "from " << sender.name << ": " << sw;
  }
}

config::Fabric without_link(config::Fabric f, const std::string& node, uint32_t port) {
  f.links.erase(std::remove_if(f.links.begin(), f.links.end(),
                               [&](const config::Link& l) {
                                 return (l.a.node == node && l.a.port == port) || (l.b.node == node && l.b.port == port);
                               }),
                f.links.end());
  return f;
}

std::vector<unsigned> ports(const McastTree& t, const std::string& sw) {
  std::vector<unsigned> out;
  if (auto it = t.find(sw); it != t.end())
    for (unsigned p = 1; p < 256; ++p)
      if (it->second.test(p)) out.push_back(p);
  return out;
}

TEST(McastTree, SpansTheMembersFromTheUpDownRoot) {
  const config::Config cfg = config::load_config(kFatTree);
  const config::Fabric& f = cfg.fabrics.at(0);
  const std::set<std::string> members{"vib0", "vib5", "vib10"};
  const McastTree t = compute_mcast_tree(f, default_updn_roots(f), members);
  // spine0 (the first root) joins leaves 0-2; each leaf adds its member port.
  EXPECT_EQ(ports(t, "spine0"), (std::vector<unsigned>{1, 2, 3}));
  EXPECT_EQ(ports(t, "leaf0"), (std::vector<unsigned>{1, 5}));
  EXPECT_EQ(ports(t, "leaf1"), (std::vector<unsigned>{2, 5}));
  EXPECT_EQ(ports(t, "leaf2"), (std::vector<unsigned>{3, 5}));
  // Off the tree: one port towards it, so a sender there reaches the group.
  EXPECT_EQ(ports(t, "leaf3"), (std::vector<unsigned>{5}));
  EXPECT_EQ(ports(t, "spine1"), (std::vector<unsigned>{1}));
  expect_exactly_members(f, t, members);
  // Only the member branches carry a member's datagram: leaf0 -> spine0,
  // spine0 -> leaf1 and leaf2, each of those -> its member. Not leaf3, not spine1.
  EXPECT_EQ(flood(f, t, "vib0").links_used, 5);
}

TEST(McastTree, MembersOnOneLeafStayThere) {
  const config::Config cfg = config::load_config(kFatTree);
  const config::Fabric& f = cfg.fabrics.at(0);
  const std::set<std::string> members{"vib12", "vib14"};
  const McastTree t = compute_mcast_tree(f, default_updn_roots(f), members);
  EXPECT_EQ(ports(t, "leaf3"), (std::vector<unsigned>{1, 3}));
  EXPECT_EQ(ports(t, "spine0"), (std::vector<unsigned>{4})) << "towards the tree, down to leaf3";
  expect_exactly_members(f, t, members);
  EXPECT_EQ(flood(f, t, "vib12").switch_visits.size(), 1u) << "a member's datagram never leaves its leaf";
}

TEST(McastTree, ALinkDownIsRoutedAroundThroughTheOtherSpine) {
  const config::Config cfg = config::load_config(kFatTree);
  const config::Fabric up = without_link(cfg.fabrics.at(0), "leaf1", 5);  // leaf1 - spine0 down
  const std::set<std::string> members{"vib0", "vib5", "vib10", "vib15"};
  const McastTree t = compute_mcast_tree(up, default_updn_roots(cfg.fabrics.at(0)), members);
  EXPECT_EQ(ports(t, "leaf1"), (std::vector<unsigned>{2, 6})) << "reached through spine1";
  expect_exactly_members(up, t, members);
}

TEST(McastTree, EachConnectedPartGetsItsOwnTree) {
  const config::Config cfg = config::load_config(kFatTree);
  // leaf3 cut off from both spines.
  const config::Fabric split = without_link(without_link(cfg.fabrics.at(0), "leaf3", 5), "leaf3", 6);
  const std::set<std::string> members{"vib0", "vib12", "vib13"};
  const McastTree t = compute_mcast_tree(split, default_updn_roots(cfg.fabrics.at(0)), members);
  EXPECT_EQ(ports(t, "leaf3"), (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(flood(split, t, "vib12").delivered, (std::map<std::string, int>{{"vib13", 1}}));
  EXPECT_EQ(flood(split, t, "vib1").delivered, (std::map<std::string, int>{{"vib0", 1}}));
}

TEST(McastTree, NoMembersNoEntries) {
  const config::Config cfg = config::load_config(kFatTree);
  const config::Fabric& f = cfg.fabrics.at(0);
  EXPECT_TRUE(compute_mcast_tree(f, default_updn_roots(f), {}).empty());
  EXPECT_TRUE(compute_mcast_tree(f, default_updn_roots(f), {"no-such-hca"}).empty());
}

}  // namespace
}  // namespace vf::sm
