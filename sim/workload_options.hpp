// vfabric-sim's command line turned into what it runs: which fabric of the
// config, which vHCAs the ranks sit on, and the plan. Separate from main so
// placement and plan choice are unit-tested without a fabric.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"
#include "sim/plan.hpp"
#include "sim/plan_run.hpp"

namespace vf::sim {

struct WorkloadOptions {
  std::string fabric;               // empty: the config's first fabric
  size_t ranks = 0;                 // 0: every vHCA of the fabric
  std::string placement = "linear";  // linear | strided:K | random[:SEED]
  std::string workload = "allreduce";
  std::string algo;                 // empty: ring (alltoall: direct)
  std::string size = "64MiB";
  std::string flows_file;
  size_t receiver = 0;              // incast
  size_t senders = 0;               // incast: 0 = every other rank
  uint64_t seed = 1;                // permutation, random placement
};

// `cfg` with only the fabric named `name` (empty: the first), its HCAs
// numbered from 0: the simulator builds what it runs and nothing else.
// Throws std::invalid_argument naming the fabrics there are.
config::Config only_fabric(const config::Config& cfg, const std::string& name);
// The vHCAs (0..hcas-1, config order) of `ranks` ranks (0: one per vHCA),
// rank i on the i-th: linear, strided:K (i*K mod hcas, then the next free
// one) or random[:SEED]. Throws std::invalid_argument.
std::vector<size_t> place_ranks(size_t hcas, size_t ranks, const std::string& placement, uint64_t seed);
// The plan the options describe; throws std::invalid_argument saying what to fix.
Plan make_plan(const WorkloadOptions& o, size_t ranks);

}  // namespace vf::sim
