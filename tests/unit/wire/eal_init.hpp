// EAL start-up for the non-gtest programs here (benchmark, pcap writer),
// with the same no-hugepage defaults as tests/support/eal_env.hpp.
#pragma once

#include <rte_eal.h>
#include <rte_mbuf.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace vf::test {

inline rte_mempool* init_eal_and_pool(const char* prefix) {
  std::vector<std::string> args = {"vf_wire", "--no-huge", "--no-pci", "--no-shconf", "--no-telemetry",
                                   "-m", "256", "--log-level=lib.eal:error",
                                   std::string("--file-prefix=") + prefix};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  if (rte_eal_init(int(argv.size()), argv.data()) < 0) {
    std::fprintf(stderr, "rte_eal_init failed\n");
    std::exit(1);
  }
  rte_mempool* p = rte_pktmbuf_pool_create("vf_wire_pool", 1023, 0, 0, RTE_PKTMBUF_HEADROOM + 4608,
                                           SOCKET_ID_ANY);
  if (!p) std::exit(1);
  return p;
}

}  // namespace vf::test
