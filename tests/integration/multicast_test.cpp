// UD multicast through the real provider and a real fabricd, on both link
// layers: ibv_attach_mcast / ibv_detach_mcast with the kernel's argument
// checks, one send reaching every attached QP (on the other vHCA through the
// switch's multicast forwarding; on the sender's own vHCA by the HCA's
// loopback, as mlx5 does), BLOCK_SELF_MCAST_LB, detach, per-QP Q_Keys, and
// the subnet manager's MFT following the joins (fabricctl routes).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "ud_helpers.hpp"
#include "verbs_fixture.hpp"

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

constexpr uint16_t kMlid = 0xC012;
constexpr uint16_t kMftMlid = 0xC0F0;  // used by no other test: the switch starts without it
constexpr size_t kRecvAt = 1024;  // receive buffers start here, send payloads at 0

class Multicast : public ::testing::TestWithParam<FabricParam> {
 protected:
  bool roce() const { return GetParam().gid_index >= 0; }
  int sgid_index() const { return roce() ? GetParam().gid_index : 0; }

  std::unique_ptr<VerbsSide> ud_side(const char* dev, uint32_t qkey = kUdQkey, uint32_t flags = 0) {
    return open_ud_side(dev, sgid_index(), qkey, flags);
  }

  ibv_ah* group_ah(VerbsSide& s, const ibv_gid& gid) { return multicast_ah(s, gid, roce() ? 0 : kMlid, sgid_index()); }

  int attach(VerbsSide& s, const ibv_gid& gid) { return ibv_attach_mcast(s.qp, &gid, kMlid); }
  int detach(VerbsSide& s, const ibv_gid& gid) { return ibv_detach_mcast(s.qp, &gid, kMlid); }

  // The one datagram among `wcs`, received into r.buf at kRecvAt.
  static void expect_datagram(VerbsSide& r, const std::vector<ibv_wc>& wcs, uint32_t src_qp, const char* text,
                              const char* who) {
    const auto got = receives(wcs);
    ASSERT_EQ(got.size(), 1u) << who << " receives the datagram exactly once";
    EXPECT_EQ(got[0].status, IBV_WC_SUCCESS) << who << ": " << ibv_wc_status_str(got[0].status);
    EXPECT_EQ(got[0].src_qp, src_qp) << who;
    EXPECT_TRUE(got[0].wc_flags & IBV_WC_GRH) << who << ": a multicast datagram always has a GRH";
    EXPECT_EQ(got[0].byte_len, 40u + std::strlen(text) + 1) << who;
    EXPECT_STREQ(r.buf.data() + kRecvAt + 40, text) << who;
  }
};

TEST_P(Multicast, OneSendReachesEveryAttachedQpOnBothVhcas) {
  const ibv_gid g = group_gid(roce());
  auto sender = ud_side(GetParam().a);
  auto local = ud_side(GetParam().a);  // another process's QP on the sender's vHCA
  auto far1 = ud_side(GetParam().b);
  auto far2 = ud_side(GetParam().b);
  auto outsider = ud_side(GetParam().b);  // on a member vHCA, not attached
  for (VerbsSide* s : {sender.get(), local.get(), far1.get(), far2.get()}) ASSERT_EQ(attach(*s, g), 0);
  for (VerbsSide* s : {sender.get(), local.get(), far1.get(), far2.get(), outsider.get()})
    ASSERT_EQ(post_recv(*s, 7, {sge(*s, kRecvAt, 40 + 256)}), 0);

  ibv_ah* ah = group_ah(*sender, g);
  ASSERT_NE(ah, nullptr) << std::strerror(errno);
  std::strcpy(sender->buf.data(), "to the group");
  ASSERT_EQ(post_ud(*sender, ah, kGroupQpn, kUdQkey, sge(*sender, 0, 13)), 0);

  const auto at_sender = drain(sender->cq, 0, 1);
  int sends = 0;
  for (const ibv_wc& w : at_sender) sends += w.opcode == IBV_WC_SEND && w.status == IBV_WC_SUCCESS;
  EXPECT_EQ(sends, 1);
  // Without BLOCK_SELF_MCAST_LB the sender's own attached QP gets its copy (mlx5).
  expect_datagram(*sender, at_sender, sender->qp->qp_num, "to the group", "the sender");
  expect_datagram(*local, drain(local->cq, 0, 1), sender->qp->qp_num, "to the group", "the sender's vHCA's other QP");
  expect_datagram(*far1, drain(far1->cq, 0, 1), sender->qp->qp_num, "to the group", "a QP on the other vHCA");
  expect_datagram(*far2, drain(far2->cq, 0, 1), sender->qp->qp_num, "to the group", "a second QP there");
  EXPECT_TRUE(receives(drain(outsider->cq, 100)).empty()) << "a QP that did not attach gets nothing";

  for (VerbsSide* s : {sender.get(), local.get(), far1.get(), far2.get()}) EXPECT_EQ(detach(*s, g), 0);
  EXPECT_EQ(ibv_destroy_ah(ah), 0);
}

