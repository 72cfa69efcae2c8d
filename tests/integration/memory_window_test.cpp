// Memory windows (IBA 10.6.7) through the real libibverbs, provider and
// fabricd, on both link layers: type 1 windows bound with ibv_bind_mw, type 2B
// windows bound by posting IBV_WR_BIND_MW, and their retirement by LOCAL_INV,
// SEND_WITH_INV, unbinding and deallocation. The peer reaches the windowed
// memory with RDMA WRITE / READ / FETCH_ADD; every success is checked where
// its bytes land, every refusal by its IBA status and by the bytes it did not
// place.
//
// Layout: the requester a_ and the window owner b_ are an RC pair. b_'s MR
// grants no remote access of its own (LOCAL_WRITE | MW_BIND), so whatever a
// peer reaches, it reaches through a window. A remote access error breaks its
// connection (both QPs go to ERR), so a test checks at most one refusal per
// connection; a test that needs more, or a second QP on the window's PD, adds
// a Path (a fresh connection whose responder QP is on b_'s context).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "verbs_fixture.hpp"

// gtest prints completion statuses by name: ADL finds this beside the enum.
static void PrintTo(ibv_wc_status s, std::ostream* os) { *os << ibv_wc_status_str(s); }

namespace vf::test {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

constexpr int kRemoteAll =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
// b_'s memory: bindable, and writable by the HCA (C10-74 wants LOCAL_WRITE
// under any window that grants remote write or atomics).
constexpr int kBindable = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
constexpr unsigned kRead = IBV_ACCESS_REMOTE_READ;
constexpr unsigned kWrite = IBV_ACCESS_REMOTE_WRITE;
constexpr unsigned kWindowAll = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
constexpr uint64_t kMwOps = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV |
                            IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND;

// Window R_Keys have bit 31 set (MR keys do not): forged keys aim there.
constexpr uint32_t kMwKeyBit = 0x80000000u;
constexpr uint32_t kMadeUpKey = 0x8badf00du;

// Where things sit in b_'s 1 MiB buffer.
constexpr size_t kWin = 4096, kWinLen = 4096;  // the window most tests bind
constexpr size_t kSpare = 256 * 1024;          // extra MRs
constexpr size_t kRecv = 512 * 1024;           // receive buffers

constexpr uint64_t kBindId = 100, kInvId = 200, kAccessId = 300;

// A window and the R_Key its last bind handed out. Type 1: the provider's
// choice (mw->rkey); type 2: the app's, which the app keeps (ibv_mw's rkey
// need not follow a posted bind).
struct Window {
  ibv_mw* mw = nullptr;
  uint32_t key = 0;
};

// A second connection into b_'s memory: a requester on a device of its own
// and a responder QP on a PD of b_'s context (b_'s own unless said).
struct Path {
  VerbsSide a;
  VerbsSide b;  // borrows b_'s context and a PD, which it must not free
  ~Path() {
    b.pd = nullptr;
    b.ctx = nullptr;
  }
};

void fill(VerbsSide& s, size_t off, size_t len, uint8_t seed) {
  for (size_t i = 0; i < len; ++i) s.buf[off + i] = char(seed + i * 7);
}
bool same(const VerbsSide& a, size_t a_off, const VerbsSide& b, size_t b_off, size_t len) {
  return std::memcmp(a.buf.data() + a_off, b.buf.data() + b_off, len) == 0;
}
bool zero(const VerbsSide& s, size_t off, size_t len) {
  for (size_t i = 0; i < len; ++i)
    if (s.buf[off + i]) return false;
  return true;
}
uint64_t word(const VerbsSide& s, size_t off) {
  uint64_t v;
  std::memcpy(&v, s.buf.data() + off, 8);
  return v;
}
void set_word(VerbsSide& s, size_t off, uint64_t v) { std::memcpy(s.buf.data() + off, &v, 8); }

::testing::AssertionResult completed(const ibv_wc& wc, ibv_wc_opcode op, uint64_t wr_id) {
  if (wc.status != IBV_WC_SUCCESS)
    return ::testing::AssertionFailure() << "wr " << wc.wr_id << " completed " << ibv_wc_status_str(wc.status);
  if (wc.wr_id != wr_id) return ::testing::AssertionFailure() << "a completion of wr " << wc.wr_id << ", not " << wr_id;
  if (wc.opcode != op) return ::testing::AssertionFailure() << "opcode " << wc.opcode << ", not " << op;
  return ::testing::AssertionSuccess();
}

// An RC QP on `pd`, made by ibv_create_qp_ex with `send_ops` (0: none asked).
ibv_qp* create_rc_qp(ibv_context* ctx, ibv_pd* pd, ibv_cq* cq, uint64_t send_ops) {
  ibv_qp_init_attr_ex qa{};
  qa.send_cq = qa.recv_cq = cq;
  qa.qp_type = IBV_QPT_RC;
  qa.cap.max_send_wr = qa.cap.max_recv_wr = 16;
  qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
  qa.sq_sig_all = 1;
  qa.comp_mask = IBV_QP_INIT_ATTR_PD;
  qa.pd = pd;
  if (send_ops) {
    qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    qa.send_ops_flags = send_ops;
  }
  ibv_qp* qp = ibv_create_qp_ex(ctx, &qa);
  if (!qp) check(errno, "ibv_create_qp_ex");
  return qp;
}

int post_send_inv(VerbsSide& s, uint64_t wr_id, ibv_sge g, uint32_t rkey) {
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = wr_id;
  wr.sg_list = &g;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND_WITH_INV;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.invalidate_rkey = rkey;
  return ibv_post_send(s.qp, &wr, &bad);
}

class WindowFixture : public ::testing::TestWithParam<FabricParam> {
 protected:
  void SetUp() override {
    open_side(a_, GetParam().a, side_params(kRemoteAll));
    open_side(b_, GetParam().b, side_params(kBindable));
    connect_pair(a_, b_);
  }
  // Windows first: they hold their MRs, PDs and (type 2) QPs.
  void TearDown() override {
    for (ibv_mw* mw : mws_) ibv_dealloc_mw(mw);
    paths_.clear();
    for (ibv_mr* mr : mrs_) ibv_dereg_mr(mr);
    for (ibv_pd* pd : pds_) ibv_dealloc_pd(pd);
  }

