// The virtual-time fabric built from fabricd's own config
// (sim/config_fabric.hpp): configs/default.yaml through the daemon's parser,
// Topology and subnet manager, RC WRITEs across each of its two fabrics --
// on RoCEv2 after ARP on the wire -- with the data checked, and the same run
// twice giving the same emulated completion time.
#include "sim/config_fabric.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"

namespace vf::sim {
namespace {

struct WriteRun {
  unsigned ok = 0, failed = 0;
  bool delivered = false;
  Nanos finished = 0;  // emulated time when the last completion was reaped
};

// `wrs` RDMA WRITEs of 64 KiB from vHCA `from` to vHCA `to`, all posted at once.
WriteRun write_between(const config::Config& cfg, const std::string& from, const std::string& to,
                       unsigned wrs = 4) {
  constexpr uint32_t kBytes = 65536;
  ConfigFabric f(cfg);
  const size_t a = f.index(from), b = f.index(to);
  App& A = f.app(a);
  App& B = f.app(b);
  std::vector<uint8_t> src(size_t(kBytes) * wrs), dst(src.size(), 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 7 + 1);
  const uint32_t pa = A.alloc_pd(), pb = B.alloc_pd();
  const auto smr = A.mr(pa, src.data(), src.size());
  const auto dmr = B.mr(pb, dst.data(), dst.size());
  auto cqa = A.cq(), cqb = B.cq();
  auto qa = A.qp(pa, *cqa, *cqa), qb = B.qp(pb, *cqb, *cqb);
  f.connect(a, *qa, b, *qb);
  for (unsigned k = 0; k < wrs; ++k) {
    vhca_send_wqe w = send_wqe(k, {sge(src.data() + size_t(k) * kBytes, kBytes, smr.lkey)}, IBV_SEND_SIGNALED,
                               IBV_WR_RDMA_WRITE);
    w.remote_addr = reinterpret_cast<uint64_t>(dst.data()) + size_t(k) * kBytes;
    w.rkey = dmr.rkey;
    A.post_send(*qa, w);
  }
  WriteRun r;
  f.run_until([&] {
    vhca_cqe e;
    while (A.poll_cq(*cqa, e)) e.status == IBV_WC_SUCCESS ? ++r.ok : ++r.failed;
    return r.ok + r.failed == wrs;
  });
  r.delivered = src == dst;
  r.finished = f.sched.now();
  return r;
}

config::Config default_config() { return config::load_config(VF_SOURCE_DIR "/configs/default.yaml"); }

TEST(ConfigFabric, DefaultConfigCarriesRcWritesOnBothFabrics) {
  const config::Config cfg = default_config();
  for (const auto& [from, to] : {std::pair{"vib0", "vib1"}, std::pair{"vroce0", "vroce1"}}) {
    SCOPED_TRACE(from);
    const WriteRun r = write_between(cfg, from, to);
    EXPECT_EQ(r.ok, 4u);
    EXPECT_EQ(r.failed, 0u);
    EXPECT_TRUE(r.delivered);
    // 256 KiB cannot cross a link in no time: the clock moved.
    EXPECT_GT(r.finished, 0u);
  }
}

TEST(ConfigFabric, SameConfigSameEmulatedTimes) {
  const config::Config cfg = default_config();
  for (const auto& [from, to] : {std::pair{"vib0", "vib1"}, std::pair{"vroce0", "vroce1"}}) {
    SCOPED_TRACE(from);
    const WriteRun first = write_between(cfg, from, to, 2);
    const WriteRun second = write_between(cfg, from, to, 2);
    EXPECT_EQ(first.finished, second.finished);
    // and more data takes longer: the time is the fabric's, not a constant
    EXPECT_LT(first.finished, write_between(cfg, from, to, 4).finished);
  }
}

TEST(ConfigFabric, NamesAVhcaTheConfigDoesNotHave) {
  const config::Config cfg = default_config();
  ConfigFabric f(cfg);
  EXPECT_EQ(f.size(), cfg.hcas().size());
  try {
    f.index("vib9");
    FAIL() << "vib9 was found";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("vib9"), std::string::npos);
  }
}

}  // namespace
}  // namespace vf::sim
