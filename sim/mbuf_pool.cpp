#include "sim/mbuf_pool.hpp"

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <sched.h>

#include <stdexcept>
#include <vector>

namespace vf::sim {

void init_eal(const std::string& prefix, unsigned megabytes) {
  std::vector<std::string> args = {"vfabric-sim", "--no-huge", "--no-pci", "--no-shconf", "--no-telemetry",
                                   "-m", std::to_string(megabytes), "--log-level=lib.eal:error", "--file-prefix=" + prefix};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  // The EAL pins this thread to its main lcore; programs started from this
  // process (fabricd, perftest) would inherit one CPU between them.
  cpu_set_t cpus;
  const bool saved = sched_getaffinity(0, sizeof cpus, &cpus) == 0;
  if (rte_eal_init(int(argv.size()), argv.data()) < 0) throw std::runtime_error("rte_eal_init failed");
  if (saved) sched_setaffinity(0, sizeof cpus, &cpus);
}

}  // namespace vf::sim