  SideParams side_params(int mr_access, size_t bytes = 1 << 20) const {
    SideParams p;
    p.gid_index = GetParam().gid_index;
    p.mr_access = mr_access;
    p.buf_bytes = bytes;
    return p;
  }
  void connect_pair(VerbsSide& x, VerbsSide& y) const {
    ConnectParams c;
    c.gid_index = GetParam().gid_index;
    c.qp_access = kRemoteAll;
    c.rd_atomic = 4;
    connect_to(x, y, c);
    connect_to(y, x, c);
  }

  // A fresh connection whose responder QP is on `pd` (b_'s by default) of
  // b_'s context; both QPs offer `send_ops` to ibv_wr_* when nonzero.
  Path& add_path(ibv_pd* pd = nullptr, uint64_t send_ops = 0) {
    Path& p = *paths_.emplace_back(std::make_unique<Path>());
    open_side(p.a, GetParam().a, side_params(kRemoteAll, 1 << 16));
    if (send_ops) {
      ibv_destroy_qp(p.a.qp);
      p.a.qp = nullptr;
      p.a.qp = create_rc_qp(p.a.ctx, p.a.pd, p.a.cq, send_ops);
    }
    p.b.ctx = b_.ctx;
    p.b.pd = pd ? pd : b_.pd;
    p.b.port = b_.port;
    p.b.gid = b_.gid;
    p.b.cq = ibv_create_cq(b_.ctx, 64, nullptr, nullptr, 0);
    if (!p.b.cq) check(errno, "ibv_create_cq");
    p.b.qp = create_rc_qp(b_.ctx, p.b.pd, p.b.cq, send_ops);
    connect_pair(p.a, p.b);
    return p;
  }
  ibv_pd* add_pd() {
    ibv_pd* pd = ibv_alloc_pd(b_.ctx);
    if (!pd) check(errno, "ibv_alloc_pd");
    return pds_.emplace_back(pd);
  }
  // b_'s bytes [off, off + len) registered again, on `pd`.
  ibv_mr* reg(ibv_pd* pd, size_t off, size_t len, int access) {
    ibv_mr* mr = ibv_reg_mr(pd, b_.buf.data() + off, len, access);
    if (!mr) check(errno, "ibv_reg_mr");
    return mrs_.emplace_back(mr);
  }
  int dereg(ibv_mr* mr) {
    const int err = ibv_dereg_mr(mr);
    if (!err) std::erase(mrs_, mr);
    return err;
  }
  Window alloc(ibv_mw_type type, ibv_pd* pd = nullptr) {
    ibv_mw* mw = ibv_alloc_mw(pd ? pd : b_.pd, type);
    if (!mw) check(errno, "ibv_alloc_mw");
    mws_.push_back(mw);
    return Window{mw, mw->rkey};
  }
  int dealloc(Window& w) {
    const int err = ibv_dealloc_mw(w.mw);
    if (!err) std::erase(mws_, std::exchange(w.mw, nullptr));
    return err;
  }

  // A window over b_'s bytes [off, off + len) of `mr` (b_'s own by default)
  // granting `rights`. Window addresses are the MR's: b_'s virtual addresses.
  ibv_mw_bind_info over(size_t off, uint64_t len, unsigned rights, ibv_mr* mr = nullptr) {
    return ibv_mw_bind_info{mr ? mr : b_.mr, remote_addr(b_, off), len, rights};
  }
  static constexpr ibv_mw_bind_info kUnbind{nullptr, 0, 0, 0};

  // Binds `w` on `on`'s QP the way its type is bound: type 1 by ibv_bind_mw,
  // type 2 by posting IBV_WR_BIND_MW under the next key (ibv_inc_rkey). The
  // bind's completion; `w.key` is the key the bind handed out.
  ibv_wc bind(VerbsSide& on, Window& w, const ibv_mw_bind_info& info, uint64_t wr_id = kBindId) {
    int err;
    if (w.mw->type == IBV_MW_TYPE_1) {
      ibv_mw_bind mb{};
      mb.wr_id = wr_id;
      mb.send_flags = IBV_SEND_SIGNALED;
      mb.bind_info = info;
      err = ibv_bind_mw(on.qp, w.mw, &mb);
      if (!err) w.key = w.mw->rkey;
    } else {
      ibv_send_wr wr{}, *bad = nullptr;
      wr.wr_id = wr_id;
      wr.opcode = IBV_WR_BIND_MW;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.bind_mw.mw = w.mw;
      wr.bind_mw.rkey = ibv_inc_rkey(w.key);
      wr.bind_mw.bind_info = info;
      err = ibv_post_send(on.qp, &wr, &bad);
      if (!err) w.key = wr.bind_mw.rkey;
    }
    return completion_of(on, err, "posting the bind");
  }
  ibv_wc local_inv(VerbsSide& on, uint32_t rkey, uint64_t wr_id = kInvId) {
    ibv_send_wr wr{}, *bad = nullptr;
    wr.wr_id = wr_id;
    wr.opcode = IBV_WR_LOCAL_INV;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.invalidate_rkey = rkey;
    return completion_of(on, ibv_post_send(on.qp, &wr, &bad), "posting LOCAL_INV");
  }
  // The completion of what was just posted on `on` (`err`: the post's
  // result; a failed post is a test failure and a GENERAL_ERR completion).
  static ibv_wc completion_of(VerbsSide& on, int err, const char* what) {
    if (err) {
      ADD_FAILURE() << what << ": " << std::strerror(err);
      ibv_wc wc{};
      wc.status = IBV_WC_GENERAL_ERR;
      return wc;
    }
    return wait_one(on);
  }

  // One signalled `op` between `from`'s bytes at `local` and `raddr` under
  // `rkey` (64 bytes; an atomic's 8, adding `add`); its completion status.
  static ibv_wc_status access(VerbsSide& from, ibv_wr_opcode op, uint64_t raddr, uint32_t rkey, size_t local = 0,
                              uint64_t add = 1) {
    RemoteOp r;
    r.op = op;
    r.remote_addr = raddr;
    r.rkey = rkey;
    r.compare_add = add;
    const uint32_t len = op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP ? 8 : 64;
    const int err = post_remote(from, kAccessId, {sge(from, local, len)}, r);
    if (err) {
      ADD_FAILURE() << "posting the access: " << std::strerror(err);
      return IBV_WC_GENERAL_ERR;
    }
    const ibv_wc wc = wait_one(from);
    EXPECT_EQ(wc.wr_id, kAccessId);
    return wc.status;
  }
  // A violation: the requester's WQE completes REM_ACCESS_ERR and both ends
  // of the connection are in ERR (the responder's NAK takes it there too).
  static void expect_refused(VerbsSide& from, VerbsSide& to, ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
                             size_t local = 0) {
    EXPECT_EQ(access(from, op, raddr, rkey, local), IBV_WC_REM_ACCESS_ERR);
    EXPECT_EQ(qp_state(from.qp), IBV_QPS_ERR);
    EXPECT_EQ(qp_state(to.qp), IBV_QPS_ERR);
  }

