// A hostile application: it writes whatever it likes into the rings it
// shares with fabricd -- garbage WQEs naming other clients' keys and memory
// it never registered, impossible producer indices, a CQ consumer index
// that runs ahead of the producer. fabricd must survive, touch nothing the
// hostile client does not own, and keep serving an honest pair meanwhile.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "device/abi/vhca_abi.h"
#include "verbs_fixture.hpp"

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

// The shared-memory mappings of this process whose memfd name is `name`,
// by start address.
std::set<uintptr_t> mappings(const std::string& name) {
  std::set<uintptr_t> out;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("/memfd:" + name + " ") != std::string::npos)
      out.insert(std::stoull(line.substr(0, line.find('-')), nullptr, 16));
  return out;
}

uintptr_t the_new_one(const std::set<uintptr_t>& before, const std::set<uintptr_t>& after) {
  uintptr_t found = 0;
  for (uintptr_t a : after)
    if (!before.count(a)) found = a;
  return found;
}

struct Rings {
  vhca_ring_hdr* sq = nullptr;
  vhca_ring_hdr* rq = nullptr;
  vhca_ring_hdr* cq = nullptr;
};

// Opens `s` and finds the rings its CQ and QP got.
Rings open_and_find_rings(VerbsSide& s, const char* dev, const SideParams& p) {
  const auto sq0 = mappings("vhca-sq"), rq0 = mappings("vhca-rq"), cq0 = mappings("vhca-cq");
  open_side(s, dev, p);
  Rings r;
  r.sq = reinterpret_cast<vhca_ring_hdr*>(the_new_one(sq0, mappings("vhca-sq")));
  r.rq = reinterpret_cast<vhca_ring_hdr*>(the_new_one(rq0, mappings("vhca-rq")));
  r.cq = reinterpret_cast<vhca_ring_hdr*>(the_new_one(cq0, mappings("vhca-cq")));
  return r;
}

vhca_send_wqe* sq_slot(vhca_ring_hdr* h, uint32_t index, uint32_t entries) {
  return reinterpret_cast<vhca_send_wqe*>(reinterpret_cast<char*>(h + 1)) + (index & (entries - 1));
}

class HostileApp : public ::testing::TestWithParam<FabricParam> {
 protected:
  void SetUp() override {
    SideParams p;
    p.gid_index = GetParam().gid_index;
    p.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    open_side(h1_, GetParam().a, params());
    open_side(h2_, GetParam().b, params());
    connect_to(h1_, h2_, connect_params());
    connect_to(h2_, h1_, connect_params());
    open_hostile_pair();
    std::memset(h1_.buf.data(), 0x11, h1_.buf.size());
    std::memset(h2_.buf.data(), 0x22, h2_.buf.size());
    std::memset(canary_, 0x5c, sizeof(canary_));
  }

  SideParams params() const {
    SideParams p;
    p.gid_index = GetParam().gid_index;
    p.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    return p;
  }
  ConnectParams connect_params() const {
    ConnectParams c;
    c.gid_index = GetParam().gid_index;
    c.qp_access = params().mr_access;
    c.timeout = 8;  // ~1 ms: failures surface quickly
    c.retry_cnt = 2;
    return c;
  }
  void open_hostile_pair() {
    x_ = std::make_unique<VerbsSide>();
    y_ = std::make_unique<VerbsSide>();
    rings_ = open_and_find_rings(*x_, GetParam().a, params());
    open_side(*y_, GetParam().b, params());
    ASSERT_NE(rings_.sq, nullptr);
    ASSERT_NE(rings_.cq, nullptr);
    connect_to(*x_, *y_, connect_params());
    connect_to(*y_, *x_, connect_params());
  }
  void reopen_hostile_pair() {
    open_hostile_pair();
  }

  // The honest pair still works, with its data intact.
  void expect_honest_pair_served() {
    std::memset(h1_.buf.data(), 'h', 4096);
    ASSERT_EQ(post_recv(h2_, 1, {sge(h2_, 8192, 4096)}), 0);
    ASSERT_EQ(post_send(h1_, 2, {sge(h1_, 0, 4096)}), 0);
    ibv_wc s = wait_one(h1_), r = wait_one(h2_);
    EXPECT_EQ(s.status, IBV_WC_SUCCESS) << ibv_wc_status_str(s.status);
    EXPECT_EQ(r.status, IBV_WC_SUCCESS) << ibv_wc_status_str(r.status);
    EXPECT_TRUE(std::all_of(h2_.buf.begin() + 8192, h2_.buf.begin() + 12288,
                            [](char ch) { return ch == 'h'; }));
  }
  // Nothing outside the hostile pair's own memory changed.
  void expect_nothing_else_touched() {
    EXPECT_TRUE(std::all_of(std::begin(canary_), std::end(canary_),
                            [](char ch) { return ch == 0x5c; }));
    EXPECT_TRUE(std::all_of(h1_.buf.begin() + 4096, h1_.buf.end(),
                            [](char ch) { return ch == 0x11; }));
    EXPECT_TRUE(std::all_of(h2_.buf.begin() + 12288, h2_.buf.end(),
                            [](char ch) { return ch == 0x22; }));
    EXPECT_TRUE(std::all_of(h2_.buf.begin(), h2_.buf.begin() + 8192,
                            [](char ch) { return ch == 0x22; }));
  }