TEST_P(Multicast, BlockSelfLoopbackAndDetachStopDelivery) {
  const ibv_gid g = group_gid(roce(), 4);
  auto sender = ud_side(GetParam().a, kUdQkey, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB);
  auto local = ud_side(GetParam().a);
  auto far = ud_side(GetParam().b);
  for (VerbsSide* s : {sender.get(), local.get(), far.get()}) {
    ASSERT_EQ(attach(*s, g), 0);
    ASSERT_EQ(post_recv(*s, 1, {sge(*s, 1024, 40 + 256)}), 0);
    ASSERT_EQ(post_recv(*s, 2, {sge(*s, 2048, 40 + 256)}), 0);
  }
  ibv_ah* ah = group_ah(*sender, g);
  ASSERT_NE(ah, nullptr);
  std::strcpy(sender->buf.data(), "first");
  ASSERT_EQ(post_ud(*sender, ah, kGroupQpn, kUdQkey, sge(*sender, 0, 6)), 0);
  EXPECT_EQ(receives(drain(local->cq, 0, 1)).size(), 1u) << "the vHCA's other QPs still get theirs";
  EXPECT_EQ(receives(drain(far->cq, 0, 1)).size(), 1u);
  // The sender's own copy would have come with the local one.
  EXPECT_TRUE(receives(drain(sender->cq, 100)).empty()) << "BLOCK_SELF_MCAST_LB: no copy of its own";

  // Once detached a QP gets nothing more; the others keep receiving.
  ASSERT_EQ(detach(*far, g), 0);
  std::strcpy(sender->buf.data(), "second");
  ASSERT_EQ(post_ud(*sender, ah, kGroupQpn, kUdQkey, sge(*sender, 0, 7)), 0);
  EXPECT_EQ(receives(drain(local->cq, 0, 1)).size(), 1u);
  EXPECT_TRUE(receives(drain(far->cq, 100)).empty()) << "a detached QP receives nothing";
  EXPECT_EQ(detach(*far, g), EINVAL) << "detaching a pair that is not attached";
  EXPECT_EQ(detach(*local, g), 0);
  EXPECT_EQ(detach(*sender, g), 0);
  EXPECT_EQ(ibv_destroy_ah(ah), 0);
}

TEST_P(Multicast, EachMemberChecksItsOwnQkey) {
  const ibv_gid g = group_gid(roce(), 5);
  auto sender = ud_side(GetParam().a);
  auto right = ud_side(GetParam().b);
  auto wrong = ud_side(GetParam().b, 0x2222);
  for (VerbsSide* s : {right.get(), wrong.get()}) {
    ASSERT_EQ(attach(*s, g), 0);
    ASSERT_EQ(post_recv(*s, 1, {sge(*s, 0, 40 + 256)}), 0);
  }
  ibv_port_attr before{};
  ASSERT_EQ(ibv_query_port(wrong->ctx, 1, &before), 0);
  ibv_ah* ah = group_ah(*sender, g);
  ASSERT_NE(ah, nullptr);
  ASSERT_EQ(post_ud(*sender, ah, kGroupQpn, kUdQkey, sge(*sender, 0, 8)), 0);
  EXPECT_EQ(receives(drain(right->cq, 0, 1)).size(), 1u);
  EXPECT_TRUE(receives(drain(wrong->cq, 100)).empty()) << "a Q_Key mismatch drops that member's copy only";
  ibv_port_attr after{};
  ASSERT_EQ(ibv_query_port(wrong->ctx, 1, &after), 0);
  EXPECT_EQ(after.qkey_viol_cntr, before.qkey_viol_cntr + 1);
  for (VerbsSide* s : {right.get(), wrong.get()}) EXPECT_EQ(detach(*s, g), 0);
  EXPECT_EQ(ibv_destroy_ah(ah), 0);
}