  // The binds C10-73..75 refuse, each on a fresh QP of b_'s PD (a refused bind
  // breaks its QP): MW_BIND_ERR, and the QP in ERR. Each is followed by its
  // corrected twin on b_'s QP, which succeeds: the refusal was for the reason
  // named, and it left the window bindable (for type 2: still free).
  void expect_refused_binds(ibv_mw_type type) {
    ibv_mr* no_bind = reg(b_.pd, kSpare, 8192, IBV_ACCESS_LOCAL_WRITE);
    ibv_mr* small = reg(b_.pd, kSpare + 8192, 8192, kBindable);
    ibv_mr* no_local_write = reg(b_.pd, kSpare + 16384, 8192, IBV_ACCESS_MW_BIND);
    struct Case {
      const char* what;
      ibv_mw_bind_info bad, good;
    };
    const Case cases[] = {
        {"an MR registered without MW_BIND", over(kSpare, 4096, kRead, no_bind), over(kWin, 4096, kRead)},
        {"a range running 4 KiB past the MR's end", over(kSpare + 8192 + 4096, 8192, kRead, small),
         over(kSpare + 8192 + 4096, 4096, kRead, small)},
        {"remote write into an MR without local write", over(kSpare + 16384, 4096, kWrite, no_local_write),
         over(kSpare + 16384, 4096, kRead, no_local_write)},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(c.what);
      Window w = alloc(type);
      Path& p = add_path();
      const ibv_wc wc = bind(p.b, w, c.bad);
      EXPECT_EQ(wc.status, IBV_WC_MW_BIND_ERR);
      EXPECT_EQ(wc.opcode, IBV_WC_BIND_MW);
      EXPECT_EQ(wc.wr_id, kBindId);
      EXPECT_EQ(qp_state(p.b.qp), IBV_QPS_ERR);
      EXPECT_TRUE(completed(bind(b_, w, c.good), IBV_WC_BIND_MW, kBindId)) << "the corrected bind";
    }
  }

  VerbsSide a_, b_;
  VerbsSide foreign_;  // a second context on b_'s device, for the tests that need one
  std::vector<std::unique_ptr<Path>> paths_;
  std::vector<ibv_mw*> mws_;
  std::vector<ibv_mr*> mrs_;
  std::vector<ibv_pd*> pds_;
};

// ---------------------------------------------------------------------------
// Allocation and what the device says it offers.

class MemoryWindow : public WindowFixture {};

TEST_P(MemoryWindow, DeviceAdvertisesType1AndType2BWindows) {
  ibv_device_attr da{};
  ASSERT_EQ(ibv_query_device(b_.ctx, &da), 0);
  EXPECT_TRUE(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
  EXPECT_TRUE(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
  EXPECT_TRUE(da.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS) << "LOCAL_INV and SEND_WITH_INV";
  EXPECT_GT(da.max_mw, 0);
}

TEST_P(MemoryWindow, AllocGivesEachTypeAWindowWithItsOwnKey) {
  const Window one = alloc(IBV_MW_TYPE_1), two = alloc(IBV_MW_TYPE_2);
  EXPECT_EQ(one.mw->type, IBV_MW_TYPE_1);
  EXPECT_EQ(two.mw->type, IBV_MW_TYPE_2);
  for (const Window* w : {&one, &two}) {
    EXPECT_EQ(w->mw->pd, b_.pd);
    EXPECT_EQ(w->mw->context, b_.ctx);
    EXPECT_NE(w->key, 0u);
    EXPECT_NE(w->key & kMwKeyBit, 0u) << std::hex << w->key;
  }
  EXPECT_NE(one.key, two.key);
  EXPECT_NE(one.key, b_.mr->rkey);
}

TEST_P(MemoryWindow, AllocOfAnUnknownTypeIsEinval) {
  errno = 0;
  ibv_mw* mw = ibv_alloc_mw(b_.pd, static_cast<ibv_mw_type>(3));
  EXPECT_EQ(mw, nullptr);
  EXPECT_EQ(errno, EINVAL);
  if (mw) ibv_dealloc_mw(mw);
}

// On a PD holding nothing else, so the window is what makes it busy.
TEST_P(MemoryWindow, APdHoldingAWindowIsBusyUntilTheWindowGoes) {
  for (ibv_mw_type type : {IBV_MW_TYPE_1, IBV_MW_TYPE_2}) {
    SCOPED_TRACE(type);
    ibv_pd* pd = ibv_alloc_pd(b_.ctx);
    ASSERT_NE(pd, nullptr);
    ibv_mw* mw = ibv_alloc_mw(pd, type);
    if (!mw) {
      ADD_FAILURE() << "ibv_alloc_mw: " << std::strerror(errno);
      ibv_dealloc_pd(pd);
      return;
    }
    EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY);
    EXPECT_EQ(ibv_dealloc_mw(mw), 0);
    EXPECT_EQ(ibv_dealloc_pd(pd), 0);
  }
}

// ---------------------------------------------------------------------------
// Type 1: bound with ibv_bind_mw, usable from any QP of its PD.

class Type1Window : public WindowFixture {};

// Each bind hands out the window's next key (only the 8-bit key part
// changes: ibv_inc_rkey), and the latest one is the live one.
TEST_P(Type1Window, EachBindCompletesAndStepsTheKey) {
  Window w = alloc(IBV_MW_TYPE_1);
  for (uint64_t i = 0; i < 3; ++i) {
    const uint32_t prev = w.key;
    EXPECT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWrite), kBindId + i), IBV_WC_BIND_MW, kBindId + i));
    EXPECT_EQ(w.key, ibv_inc_rkey(prev)) << "bind " << i;
  }
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), w.key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kWin, 64));
}

TEST_P(Type1Window, CarriesWriteReadAndFetchAddAtTheMrsAddresses) {
  Window w = alloc(IBV_MW_TYPE_1);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWindowAll)), IBV_WC_BIND_MW, kBindId));
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 100), w.key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kWin + 100, 64)) << "WRITE";
  fill(a_, 64, 64, 2);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + kWinLen - 64), w.key, 64), IBV_WC_SUCCESS)
      << "the window's last 64 bytes";
  EXPECT_TRUE(same(a_, 64, b_, kWin + kWinLen - 64, 64));
  fill(b_, kWin + 1024, 64, 3);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_READ, remote_addr(b_, kWin + 1024), w.key, 1024), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(b_, kWin + 1024, a_, 1024, 64)) << "READ";
  set_word(b_, kWin + 2048, 7);
  EXPECT_EQ(access(a_, IBV_WR_ATOMIC_FETCH_AND_ADD, remote_addr(b_, kWin + 2048), w.key, 2048, 5), IBV_WC_SUCCESS);
  EXPECT_EQ(word(a_, 2048), 7u) << "fetch-add returns the old value";
  EXPECT_EQ(word(b_, kWin + 2048), 12u);
}

