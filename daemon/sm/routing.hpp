// The subnet manager's routing, and the static FDBs of Ethernet switches:
// for every switch, the egress port towards every HCA.
//  - Min-hop (routing.cpp): the fewest hops; on a topology with a cycle of
//    switches it may route a set of flows around that cycle, which with
//    credit flow control can deadlock (credit_loops.hpp finds such cycles).
//  - Up/Down (updn_routing.cpp): switches ranked by hops from root switches;
//    a route climbs towards the roots, then only descends, never down then
//    up again, so the channels it uses cannot form a cycle.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"

namespace vf {

// routes[switch][hca] = egress port number. HCAs unreachable from a switch
// (a partitioned topology) are absent.
using Routes = std::map<std::string, std::map<std::string, uint32_t>>;

// `to_switches`: routes[switch][other switch] instead, the way to each
// switch's own port 0 (0 for itself) -- where LID-routed MADs for a switch,
// and the SA's on the SM's switch, are addressed.
Routes compute_min_hop_routes(const config::Fabric& fabric, bool to_switches = false);

// groups[switch][hca] = every port, ascending, by which Up/Down reaches the
// HCA in as few hops as by the routed one -- what adaptive routing may choose
// among (any of them keeps the route up*/down*, so no credit loop). Only
// switches with two or more such ports have an entry.
using ArGroups = std::map<std::string, std::map<std::string, std::vector<uint8_t>>>;

// Up/Down from `roots` (switch names; empty: default_updn_roots()); with
// `groups`, their AR groups too (HCA destinations only).
Routes compute_updn_routes(const config::Fabric& fabric, const std::vector<std::string>& roots,
                           bool to_switches = false, ArGroups* groups = nullptr);
// The switches with no HCA attached -- the top of a fat-tree -- or, when
// every switch has HCAs, the first switch.
std::vector<std::string> default_updn_roots(const config::Fabric& fabric);

// What the fabric's sm: section asks for (min-hop on Ethernet); `groups`
// as compute_updn_routes (left empty with min-hop: the config allows
// adaptive routing with updn only).
Routes compute_routes(const config::Fabric& fabric, bool to_switches = false, ArGroups* groups = nullptr);

}  // namespace vf