TEST_P(Multicast, ArgumentsAndLifetimeFollowTheKernel) {
  const ibv_gid g = group_gid(roce(), 6);
  auto ud = ud_side(GetParam().a);
  ibv_device_attr da{};
  ASSERT_EQ(ibv_query_device(ud->ctx, &da), 0);
  EXPECT_EQ(da.max_mcast_grp, 8192);  // rxe's limits
  EXPECT_EQ(da.max_mcast_qp_attach, 56);
  EXPECT_EQ(da.max_total_mcast_qp_attach, 458752);

  VerbsSide rc;
  SideParams p;
  p.gid_index = sgid_index();
  open_side(rc, GetParam().a, p);
  EXPECT_EQ(ibv_attach_mcast(rc.qp, &g, kMlid), EINVAL) << "only UD QPs join groups";
  ibv_gid unicast = ud->gid;
  if (!roce()) {
    ASSERT_EQ(ibv_query_gid(ud->ctx, 1, 0, &unicast), 0);
  }
  EXPECT_EQ(ibv_attach_mcast(ud->qp, &unicast, kMlid), EINVAL) << "a unicast GID";
  if (roce()) {
    EXPECT_EQ(ibv_attach_mcast(ud->qp, &g, 0x0005), 0) << "RoCE ignores the LID";
    EXPECT_EQ(ibv_detach_mcast(ud->qp, &g, 0x0005), 0);
  } else {
    EXPECT_EQ(ibv_attach_mcast(ud->qp, &g, 0x0005), EINVAL) << "a unicast LID";
    EXPECT_EQ(ibv_attach_mcast(ud->qp, &g, 0xFFFF), EINVAL) << "the permissive LID";
  }
  ASSERT_EQ(attach(*ud, g), 0);
  EXPECT_EQ(attach(*ud, g), 0) << "attaching twice is a no-op";
  if (!roce()) {
    auto other = ud_side(GetParam().a);
    EXPECT_EQ(ibv_attach_mcast(other->qp, &g, kMlid + 1), EINVAL) << "a group has one MLID, as the SA assigns it";
    EXPECT_EQ(ibv_detach_mcast(ud->qp, &g, kMlid + 1), EINVAL);
  }
  EXPECT_EQ(ibv_destroy_qp(ud->qp), EBUSY) << "uverbs: detach before destroying";
  EXPECT_EQ(detach(*ud, g), 0);
  EXPECT_EQ(detach(*ud, g), EINVAL);
  EXPECT_EQ(ibv_destroy_qp(ud->qp), 0);
  ud->qp = nullptr;
}

// A group holds at most 56 QPs (rxe's max_mcast_qp_attach): the 57th attach
// is ENOMEM, and a place freed by a detach can be taken again.
TEST_P(Multicast, AGroupHoldsFiftySixQps) {
  const ibv_gid g = group_gid(roce(), 8);
  auto s = ud_side(GetParam().a);
  std::vector<ibv_qp*> qps;
  for (int i = 0; i < 57; ++i) {
    ibv_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = s->cq;
    ia.qp_type = IBV_QPT_UD;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 1;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ibv_qp* q = ibv_create_qp(s->pd, &ia);
    ASSERT_NE(q, nullptr) << i << ": " << std::strerror(errno);
    qps.push_back(q);
  }
  for (int i = 0; i < 56; ++i) ASSERT_EQ(ibv_attach_mcast(qps[size_t(i)], &g, kMlid), 0) << i;
  EXPECT_EQ(ibv_attach_mcast(qps[56], &g, kMlid), ENOMEM);
  EXPECT_EQ(ibv_attach_mcast(qps[0], &g, kMlid), 0) << "already attached: still a no-op when full";
  ASSERT_EQ(ibv_detach_mcast(qps[0], &g, kMlid), 0);
  EXPECT_EQ(ibv_attach_mcast(qps[56], &g, kMlid), 0);
  for (size_t i = 1; i < qps.size(); ++i) EXPECT_EQ(ibv_detach_mcast(qps[i], &g, kMlid), 0);
  for (ibv_qp* q : qps) EXPECT_EQ(ibv_destroy_qp(q), 0);
}

// A hostile app naming another context's QP handle (a forged ibv_qp) attaches
// nothing: the engine resolves handles per client.
TEST_P(Multicast, AnotherContextsQpCannotBeAttached) {
  const ibv_gid g = group_gid(roce(), 10);
  auto mine = ud_side(GetParam().a);
  auto theirs = ud_side(GetParam().a);
  ibv_qp forged = *theirs->qp;
  forged.context = mine->ctx;
  EXPECT_EQ(ibv_attach_mcast(&forged, &g, kMlid), EINVAL);
  EXPECT_EQ(ibv_detach_mcast(theirs->qp, &g, kMlid), EINVAL) << "their QP was not attached";
  EXPECT_EQ(ibv_destroy_qp(theirs->qp), 0);
  theirs->qp = nullptr;
}

nlohmann::json mft_entry(uint16_t mlid) {
  const RunResult r = daemon_instance()->ctl({"--json", "routes", "ibsw0"});
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (j.is_discarded()) ADD_FAILURE() << "fabricctl routes: " << r.out << r.err;
  for (const auto& e : j.value("mft", nlohmann::json::array()))
    if (e.value("mlid", 0) == mlid) return e;
  return nlohmann::json();
}