// Both edges, inside b_'s MR: one access straddling the window's end, one
// straddling its start (the latter from a second connection, which first
// shows the window serves it). Nothing of either is placed.
TEST_P(Type1Window, RefusesAccessOutsideItsRange) {
  Window w = alloc(IBV_MW_TYPE_1);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  fill(a_, 0, 64, 1);
  expect_refused(a_, b_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + kWinLen - 32), w.key);
  EXPECT_TRUE(zero(b_, kWin + kWinLen - 32, 64));

  Path& p = add_path();
  fill(p.a, 0, 64, 2);
  EXPECT_EQ(access(p.a, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 512), w.key), IBV_WC_SUCCESS)
      << "a type 1 window serves every QP of its PD";
  EXPECT_TRUE(same(p.a, 0, b_, kWin + 512, 64));
  expect_refused(p.a, p.b, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin - 32), w.key);
  EXPECT_TRUE(zero(b_, kWin - 32, 64));
}

// Bound for remote read only: READ works; WRITE and FETCH_ADD are refused.
TEST_P(Type1Window, GrantsOnlyTheRightsItWasBoundWith) {
  Window w = alloc(IBV_MW_TYPE_1);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kRead)), IBV_WC_BIND_MW, kBindId));
  fill(b_, kWin, 64, 4);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_READ, remote_addr(b_, kWin), w.key, 512), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(b_, kWin, a_, 512, 64));
  fill(a_, 0, 64, 5);
  expect_refused(a_, b_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), w.key);
  EXPECT_TRUE(same(b_, kWin, a_, 512, 64)) << "the window's bytes are what were read";

  Path& p = add_path();
  expect_refused(p.a, p.b, IBV_WR_ATOMIC_FETCH_AND_ADD, remote_addr(b_, kWin + 2048), w.key);
  EXPECT_EQ(word(b_, kWin + 2048), 0u);
}

// Moved to another range: the new key works there; the old key, and the new
// key at the old range, are refused.
TEST_P(Type1Window, RebindRetiresTheOldKeyAndRange) {
  constexpr size_t kMoved = kWin + 8192;
  Window w = alloc(IBV_MW_TYPE_1);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  const uint32_t old_key = w.key;
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), old_key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kWin, 64));

  ASSERT_TRUE(completed(bind(b_, w, over(kMoved, kWinLen, kWrite), kBindId + 1), IBV_WC_BIND_MW, kBindId + 1));
  EXPECT_EQ(w.key, ibv_inc_rkey(old_key));
  fill(a_, 64, 64, 2);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kMoved), w.key, 64), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 64, b_, kMoved, 64));

  fill(a_, 128, 64, 3);
  expect_refused(a_, b_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 64), old_key, 128);
  EXPECT_TRUE(zero(b_, kWin + 64, 64)) << "the old key";
  Path& p = add_path();
  fill(p.a, 0, 64, 4);
  expect_refused(p.a, p.b, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 128), w.key);
  EXPECT_TRUE(zero(b_, kWin + 128, 64)) << "the new key at the old range";
}

// Bound to no memory (mr NULL, length 0): a bind like any other, and then no
// key of the window reaches anything.
TEST_P(Type1Window, UnbindLeavesNoKeyThatReachesMemory) {
  Window w = alloc(IBV_MW_TYPE_1);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  const uint32_t bound_key = w.key;
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), bound_key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kWin, 64));

  ASSERT_TRUE(completed(bind(b_, w, kUnbind, kBindId + 1), IBV_WC_BIND_MW, kBindId + 1));
  EXPECT_EQ(w.key, ibv_inc_rkey(bound_key)) << "unbinding is a bind: it steps the key";
  fill(a_, 64, 64, 2);
  expect_refused(a_, b_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 64), w.key, 64);
  EXPECT_TRUE(zero(b_, kWin + 64, 64)) << "the key the unbind handed out";
  Path& p = add_path();
  fill(p.a, 0, 64, 3);
  expect_refused(p.a, p.b, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 128), bound_key);
  EXPECT_TRUE(zero(b_, kWin + 128, 64)) << "the key that worked before";
}

// Refused by the verb itself, before anything is posted: a zero-based type 1
// window (o10-36.2.2; mlx5 checks it at post) and an MR of another PD
// (libibverbs' own EPERM). Neither queues a WQE nor uses up a key.
TEST_P(Type1Window, ZeroBasedOrForeignPdBindIsRefusedAtPost) {
  Window w = alloc(IBV_MW_TYPE_1);
  const uint32_t key = w.key;
  ibv_mw_bind mb{};
  mb.send_flags = IBV_SEND_SIGNALED;
  mb.wr_id = 1;
  mb.bind_info = over(kWin, kWinLen, kRead | IBV_ACCESS_ZERO_BASED);
  EXPECT_EQ(ibv_bind_mw(b_.qp, w.mw, &mb), EINVAL);
  ibv_mr* foreign = reg(add_pd(), kSpare, 4096, kBindable);
  mb.wr_id = 2;
  mb.bind_info = over(kSpare, 4096, kRead, foreign);
  EXPECT_EQ(ibv_bind_mw(b_.qp, w.mw, &mb), EPERM);
  EXPECT_EQ(w.mw->rkey, key);
  EXPECT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kRead), 3), IBV_WC_BIND_MW, 3))
      << "the first completion is the first bind that was posted";
  EXPECT_EQ(w.key, ibv_inc_rkey(key));
}

TEST_P(Type1Window, BindsTheIbaRefusesCompleteWithMwBindError) { expect_refused_binds(IBV_MW_TYPE_1); }

// ---------------------------------------------------------------------------
// Type 2B: bound by posting IBV_WR_BIND_MW, usable only through the QP that
// bound it.

class Type2Window : public WindowFixture {};