  VerbsSide h1_, h2_;
  std::unique_ptr<VerbsSide> x_, y_;  // the hostile pair
  Rings rings_;
  char canary_[8192];
};

// Valid-looking WQEs that name what the hostile client may not use: another
// client's lkey, memory it never registered, another client's rkey as the
// target of a WRITE, plus pure noise. Each goes first on a fresh hostile
// pair, so none is merely flushed behind an earlier failure.
TEST_P(HostileApp, ForgedWqesFailWithoutTouchingOthersMemory) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE("forged WQE " + std::to_string(i));
    if (i > 0) reopen_hostile_pair();
    const uint32_t entries = 64;  // SideParams::send_wr, a power of two
    const uint32_t prod = __atomic_load_n(&rings_.sq->producer, __ATOMIC_ACQUIRE);
    vhca_send_wqe* w = sq_slot(rings_.sq, prod, entries);
    std::memset(w, 0, sizeof(*w));
    w->wr_id = uint64_t(i);
    w->send_flags = IBV_SEND_SIGNALED;
    w->num_sge = 1;
    w->sge[0].length = 4096;
    switch (i) {
      case 0:  // SEND from the honest client's buffer with its lkey
        w->opcode = IBV_WR_SEND;
        w->sge[0].addr = reinterpret_cast<uintptr_t>(h1_.buf.data());
        w->sge[0].lkey = h1_.mr->lkey;
        break;
      case 1:  // RDMA READ into memory it never registered, with its own lkey
        w->opcode = IBV_WR_RDMA_READ;
        w->sge[0].addr = reinterpret_cast<uintptr_t>(canary_);
        w->sge[0].lkey = x_->mr->lkey;
        w->remote_addr = reinterpret_cast<uintptr_t>(y_->buf.data());
        w->rkey = y_->mr->rkey;
        break;
      case 2:  // WRITE into the honest responder's memory with its rkey
        w->opcode = IBV_WR_RDMA_WRITE;
        w->sge[0].addr = reinterpret_cast<uintptr_t>(x_->buf.data());
        w->sge[0].lkey = x_->mr->lkey;
        w->remote_addr = reinterpret_cast<uintptr_t>(h2_.buf.data());
        w->rkey = h2_.mr->rkey;
        break;
      default:  // noise
        for (size_t k = 0; k + 8 <= sizeof(*w); k += 8) {
          const uint64_t v = rng();
          std::memcpy(reinterpret_cast<char*>(w) + k, &v, 8);
        }
    }
    __atomic_store_n(&rings_.sq->producer, prod + 1, __ATOMIC_RELEASE);
    expect_honest_pair_served();  // its traffic also wakes the engine to scan
    // The forged WQE completes in error (or, for noise the engine cannot
    // even parse, the QP is failed) -- never with success.
    ibv_wc wc{};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int got = 0;
    while (got == 0 && std::chrono::steady_clock::now() < deadline)
      got = ibv_poll_cq(x_->cq, 1, &wc);
    if (got == 1) {
      EXPECT_NE(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
    }
    EXPECT_EQ(qp_state(x_->qp), IBV_QPS_ERR);
    expect_nothing_else_touched();
  }
  expect_honest_pair_served();
}

TEST_P(HostileApp, ImpossibleIndicesBreakOnlyTheirOwnQueues) {
  // A producer a whole ring ahead of the consumer, a receive producer that
  // moved backwards, a CQ consumer ahead of its producer.
  __atomic_store_n(&rings_.sq->producer, 0x7fff0000u, __ATOMIC_RELEASE);
  if (rings_.rq) __atomic_store_n(&rings_.rq->producer, 0xfffffff0u, __ATOMIC_RELEASE);
  __atomic_store_n(&rings_.cq->consumer, 0x12345678u, __ATOMIC_RELEASE);
  expect_honest_pair_served();
  // The hostile QP is broken for good; its peer may go on.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (qp_state(x_->qp) != IBV_QPS_ERR && std::chrono::steady_clock::now() < deadline) {
    ibv_wc wc;
    ibv_poll_cq(h1_.cq, 1, &wc);
  }
  EXPECT_EQ(qp_state(x_->qp), IBV_QPS_ERR);
  expect_nothing_else_touched();
  expect_honest_pair_served();
}

INSTANTIATE_TEST_SUITE_P(Fabrics, HostileApp, ::testing::Values(kIbFabric, kRoceFabric),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
