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

namespace vf::test {

inline rte_mempool* test_mbuf_pool() {
  static rte_mempool* pool = [] {
    rte_mempool* p = rte_pktmbuf_pool_create("vf_test_pool", 8191, 256, 0,
                                             RTE_PKTMBUF_HEADROOM + 4608, SOCKET_ID_ANY);
    if (!p) std::abort();
    return p;
  }();
  return pool;
}

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