TEST_P(Type2Window, BoundByPostCarriesWritesAndReads) {
  Window w = alloc(IBV_MW_TYPE_2);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWrite | kRead)), IBV_WC_BIND_MW, kBindId));
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 8), w.key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kWin + 8, 64)) << "WRITE";
  fill(b_, kWin + 512, 64, 2);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_READ, remote_addr(b_, kWin + 512), w.key, 512), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(b_, kWin + 512, a_, 512, 64)) << "READ";
}

// Local operations posted between READs (one post list, nothing awaited):
// each executes in SQ order and completes after the READ before it and
// before the READ after it, as a READ's responses acknowledge it.
TEST_P(Type2Window, BindAndInvalidateBehindReadsCompleteInOrder) {
  Window w = alloc(IBV_MW_TYPE_2);
  fill(a_, 0, 256, 3);
  ibv_sge g[3];
  ibv_send_wr wr[5]{}, *bad = nullptr;
  for (int i = 0; i < 5; ++i) {
    wr[i].wr_id = uint64_t(i + 1);
    wr[i].send_flags = IBV_SEND_SIGNALED;
    if (i + 1 < 5) wr[i].next = &wr[i + 1];
  }
  for (int r = 0; r < 3; ++r) {  // READs at wr[0], wr[2], wr[4]
    g[r] = sge(b_, kSpare + size_t(r) * 64, 64);
    ibv_send_wr& x = wr[2 * r];
    x.opcode = IBV_WR_RDMA_READ;
    x.sg_list = &g[r];
    x.num_sge = 1;
    x.wr.rdma.remote_addr = remote_addr(a_, size_t(r) * 64);
    x.wr.rdma.rkey = a_.mr->rkey;
  }
  wr[1].opcode = IBV_WR_BIND_MW;
  wr[1].bind_mw.mw = w.mw;
  wr[1].bind_mw.rkey = ibv_inc_rkey(w.key);
  wr[1].bind_mw.bind_info = over(kWin, kWinLen, kWrite);
  wr[3].opcode = IBV_WR_LOCAL_INV;
  wr[3].invalidate_rkey = wr[1].bind_mw.rkey;
  ASSERT_EQ(ibv_post_send(b_.qp, wr, &bad), 0) << "one post list: the engine sees all five at once";
  const ibv_wc_opcode want[] = {IBV_WC_RDMA_READ, IBV_WC_BIND_MW, IBV_WC_RDMA_READ, IBV_WC_LOCAL_INV,
                                IBV_WC_RDMA_READ};
  for (uint64_t id = 1; id <= 5; ++id) {
    const ibv_wc wc = wait_one(b_);
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << id;
    EXPECT_EQ(wc.wr_id, id) << "completions in SQ order";
    EXPECT_EQ(wc.opcode, want[id - 1]) << id;
  }
  EXPECT_TRUE(same(a_, 0, b_, kSpare, 192)) << "all three READs landed";
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), wr[1].bind_mw.rkey), IBV_WC_REM_ACCESS_ERR)
      << "the LOCAL_INV behind the second READ took effect";
}

// A second QP of the same PD reaches b_'s memory through a type 1 window, so
// only the type 2 window's binding to b_'s QP stands in its way.
TEST_P(Type2Window, OnlyTheQpThatBoundItCanUseIt) {
  Window two = alloc(IBV_MW_TYPE_2), one = alloc(IBV_MW_TYPE_1);
  ASSERT_TRUE(completed(bind(b_, two, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  ASSERT_TRUE(completed(bind(b_, one, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), two.key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kWin, 64));

  Path& p = add_path();
  fill(p.a, 0, 64, 2);
  EXPECT_EQ(access(p.a, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 128), one.key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(p.a, 0, b_, kWin + 128, 64));
  fill(p.a, 64, 64, 3);
  expect_refused(p.a, p.b, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 256), two.key, 64);
  EXPECT_TRUE(zero(b_, kWin + 256, 64));
}

// A bound type 2 window is not free (o10-37.2.30): binding it again is an error.
TEST_P(Type2Window, BindingABoundWindowIsMwBindError) {
  Window w = alloc(IBV_MW_TYPE_2);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), w.key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kWin, 64));
  const ibv_wc again = bind(b_, w, over(kWin + 8192, kWinLen, kWrite), kBindId + 1);
  EXPECT_EQ(again.status, IBV_WC_MW_BIND_ERR);
  EXPECT_EQ(again.opcode, IBV_WC_BIND_MW);
  EXPECT_EQ(again.wr_id, kBindId + 1);
  EXPECT_EQ(qp_state(b_.qp), IBV_QPS_ERR);
}

// Zero-based: remote addresses count from the window's first byte, up to its
// length and not a byte further.
TEST_P(Type2Window, ZeroBasedWindowIsAddressedFromZero) {
  Window w = alloc(IBV_MW_TYPE_2);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWrite | kRead | IBV_ACCESS_ZERO_BASED)), IBV_WC_BIND_MW,
                        kBindId));
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, 8, w.key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kWin + 8, 64)) << "remote address 8 is the window's byte 8";
  fill(b_, kWin + 1024, 64, 2);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_READ, 1024, w.key, 512), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(b_, kWin + 1024, a_, 512, 64));
  fill(a_, 128, 64, 3);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, kWinLen - 64, w.key, 128), IBV_WC_SUCCESS) << "its last 64 bytes";
  EXPECT_TRUE(same(a_, 128, b_, kWin + kWinLen - 64, 64));
  fill(a_, 192, 64, 4);
  expect_refused(a_, b_, IBV_WR_RDMA_WRITE, kWinLen - 32, w.key, 192);
  EXPECT_TRUE(same(a_, 128, b_, kWin + kWinLen - 64, 64)) << "the window's tail is as it was";
  EXPECT_TRUE(zero(b_, kWin + kWinLen, 32)) << "and past it nothing was placed";
}

TEST_P(Type2Window, BindsTheIbaRefusesCompleteWithMwBindErrorAndLeaveItFree) {
  expect_refused_binds(IBV_MW_TYPE_2);
}

// ---------------------------------------------------------------------------
// Invalidation: LOCAL_INV by the owner, SEND_WITH_INV by the peer.

class Invalidate : public WindowFixture {};

TEST_P(Invalidate, LocalInvalidateRetiresATypeTwoKey) {
  Window w = alloc(IBV_MW_TYPE_2);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), w.key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kWin, 64));
  ASSERT_TRUE(completed(local_inv(b_, w.key), IBV_WC_LOCAL_INV, kInvId));
  fill(a_, 64, 64, 2);
  expect_refused(a_, b_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 64), w.key, 64);
  EXPECT_TRUE(zero(b_, kWin + 64, 64));
}

