// Min-hop routes through a fabric's switches, as a subnet manager computes
// them for IB linear forwarding tables and as the daemon programs static FDBs
// on Ethernet switches: for every switch, the egress port towards every HCA.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "daemon/config.hpp"

namespace vf {

// routes[switch][hca] = egress port number. HCAs unreachable from a switch
// (a partitioned topology) are absent.
using Routes = std::map<std::string, std::map<std::string, uint32_t>>;

Routes compute_min_hop_routes(const config::Fabric& fabric);

}  // namespace vf
