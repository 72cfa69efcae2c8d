// For test binaries that drive libibverbs in-process against one real fabricd
// on the default config: the daemon as a gtest environment (libibverbs reads
// RDMAV_DRIVERS & co. once, at the first device list, so it must start
// before any test), the two fabrics as test parameters, and a bounded wait
// for a completion.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ostream>

#include "fabricd_fixture.hpp"
#include "tests/support/rc_pair.hpp"

namespace vf::test {

inline Fabricd*& daemon_instance() {
  static Fabricd* d = nullptr;
  return d;
}

class DaemonEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    daemon_instance() = new Fabricd(default_config());
    // In-process: the preload shim is linked in or not by the test binary
    // itself; LD_PRELOAD in our own environment would only reach children.
    for (auto& [k, v] : daemon_instance()->app_env(/*preload=*/false))
      setenv(k.c_str(), v.c_str(), 1);
  }
  void TearDown() override {
    delete daemon_instance();
    daemon_instance() = nullptr;
  }
};

struct FabricParam {
  const char* name;
  const char* a;
  const char* b;
  int gid_index;
  friend std::ostream& operator<<(std::ostream& os, const FabricParam& p) { return os << p.name; }
};

inline const FabricParam kIbFabric{"Infiniband", "vib0", "vib1", -1};
inline const FabricParam kRoceFabric{"RoceV2", "vroce0", "vroce1", 1};

// Waits for one completion on `cq`; the deadline only bounds a hang.
inline ibv_wc wait_one(ibv_cq* cq) {
  ibv_wc wc{};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ibv_poll_cq(cq, 1, &wc) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "no completion within 30 s";
      wc.status = IBV_WC_GENERAL_ERR;
      return wc;
    }
  }
  return wc;
}
inline ibv_wc wait_one(VerbsSide& s) { return wait_one(s.cq); }

inline ibv_qp_state qp_state(ibv_qp* qp) {
  ibv_qp_attr at{};
  ibv_qp_init_attr ia{};
  if (ibv_query_qp(qp, &at, IBV_QP_STATE, &ia)) return IBV_QPS_UNKNOWN;
  return at.qp_state;
}

}  // namespace vf::test