TEST_P(Invalidate, AnInvalidatedWindowBindsAgainUnderANewKey) {
  constexpr size_t kMoved = kWin + 8192;
  Window w = alloc(IBV_MW_TYPE_2);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  const uint32_t first = w.key;
  ASSERT_TRUE(completed(local_inv(b_, first), IBV_WC_LOCAL_INV, kInvId));
  ASSERT_TRUE(completed(bind(b_, w, over(kMoved, kWinLen, kWrite), kBindId + 1), IBV_WC_BIND_MW, kBindId + 1));
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kMoved), w.key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kMoved, 64));
  fill(a_, 64, 64, 2);
  expect_refused(a_, b_, IBV_WR_RDMA_WRITE, remote_addr(b_, kMoved + 64), first, 64);
  EXPECT_TRUE(zero(b_, kMoved + 64, 64)) << "the invalidated key stays dead";
}

// Only a type 2 window's key can be invalidated (o10-37.2.26; MRs of the
// user's own registration cannot be). Each refusal breaks its QP, so each
// has its own; the type 1 window is still bound afterwards.
TEST_P(Invalidate, LocalInvalidateOfAnythingButATypeTwoWindowIsLocalQpOpError) {
  Window one = alloc(IBV_MW_TYPE_1);
  ASSERT_TRUE(completed(bind(b_, one, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  const struct {
    const char* what;
    uint32_t key;
  } cases[] = {{"a type 1 window's key", one.key}, {"an MR's key", b_.mr->rkey}, {"a made-up key", kMadeUpKey}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Path& p = add_path();
    const ibv_wc wc = local_inv(p.b, c.key);
    EXPECT_EQ(wc.status, IBV_WC_LOC_QP_OP_ERR);
    EXPECT_EQ(wc.wr_id, kInvId);
    EXPECT_EQ(qp_state(p.b.qp), IBV_QPS_ERR);
  }
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), one.key), IBV_WC_SUCCESS)
      << "the type 1 window is still bound";
  EXPECT_TRUE(same(a_, 0, b_, kWin, 64));
}

// The peer's SEND_WITH_INV invalidates the receiver's window as it delivers:
// the receive says which key it invalidated.
TEST_P(Invalidate, SendWithInvalidateRetiresTheReceiversWindow) {
  Window w = alloc(IBV_MW_TYPE_2);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), w.key), IBV_WC_SUCCESS) << "live before";
  EXPECT_TRUE(same(a_, 0, b_, kWin, 64));
  ASSERT_EQ(post_recv(b_, 7, {sge(b_, kRecv, 256)}), 0);
  fill(a_, 64, 64, 2);
  ASSERT_EQ(post_send_inv(a_, 8, sge(a_, 64, 64), w.key), 0);
  EXPECT_TRUE(completed(wait_one(a_), IBV_WC_SEND, 8));
  const ibv_wc got = wait_one(b_);
  EXPECT_TRUE(completed(got, IBV_WC_RECV, 7));
  EXPECT_TRUE(got.wc_flags & IBV_WC_WITH_INV);
  EXPECT_EQ(got.invalidated_rkey, w.key);
  EXPECT_EQ(got.byte_len, 64u);
  EXPECT_TRUE(same(a_, 64, b_, kRecv, 64)) << "the payload";
  fill(a_, 128, 64, 3);
  expect_refused(a_, b_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 64), w.key, 128);
  EXPECT_TRUE(zero(b_, kWin + 64, 64));
}