// A UD QP of a child process on `dev` attached to `g`; the child says so on
// the pipe, then waits to be killed with the attachment held.
pid_t attached_child(const char* dev, const ibv_gid& g, uint16_t mlid, int& ready_fd) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    VerbsSide s;
    SideParams p;
    open_side(s, dev, p);
    recreate_qp(s, IBV_QPT_UD);
    ud_to_rts(s);
    const char ok = ibv_attach_mcast(s.qp, &g, mlid) == 0 ? 'y' : 'n';
    if (write(fds[1], &ok, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  close(fds[1]);
  ready_fd = fds[0];
  return pid;
}

// IB: the subnet manager programs the switch's MFT as ports join and leave,
// and a process that dies attached leaves its groups (fabricctl routes reads
// the switch's table back from the dataplane).
TEST(MulticastIb, TheSwitchForwardingTableFollowsJoinsAndLeaves) {
  const ibv_gid g = group_gid(false, 7);
  EXPECT_TRUE(mft_entry(kMftMlid).is_null());
  int ready = -1;
  const pid_t child = attached_child("vib1", g, kMftMlid, ready);
  ASSERT_GT(child, 0);
  char ok = 0;
  ASSERT_EQ(read(ready, &ok, 1), 1);
  close(ready);
  ASSERT_EQ(ok, 'y');
  nlohmann::json e = mft_entry(kMftMlid);
  ASSERT_FALSE(e.is_null());
  EXPECT_EQ(e["members"], nlohmann::json::array({"vib1"}));
  EXPECT_EQ(e["ports"].size(), 1u);
  {
    VerbsSide a;
    SideParams p;
    open_side(a, "vib0", p);
    recreate_qp(a, IBV_QPT_UD);
    ud_to_rts(a);
    ASSERT_EQ(ibv_attach_mcast(a.qp, &g, kMftMlid), 0);
    e = mft_entry(kMftMlid);
    EXPECT_EQ(e["members"], nlohmann::json::array({"vib0", "vib1"}));
    EXPECT_EQ(e["ports"].size(), 2u) << "both members' switch ports";
    ASSERT_EQ(ibv_detach_mcast(a.qp, &g, kMftMlid), 0);
    EXPECT_EQ(mft_entry(kMftMlid)["members"], nlohmann::json::array({"vib1"}));
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  // The daemon sees the socket close and tears the context down.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!mft_entry(kMftMlid).is_null() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(mft_entry(kMftMlid).is_null()) << "the last member died: the group is gone from the switch: "
                                          << mft_entry(kMftMlid).dump();
}

// IBA 8.4.1: a multicast packet carries a GRH naming its group. Sent without
// one (an AH to the MLID alone) it reaches the member's port through the
// switch and is dropped there, counted.
TEST(MulticastIb, ADatagramWithoutAGrhReachesNoMember) {
  const ibv_gid g = group_gid(false, 11);
  auto sender = open_ud_side("vib0", 0);
  auto member = open_ud_side("vib1", 0);
  ASSERT_EQ(ibv_attach_mcast(member->qp, &g, kMlid), 0);
  ASSERT_EQ(post_recv(*member, 1, {sge(*member, 0, 40 + 256)}), 0);
  auto no_member = [] {
    const RunResult r = daemon_instance()->ctl({"metrics"});
    const std::string key = "vfabric_mcast_rx_no_member_total{fabric=\"ib\",hca=\"vib1\"} ";
    const auto at = r.out.find(key);
    return at == std::string::npos ? -1 : std::stol(r.out.substr(at + key.size()));
  };
  const long before = no_member();
  ASSERT_GE(before, 0);
  ibv_ah_attr a{};
  a.dlid = kMlid;
  a.port_num = 1;
  ibv_ah* ah = ibv_create_ah(sender->pd, &a);
  ASSERT_NE(ah, nullptr) << "an AH to a multicast LID is accepted, as on mlx5";
  ASSERT_EQ(post_ud(*sender, ah, kGroupQpn, kUdQkey, sge(*sender, 0, 8)), 0);
  EXPECT_TRUE(receives(drain(member->cq, 300)).empty());
  EXPECT_EQ(no_member(), before + 1);
  EXPECT_EQ(ibv_destroy_ah(ah), 0);
  EXPECT_EQ(ibv_detach_mcast(member->qp, &g, kMlid), 0);
}

INSTANTIATE_TEST_SUITE_P(Fabrics, Multicast, ::testing::Values(kIbFabric, kRoceFabric),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
