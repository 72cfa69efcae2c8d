// The tests' names for the virtual-time lab (sim/lab.hpp).
#pragma once

#include "sim/lab.hpp"
#include "tests/support/eal_env.hpp"
#include "tests/support/engine_app.hpp"

namespace vf::test {
using sim::FabricLab;
using sim::LabConfig;
using sim::LabHost;
using sim::LabTopology;
using sim::WriteFlow;
}  // namespace vf::test