// Keys that are not a type 2 window of the receiver's PD: the responder NAKs
// the SEND as an invalid request (as rxe's does), each on its own connection.
// The windows named stay bound: a type 1 window of b_'s PD, and a type 2
// window of another PD of the same context (bound and working there).
TEST_P(Invalidate, SendWithInvalidateOfAKeyTheReceiverDoesNotOwnIsRemoteInvalidRequest) {
  Window one = alloc(IBV_MW_TYPE_1);
  ASSERT_TRUE(completed(bind(b_, one, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  ibv_pd* other = add_pd();
  ibv_mr* other_mr = reg(other, kSpare, 8192, kBindable);
  Path& there = add_path(other);
  Window theirs = alloc(IBV_MW_TYPE_2, other);
  ASSERT_TRUE(completed(bind(there.b, theirs, over(kSpare, 4096, kWrite, other_mr)), IBV_WC_BIND_MW, kBindId));

  const struct {
    const char* what;
    uint32_t key;
  } cases[] = {{"a made-up key", kMadeUpKey},
               {"the receiver's MR's key", b_.mr->rkey},
               {"a type 1 window's key", one.key},
               {"a type 2 window of another PD", theirs.key}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Path& p = add_path();
    ASSERT_EQ(post_recv(p.b, 7, {sge(b_, kRecv, 256)}), 0);
    fill(p.a, 0, 64, 1);
    ASSERT_EQ(post_send_inv(p.a, 8, sge(p.a, 0, 64), c.key), 0);
    const ibv_wc sent = wait_one(p.a);
    EXPECT_EQ(sent.status, IBV_WC_REM_INV_REQ_ERR);
    EXPECT_EQ(sent.wr_id, 8u);
    EXPECT_NE(wait_one(p.b).status, IBV_WC_SUCCESS) << "the receive is not completed as a delivery";
  }
  fill(a_, 0, 64, 2);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), one.key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kWin, 64)) << "the type 1 window is still bound";
  fill(there.a, 0, 64, 3);
  EXPECT_EQ(access(there.a, IBV_WR_RDMA_WRITE, remote_addr(b_, kSpare), theirs.key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(there.a, 0, b_, kSpare, 64)) << "the other PD's window is still bound";
}

// UC and UD have no SEND_WITH_INV (IBA table 38): the post fails. The QPs are
// in INIT, where a post is taken (a plain SEND is), so the opcode is the reason.
TEST_P(Invalidate, SendWithInvalidateIsRcOnly) {
  constexpr uint32_t kQkey = 0x11111111;
  ibv_cq* cq = ibv_create_cq(b_.ctx, 8, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  ibv_ah_attr aa{};
  aa.dlid = a_.port.lid;
  aa.port_num = 1;
  if (GetParam().gid_index >= 0) {
    aa.is_global = 1;
    aa.grh.dgid = a_.gid;
    aa.grh.sgid_index = uint8_t(GetParam().gid_index);
    aa.grh.hop_limit = 64;
  }
  ibv_ah* ah = ibv_create_ah(b_.pd, &aa);
  EXPECT_NE(ah, nullptr);
  for (ibv_qp_type type : {IBV_QPT_UC, IBV_QPT_UD}) {
    SCOPED_TRACE(type == IBV_QPT_UC ? "UC" : "UD");
    ibv_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = cq;
    ia.qp_type = type;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    ia.sq_sig_all = 1;
    ibv_qp* qp = ibv_create_qp(b_.pd, &ia);
    if (!qp) {
      ADD_FAILURE() << "ibv_create_qp: " << std::strerror(errno);
      continue;
    }
    ibv_qp_attr at{};
    at.qp_state = IBV_QPS_INIT;
    at.port_num = 1;
    int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
    if (type == IBV_QPT_UD) {
      at.qkey = kQkey;
      mask |= IBV_QP_QKEY;
    } else {
      at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
      mask |= IBV_QP_ACCESS_FLAGS;
    }
    EXPECT_EQ(ibv_modify_qp(qp, &at, mask), 0);
    ibv_sge g = sge(b_, 0, 64);
    ibv_send_wr wr{}, *bad = nullptr;
    wr.wr_id = 1;
    wr.sg_list = &g;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND_WITH_INV;
    wr.invalidate_rkey = kMadeUpKey;
    wr.wr.ud.ah = ah;  // UD's address; UC ignores it
    wr.wr.ud.remote_qpn = a_.qp->qp_num;
    wr.wr.ud.remote_qkey = kQkey;
    EXPECT_EQ(ibv_post_send(qp, &wr, &bad), EINVAL);
    EXPECT_EQ(bad, &wr);
    wr.opcode = IBV_WR_SEND;
    bad = nullptr;
    EXPECT_EQ(ibv_post_send(qp, &wr, &bad), 0) << "the same WR as a plain SEND";
    ibv_destroy_qp(qp);
  }
  if (ah) ibv_destroy_ah(ah);
  ibv_destroy_cq(cq);
}

// ---------------------------------------------------------------------------
// Lifetime: what a bound window holds, and what is left of a deallocated one.

class WindowLifetime : public WindowFixture {};

// A bound window holds its MR (EBUSY, the MR working on); unbinding,
// invalidating or deallocating the window lets go of it.
TEST_P(WindowLifetime, AnMrUnderABoundWindowIsBusyUntilTheWindowLetsGo) {
  const auto busy_until = [&](ibv_mw_type type, size_t off, uint8_t seed, auto&& release) {
    ibv_mr* mr = reg(b_.pd, off, 8192, kBindable);
    Window w = alloc(type);
    ASSERT_TRUE(completed(bind(b_, w, over(off, 4096, kWrite, mr)), IBV_WC_BIND_MW, kBindId));
    const int busy = dereg(mr);
    EXPECT_EQ(busy, EBUSY);
    if (busy == 0) return;
    fill(a_, 0, 64, seed);
    EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, off), w.key), IBV_WC_SUCCESS) << "the MR works on";
    EXPECT_TRUE(same(a_, 0, b_, off, 64));
    release(w);
    EXPECT_EQ(dereg(mr), 0);
  };
  {
    SCOPED_TRACE("unbound");
    busy_until(IBV_MW_TYPE_1, kSpare, 1, [&](Window& w) {
      EXPECT_TRUE(completed(bind(b_, w, kUnbind, kBindId + 1), IBV_WC_BIND_MW, kBindId + 1));
    });
  }
  {
    SCOPED_TRACE("invalidated");
    busy_until(IBV_MW_TYPE_2, kSpare + 8192, 2,
               [&](Window& w) { EXPECT_TRUE(completed(local_inv(b_, w.key), IBV_WC_LOCAL_INV, kInvId)); });
  }
  {
    SCOPED_TRACE("deallocated");
    busy_until(IBV_MW_TYPE_1, kSpare + 16384, 3, [&](Window& w) { EXPECT_EQ(dealloc(w), 0); });
  }
}

// A deallocated window's key reaches nothing: a type 1 window on the main
// connection, a type 2 window on the connection that bound it.
TEST_P(WindowLifetime, ADeallocatedWindowsKeyIsRefused) {
  Window one = alloc(IBV_MW_TYPE_1);
  ASSERT_TRUE(completed(bind(b_, one, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  const uint32_t key1 = one.key;
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), key1), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(a_, 0, b_, kWin, 64));
  EXPECT_EQ(dealloc(one), 0);
  fill(a_, 64, 64, 2);
  expect_refused(a_, b_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 64), key1, 64);
  EXPECT_TRUE(zero(b_, kWin + 64, 64));

  constexpr size_t kOther = kWin + 8192;
  Path& p = add_path();
  Window two = alloc(IBV_MW_TYPE_2);
  ASSERT_TRUE(completed(bind(p.b, two, over(kOther, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  const uint32_t key2 = two.key;
  fill(p.a, 0, 64, 3);
  EXPECT_EQ(access(p.a, IBV_WR_RDMA_WRITE, remote_addr(b_, kOther), key2), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(p.a, 0, b_, kOther, 64));
  EXPECT_EQ(dealloc(two), 0);
  fill(p.a, 64, 64, 4);
  expect_refused(p.a, p.b, IBV_WR_RDMA_WRITE, remote_addr(b_, kOther + 64), key2, 64);
  EXPECT_TRUE(zero(b_, kOther + 64, 64));
}

// ---------------------------------------------------------------------------
// The same through ibv_wr_* on QPs made with the window opcodes.

class WindowWrApi : public WindowFixture {};

TEST_P(WindowWrApi, BindAndLocalInvalidateWorkAsTheClassicPosts) {
  Path& p = add_path(b_.pd, kMwOps);
  ibv_qp_ex* q = ibv_qp_to_qp_ex(p.b.qp);
  ASSERT_NE(q, nullptr);
  Window w = alloc(IBV_MW_TYPE_2);
  const uint32_t key = ibv_inc_rkey(w.key);
  const ibv_mw_bind_info info = over(kWin, kWinLen, kWrite);
  ibv_wr_start(q);
  q->wr_id = 1;
  q->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_bind_mw(q, w.mw, key, &info);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  ASSERT_TRUE(completed(wait_one(p.b), IBV_WC_BIND_MW, 1));
  fill(p.a, 0, 64, 1);
  EXPECT_EQ(access(p.a, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 128), key), IBV_WC_SUCCESS);
  EXPECT_TRUE(same(p.a, 0, b_, kWin + 128, 64));

  ibv_wr_start(q);
  q->wr_id = 2;
  ibv_wr_local_inv(q, key);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  EXPECT_TRUE(completed(wait_one(p.b), IBV_WC_LOCAL_INV, 2));
  fill(p.a, 64, 64, 2);
  expect_refused(p.a, p.b, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 128), key, 64);
  EXPECT_TRUE(same(p.a, 0, b_, kWin + 128, 64)) << "the bytes the live window took, untouched since";
}

TEST_P(WindowWrApi, SendInvWorksAsTheClassicPost) {
  Path& p = add_path(b_.pd, kMwOps);
  ibv_qp_ex* q = ibv_qp_to_qp_ex(p.a.qp);
  ASSERT_NE(q, nullptr);
  Window w = alloc(IBV_MW_TYPE_2);
  ASSERT_TRUE(completed(bind(p.b, w, over(kWin, kWinLen, kWrite)), IBV_WC_BIND_MW, kBindId));
  fill(p.a, 0, 64, 1);
  EXPECT_EQ(access(p.a, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), w.key), IBV_WC_SUCCESS) << "live before";
  EXPECT_TRUE(same(p.a, 0, b_, kWin, 64));
  ASSERT_EQ(post_recv(p.b, 7, {sge(b_, kRecv, 256)}), 0);
  fill(p.a, 64, 64, 2);
  const ibv_sge g = sge(p.a, 64, 64);
  ibv_wr_start(q);
  q->wr_id = 8;
  q->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send_inv(q, w.key);
  ibv_wr_set_sge(q, g.lkey, g.addr, g.length);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  EXPECT_TRUE(completed(wait_one(p.a), IBV_WC_SEND, 8));
  const ibv_wc got = wait_one(p.b);
  EXPECT_TRUE(completed(got, IBV_WC_RECV, 7));
  EXPECT_TRUE(got.wc_flags & IBV_WC_WITH_INV);
  EXPECT_EQ(got.invalidated_rkey, w.key);
  EXPECT_EQ(got.byte_len, 64u);
  EXPECT_TRUE(same(p.a, 64, b_, kRecv, 64)) << "the payload";
  fill(p.a, 128, 64, 3);
  expect_refused(p.a, p.b, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin + 64), w.key, 128);
  EXPECT_TRUE(zero(b_, kWin + 64, 64));
}

