// Partitions (IBA 10.9) through the real libibverbs, provider and fabricd, IB only: the configured P_Key
// tables, P_Key index checks, and packets of another partition dropped and counted (bad_pkey_cntr).
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <string>

#include "verbs_fixture.hpp"

static void PrintTo(ibv_wc_status s, std::ostream* os) { *os << ibv_wc_status_str(s); }

namespace vf::test {
namespace {

// vib0: default, full 1, full 3. vib1: default, full 1, full 2, limited 3 (a port lists a partition once).
constexpr uint16_t kVib1Table[] = {0xffff, 0x8001, 0x8002, 0x0003};
constexpr uint16_t k0Full1 = 1, k0Full3 = 2, k0Empty = 5;
constexpr uint16_t k1Full1 = 1, k1Full2 = 2, k1Limited3 = 3;
constexpr uint32_t kQkey = 0x11111111;

std::string partitions_config() {
  std::string cfg = default_config();
  for (auto [line, pkeys] : {std::pair{"      - name: vib0\n", "[0xffff, 0x8001, 0x8003]"},
                             std::pair{"      - name: vib1\n", "[0xffff, 0x8001, 0x8002, 0x0003]"}}) {
    const size_t at = cfg.find(line);
    if (at == std::string::npos) throw std::runtime_error(std::string("configs/default.yaml has no ") + line);
    cfg.insert(at + std::strlen(line), std::string("        pkeys: ") + pkeys + "\n");
  }
  return cfg;
}

// DaemonEnvironment on the config above (libibverbs reads its environment once).
struct PartitionsDaemon : DaemonEnvironment {
  void SetUp() override {
    daemon_instance() = new Fabricd(partitions_config());
    for (auto& [k, v] : daemon_instance()->app_env(/*preload=*/false)) setenv(k.c_str(), v.c_str(), 1);
  }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new PartitionsDaemon);

uint32_t bad_pkey_cntr(VerbsSide& s) {
  ibv_port_attr p{};
  EXPECT_EQ(ibv_query_port(s.ctx, 1, &p), 0);
  return p.bad_pkey_cntr;
}

// connect_to with a P_Key index and a short retry budget (~4 ms, one retry).
void rc_connect(VerbsSide& s, const VerbsSide& peer, uint16_t pkey_index) {
  ibv_qp_attr init{};
  init.qp_state = IBV_QPS_INIT;
  init.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  init.pkey_index = pkey_index;
  init.port_num = 1;
  check(ibv_modify_qp(s.qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "INIT");
  ibv_qp_attr rtr{};
  rtr.qp_state = IBV_QPS_RTR;
  rtr.path_mtu = s.port.active_mtu;
  rtr.dest_qp_num = peer.qp->qp_num;
  rtr.ah_attr.dlid = peer.port.lid;
  rtr.ah_attr.port_num = 1;
  rtr.max_dest_rd_atomic = 1;
  rtr.min_rnr_timer = 1;
  constexpr int kRtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  check(ibv_modify_qp(s.qp, &rtr, kRtr), "RTR");
  ibv_qp_attr rts{};
  rts.qp_state = IBV_QPS_RTS;
  rts.max_rd_atomic = 1;
  rts.timeout = 10;
  rts.retry_cnt = 1;
  rts.rnr_retry = 7;
  constexpr int kRts = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                       IBV_QP_MAX_QP_RD_ATOMIC;
  check(ibv_modify_qp(s.qp, &rts, kRts), "RTS");
}

// Replaces `s`'s QP with a UD QP in RTS on `pkey_index`.
void ud_qp(VerbsSide& s, uint16_t pkey_index) {
  ibv_destroy_qp(s.qp);
  ibv_qp_init_attr ia{};
  ia.send_cq = s.cq;
  ia.recv_cq = s.cq;
  ia.cap = {8, 8, 1, 1, 0};
  ia.qp_type = IBV_QPT_UD;
  ia.sq_sig_all = 1;
  s.qp = ibv_create_qp(s.pd, &ia);
  if (!s.qp) check(errno, "ibv_create_qp UD");
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.qkey = kQkey;
  at.pkey_index = pkey_index;
  at.port_num = 1;
  check(ibv_modify_qp(s.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), "UD INIT");
  at = ibv_qp_attr{};
  at.qp_state = IBV_QPS_RTR;
  check(ibv_modify_qp(s.qp, &at, IBV_QP_STATE), "UD RTR");
  at.qp_state = IBV_QPS_RTS;
  check(ibv_modify_qp(s.qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN), "UD RTS");
}

int post_ud(VerbsSide& s, ibv_ah* ah, const VerbsSide& to, ibv_sge g) {
  ibv_send_wr wr{};
  wr.sg_list = &g;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.wr.ud = {ah, to.qp->qp_num, kQkey};
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(s.qp, &wr, &bad);
}

bool stays_empty(ibv_cq* cq, int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  ibv_wc wc;
  while (std::chrono::steady_clock::now() < end)
    if (ibv_poll_cq(cq, 1, &wc) != 0) return false;
  return true;
}

class Partitions : public ::testing::Test {
 protected:
  void SetUp() override {
    open_side(a_, "vib0", SideParams{});
    open_side(b_, "vib1", SideParams{});
  }
  void connect(uint16_t pkey_a, uint16_t pkey_b) {
    rc_connect(a_, b_, pkey_a);
    rc_connect(b_, a_, pkey_b);
  }
  // One 512-byte SEND from `s` into `r` at 4096: completed on both sides, bytes landed.
  static ::testing::AssertionResult sent(VerbsSide& s, VerbsSide& r, uint8_t seed) {
    for (size_t i = 0; i < 512; ++i) s.buf[i] = char(seed + i * 7);
    if (post_recv(r, 1, {sge(r, 4096, 512)}) || post_send(s, 2, {sge(s, 0, 512)}))
      return ::testing::AssertionFailure() << "a post failed";
    const ibv_wc ws = wait_one(s), wr = ws.status == IBV_WC_SUCCESS ? wait_one(r) : ws;
    if (wr.status != IBV_WC_SUCCESS || wr.byte_len != 512)
      return ::testing::AssertionFailure() << ibv_wc_status_str(wr.status) << ", " << wr.byte_len << " B";
    if (std::memcmp(s.buf.data(), r.buf.data() + 4096, 512) != 0) return ::testing::AssertionFailure() << "bytes";
    return ::testing::AssertionSuccess();
  }
  VerbsSide a_, b_;
};

TEST_F(Partitions, TheConfiguredTableIsWhatLibibverbsReads) {
  for (int i = 0; i < 16; ++i) {
    __be16 k = htons(0x1234);
    ASSERT_EQ(ibv_query_pkey(b_.ctx, 1, i, &k), 0) << "index " << i;
    EXPECT_EQ(ntohs(k), i < 4 ? kVib1Table[i] : 0) << "index " << i;
  }
  __be16 k = 0;
  EXPECT_NE(ibv_query_pkey(b_.ctx, 1, 16, &k), 0) << "an entry past the 16";
  EXPECT_EQ(b_.port.pkey_tbl_len, 16);
  ibv_device_attr d{};
  ASSERT_EQ(ibv_query_device(b_.ctx, &d), 0);
  EXPECT_EQ(d.max_pkeys, 16);
}

TEST_F(Partitions, APkeyIndexMustNameAValidEntry) {
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  const int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  at.pkey_index = k0Empty;
  EXPECT_EQ(ibv_modify_qp(a_.qp, &at, mask), EINVAL) << "an empty (0x0000) entry";
  at.pkey_index = 16;
  EXPECT_EQ(ibv_modify_qp(a_.qp, &at, mask), EINVAL) << "past the table";
  EXPECT_EQ(qp_state(a_.qp), IBV_QPS_RESET) << "a refused modify changes nothing";
  at.pkey_index = k0Full3;
  EXPECT_EQ(ibv_modify_qp(a_.qp, &at, mask), 0) << "a valid entry";
  EXPECT_EQ(qp_state(a_.qp), IBV_QPS_INIT);
}

TEST_F(Partitions, MembersOfOnePartitionTalk) {
  const uint32_t before = bad_pkey_cntr(b_);
  connect(k0Full1, k1Full1);
  EXPECT_TRUE(sent(a_, b_, 3));
  EXPECT_TRUE(sent(b_, a_, 5));
  EXPECT_EQ(bad_pkey_cntr(b_), before);
}

TEST_F(Partitions, AFullAndALimitedMemberTalk) {
  connect(k0Full3, k1Limited3);
  EXPECT_TRUE(sent(a_, b_, 7));
  EXPECT_TRUE(sent(b_, a_, 9)) << "the limited member's requests too";
}

TEST_F(Partitions, AnotherPartitionIsDroppedAndCounted) {
  const uint32_t before_a = bad_pkey_cntr(a_), before_b = bad_pkey_cntr(b_);
  connect(k0Full1, k1Full2);
  ASSERT_EQ(post_recv(b_, 1, {sge(b_, 4096, 512)}), 0);
  ASSERT_EQ(post_send(a_, 2, {sge(a_, 0, 512)}), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_TRUE(stays_empty(b_.cq, 50)) << "vib1 received from another partition";
  EXPECT_GE(bad_pkey_cntr(b_) - before_b, 2u) << "the request and its retry";
  EXPECT_EQ(bad_pkey_cntr(a_), before_a) << "vib1 never answered";
}

TEST_F(Partitions, DatagramsReachOnlyTheirPartition) {
  VerbsSide c;  // a second UD QP on vib1, in partition 1
  open_side(c, "vib1", SideParams{});
  ud_qp(a_, k0Full1);
  ud_qp(b_, k1Full2);
  ud_qp(c, k1Full1);
  ibv_ah_attr ah_attr{};  // vib1: b_ and c
  ah_attr.dlid = b_.port.lid;
  ah_attr.port_num = 1;
  ibv_ah* ah = ibv_create_ah(a_.pd, &ah_attr);
  ASSERT_NE(ah, nullptr) << std::strerror(errno);
  std::memcpy(a_.buf.data(), "partition one", 14);
  const uint32_t before = bad_pkey_cntr(b_);
  ASSERT_EQ(post_recv(b_, 1, {sge(b_, 0, 40 + 64)}), 0);
  ASSERT_EQ(post_ud(a_, ah, b_, sge(a_, 0, 14)), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_SUCCESS) << "UD: the sender cannot know";
  EXPECT_TRUE(stays_empty(b_.cq, 200)) << "a datagram of partition 1 reached a QP of partition 2";
  EXPECT_GT(bad_pkey_cntr(b_), before);
  ASSERT_EQ(post_recv(c, 3, {sge(c, 0, 40 + 64)}), 0);
  ASSERT_EQ(post_ud(a_, ah, c, sge(a_, 0, 14)), 0);
  EXPECT_EQ(wait_one(a_).status, IBV_WC_SUCCESS);
  const ibv_wc r = wait_one(c);
  EXPECT_EQ(r.status, IBV_WC_SUCCESS);
  EXPECT_EQ(r.byte_len, 40u + 14u);
  EXPECT_EQ(r.pkey_index, k1Full1);
  EXPECT_EQ(std::memcmp(c.buf.data() + 40, "partition one", 14), 0);
  EXPECT_EQ(ibv_destroy_ah(ah), 0);
}

}  // namespace
}  // namespace vf::test
