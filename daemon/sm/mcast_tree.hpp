// The subnet manager's multicast trees: for one MLID, the port mask every
// switch's MulticastForwardingTable gets so that a datagram from any HCA
// reaches every member HCA exactly once.
//
// As opensm builds them: a spanning tree of the switches from the Up/Down
// root (the first root of each connected part that has one, else its first
// switch), breadth first in config order; pruned to the branches that lead
// to member HCAs and trimmed above their highest branch point, so it is the
// least subtree that joins the members. The switches of that tree forward to their tree links and
// member ports (a switch never sends a packet back out of its ingress port,
// so one tree serves every sender). Every other switch of the part gets the
// one port towards the tree, so a sender that has not joined (IBA's
// SendOnlyNonMember) reaches the group without loading branches with no
// member.
#pragma once

#include <bitset>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"

namespace vf::sm {

using McastPorts = std::bitset<256>;  // bit n = switch port n
// switch name -> its ports for the MLID; switches not reached are absent.
using McastTree = std::map<std::string, McastPorts>;

// `fabric` holds the links that are up; `members` names HCAs.
McastTree compute_mcast_tree(const config::Fabric& fabric, const std::vector<std::string>& roots,
                             const std::set<std::string>& members);

}  // namespace vf::sm
