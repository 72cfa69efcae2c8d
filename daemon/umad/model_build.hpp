// Copies one IB fabric as it is now into a MadModel (model.hpp): the
// config's nodes and cables, the live port states, the SM's LIDs and the
// switches' LFTs, and -- when asked -- every port's counters. Lcore only.
#pragma once

#include <cstddef>

#include "daemon/config/config.hpp"
#include "daemon/mad/model.hpp"

namespace vf {
class Topology;
}

namespace vf::mad {

// Node order: the fabric's vHCAs in config order, then its switches.
MadModel build_model(const Topology& t, const config::Fabric& f, size_t fabric, bool with_counters);

}  // namespace vf::mad
