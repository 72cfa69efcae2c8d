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

// Up/Down from `roots` (switch names; empty: default_updn_roots()).
Routes compute_updn_routes(const config::Fabric& fabric, const std::vector<std::string>& roots,
                           bool to_switches = false);
// The switches with no HCA attached -- the top of a fat-tree -- or, when
// every switch has HCAs, the first switch.
std::vector<std::string> default_updn_roots(const config::Fabric& fabric);

// What the fabric's sm: section asks for (min-hop on Ethernet).
Routes compute_routes(const config::Fabric& fabric, bool to_switches = false);

}  // namespace vf
