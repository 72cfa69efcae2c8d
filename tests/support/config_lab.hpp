// The tests' names for a lab laid out as a config's fabric (sim/config_topology.hpp).
#pragma once

#include "sim/config_topology.hpp"
#include "tests/support/fabric_lab.hpp"

namespace vf::test {
using sim::as_lab_names;
using sim::lab_topology;
}  // namespace vf::test
