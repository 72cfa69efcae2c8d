// Initialises the DPDK EAL once per test binary with defaults that need no
// hugepages and no NIC, and offers a small mbuf pool. Use from a test's main or
// via ::testing::AddGlobalTestEnvironment(new vf::test::EalEnvironment).
#pragma once

#include <gtest/gtest.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "sim/mbuf_pool.hpp"

namespace vf::test {

// One pool per process, shared with the virtual-time fabric (sim/mbuf_pool.hpp).
inline rte_mempool* test_mbuf_pool() { return sim::mbuf_pool(); }

class EalEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    static bool done = false;
    if (done) return;
    std::vector<std::string> args = {"vf_test",  "--no-huge",  "--no-pci", "--no-shconf",
                                      "--no-telemetry", "-m", "256", "--log-level=lib.eal:error",
                                      "--file-prefix=vf_test"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0) {
      FAIL() << "rte_eal_init failed";
    }
    done = true;
  }
};

}  // namespace vf::test