// ---------------------------------------------------------------------------
// Hostile peers and contexts.

class HostileWindow : public WindowFixture {};

// Keys a peer might guess, each on its own connection (a refusal breaks it),
// at a live window's range: the window's next key and its key with another
// low byte, and random keys in the window key space. WRITEs and READs
// alternate; none moves a byte either way.
TEST_P(HostileWindow, ForgedKeysNeverReachMemory) {
  constexpr size_t kTarget = kWin + 1024;
  Window w = alloc(IBV_MW_TYPE_1);
  ASSERT_TRUE(completed(bind(b_, w, over(kWin, kWinLen, kWrite | kRead)), IBV_WC_BIND_MW, kBindId));
  fill(a_, 0, 64, 1);
  EXPECT_EQ(access(a_, IBV_WR_RDMA_WRITE, remote_addr(b_, kWin), w.key), IBV_WC_SUCCESS) << "the window is live";
  EXPECT_TRUE(same(a_, 0, b_, kWin, 64));
  fill(b_, kTarget + 512, 64, 2);  // what a forged READ would fetch

  std::vector<uint32_t> forged = {ibv_inc_rkey(w.key), (w.key & ~0xffu) | ((w.key + 0x80) & 0xffu)};
  std::mt19937 rng(0x5eed);
  while (forged.size() < 6) {
    const uint32_t k = uint32_t(rng()) | kMwKeyBit;
    if (k != w.key) forged.push_back(k);
  }
  for (size_t i = 0; i < forged.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "rkey 0x" << std::hex << forged[i]);
    Path& p = add_path();
    if (i % 2 == 0) {
      fill(p.a, 0, 64, 3);
      expect_refused(p.a, p.b, IBV_WR_RDMA_WRITE, remote_addr(b_, kTarget), forged[i]);
    } else {
      expect_refused(p.a, p.b, IBV_WR_RDMA_READ, remote_addr(b_, kTarget + 512), forged[i], 1024);
      EXPECT_TRUE(zero(p.a, 1024, 64)) << "a forged READ fetched the window's bytes";
    }
  }
  EXPECT_TRUE(zero(b_, kTarget, 64)) << "a forged WRITE placed bytes";
}

// Objects of a second context on the same device (another process, as far as
// the device can tell) do not mix with ours: its MR in our bind is a bind
// error. Its window posted on our QP is refused at post (the provider may
// see the mismatch) or as a bind error (C10-72: not the QP's PD); it is
// never bound.
TEST_P(HostileWindow, AnotherContextsObjectsCannotBeBound) {
  open_side(foreign_, GetParam().b, side_params(kBindable, 1 << 16));
  Window mine = alloc(IBV_MW_TYPE_2);
  const ibv_wc wc = bind(b_, mine, ibv_mw_bind_info{foreign_.mr, remote_addr(foreign_, 0), 4096, kWrite});
  EXPECT_EQ(wc.status, IBV_WC_MW_BIND_ERR);
  EXPECT_EQ(wc.wr_id, kBindId);
  EXPECT_EQ(qp_state(b_.qp), IBV_QPS_ERR);

  Path& p = add_path();
  Window theirs = alloc(IBV_MW_TYPE_2, foreign_.pd);
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = kBindId;
  wr.opcode = IBV_WR_BIND_MW;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.bind_mw.mw = theirs.mw;
  wr.bind_mw.rkey = ibv_inc_rkey(theirs.key);
  wr.bind_mw.bind_info = over(kWin, kWinLen, kWrite);
  const int err = ibv_post_send(p.b.qp, &wr, &bad);
  if (err) {
    EXPECT_EQ(err, EINVAL);
  } else {
    EXPECT_EQ(wait_one(p.b).status, IBV_WC_MW_BIND_ERR);
  }
}

#define ON_BOTH_FABRICS(Suite)                                                      \
  INSTANTIATE_TEST_SUITE_P(Fabrics, Suite, ::testing::Values(kIbFabric, kRoceFabric), \
                           [](const auto& i) { return std::string(i.param.name); })
ON_BOTH_FABRICS(MemoryWindow);
ON_BOTH_FABRICS(Type1Window);
ON_BOTH_FABRICS(Type2Window);
ON_BOTH_FABRICS(Invalidate);
ON_BOTH_FABRICS(WindowLifetime);
ON_BOTH_FABRICS(WindowWrApi);
ON_BOTH_FABRICS(HostileWindow);
#undef ON_BOTH_FABRICS

}  // namespace
}  // namespace vf::test
