#include "sim/plan_run.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace vf::sim {
namespace {

constexpr unsigned kMaxChannels = 16;
constexpr unsigned kMaxWindow = 1024;
constexpr uint64_t kMaxCheckedBytes = uint64_t{1} << 30;  // materialised data: 1 GiB over all ranks

// libibverbs' words for a completion's status, without linking it.
const char* wc_status_name(uint32_t s) {
  switch (s) {
    case IBV_WC_LOC_LEN_ERR: return "local length error";
    case IBV_WC_LOC_QP_OP_ERR: return "local QP operation error";
    case IBV_WC_LOC_PROT_ERR: return "local protection error";
    case IBV_WC_WR_FLUSH_ERR: return "Work Request Flushed Error";
    case IBV_WC_REM_INV_REQ_ERR: return "remote invalid request error";
    case IBV_WC_REM_ACCESS_ERR: return "remote access error";
    case IBV_WC_REM_OP_ERR: return "remote operation error";
    case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
    case IBV_WC_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
    default: return "error";
  }
}

uint64_t pieces(uint64_t bytes, uint64_t chunk) { return (bytes + chunk - 1) / chunk; }
uint64_t wr_id(size_t step, uint64_t piece) { return (uint64_t(step) << 32) | piece; }
uint8_t pattern(size_t sender, size_t step, uint64_t offset) {
  return uint8_t((sender * 131 + step * 31 + offset * 7 + (offset >> 8)) & 0xff);
}

}  // namespace

struct PlanRun::Conn {
  size_t a, b;                             // ranks, a < b
  std::vector<std::unique_ptr<AppQp>> qa, qb;  // one per channel
  unsigned next[2] = {0, 0};               // each end's round robin over channels
};

struct PlanRun::Rank {
  struct StepState {
    uint64_t posted = 0, sent = 0;         // pieces posted, pieces completed
    uint64_t recv_bytes = 0, recv_pieces = 0;
    bool arrived = false;
    bool complete = false;  // arrived, and every piece sent and completed
    uint64_t send_off = 0, recv_off = 0;   // regions (check only)
  };
  size_t host = 0;
  App* app = nullptr;
  uint32_t pd = 0;
  std::unique_ptr<AppCq> cq;
  std::vector<uint8_t> send_buf, recv_buf;
  vhca_reg_mr_rsp smr{}, rmr{};
  std::vector<StepState> steps;
  std::unordered_map<uint32_t, AppQp*> by_qpn;  // its QPs, for receive CQEs
  size_t first_open = 0;  // steps before it have posted every piece
  size_t steps_left = 0;  // not yet complete
  unsigned outstanding = 0;
  Nanos finished_at = 0;
  bool finished = false;
};

std::string run_problem(const ConfigFabric& f, const Plan& p, const RunOptions& o) {
  if (o.hosts.size() != p.ranks.size())
    return fmt::format("the plan has {} ranks but {} hosts were placed", p.ranks.size(), o.hosts.size());
  std::vector<bool> used(f.size());
  for (size_t h : o.hosts) {
    if (h >= f.size()) return fmt::format("host {} is not one of the fabric's {} vHCAs", h, f.size());
    if (used[h]) return fmt::format("two ranks are placed on vHCA {}", f.vhca(h).name);
    used[h] = true;
  }
  for (size_t i = 1; i < o.hosts.size(); ++i)
    if (f.vhca(o.hosts[i]).fabric != f.vhca(o.hosts[0]).fabric)
      return fmt::format("ranks on {} and {} are on different fabrics", f.vhca(o.hosts[0]).name, f.vhca(o.hosts[i]).name);
  if (o.chunk < 64 || o.chunk > (uint64_t{1} << 30)) return "chunk must be from 64 B to 1 GiB";
  if (o.channels == 0 || o.channels > kMaxChannels) return fmt::format("channels must be 1 to {}", kMaxChannels);
  if (o.window == 0 || o.window > kMaxWindow) return fmt::format("window must be 1 to {}", kMaxWindow);
  if (o.check && p.total_bytes() * 2 > kMaxCheckedBytes)
    return fmt::format("--check materialises every byte: {} MiB is more than the 1 GiB it allows; check a smaller run",
                       p.total_bytes() * 2 >> 20);
  return {};
}

PlanRun::PlanRun(ConfigFabric& f, const Plan& p, const RunOptions& o) : f_(f), plan_(p), o_(o) {
  if (const std::string why = run_problem(f, p, o); !why.empty()) throw std::invalid_argument(why);
  for (size_t r = 0; r < p.ranks.size(); ++r) {
    auto rk = std::make_unique<Rank>();
    rk->host = o.hosts[r];
    rk->app = &f.app(rk->host);
    // The engines copy into this run's buffers, which stay mapped while it
    // lives, with memcpy rather than a system call per burst.
    rk->app->hca().copy_in_process(rk->app->id());
    rk->pd = rk->app->alloc_pd();
    rk->steps.resize(p.ranks[r].size());
    uint64_t send = o.chunk, recv = o.chunk;
    if (o.check) {
      send = recv = 0;
      for (size_t s = 0; s < p.ranks[r].size(); ++s) {
        rk->steps[s].send_off = send, rk->steps[s].recv_off = recv;
        send += p.ranks[r][s].send_bytes, recv += p.ranks[r][s].recv_bytes;
      }
    }
    rk->send_buf.assign(std::max<uint64_t>(send, 1), 0);
    rk->recv_buf.assign(std::max<uint64_t>(recv, 1), 0);
    if (o.check)
      for (size_t s = 0; s < p.ranks[r].size(); ++s)
        for (uint64_t x = 0; x < p.ranks[r][s].send_bytes; ++x) rk->send_buf[rk->steps[s].send_off + x] = pattern(r, s, x);
    rk->smr = rk->app->mr(rk->pd, rk->send_buf.data(), rk->send_buf.size());
    rk->rmr = rk->app->mr(rk->pd, rk->recv_buf.data(), rk->recv_buf.size());
    ranks_.push_back(std::move(rk));
  }
  rank_of_host_.assign(f.size(), -1);
  for (size_t r = 0; r < ranks_.size(); ++r) rank_of_host_[ranks_[r]->host] = int(r);
  connect_pairs();
}

PlanRun::~PlanRun() = default;

PlanRun::Conn& PlanRun::conn(size_t a, size_t b) {
  if (a > b) std::swap(a, b);
  return *by_pair_.at(uint64_t(a) << 32 | b);
}

// One RC connection per pair that exchanges anything, in rank order, so a
// run's QPNs (and with them its ECMP hashes) are the same every time.
void PlanRun::connect_pairs() {
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t r = 0; r < plan_.ranks.size(); ++r)
    for (const Step& s : plan_.ranks[r])
      if (s.send_to >= 0) pairs.emplace_back(std::min(r, size_t(s.send_to)), std::max(r, size_t(s.send_to)));
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<unsigned> qps_of(ranks_.size());
  for (const auto& [a, b] : pairs) ++qps_of[a], ++qps_of[b];
  for (size_t r = 0; r < ranks_.size(); ++r) {
    // Room for every send completion and every receive a peer can have in
    // flight towards it; the loop reaps between engine passes.
    const uint64_t want = o_.window + uint64_t(qps_of[r]) * o_.channels * o_.window + 64;
    ranks_[r]->cq = ranks_[r]->app->cq(uint32_t(std::min<uint64_t>(want, 65535)));
  }
  QpCaps caps;
  caps.send_wr = o_.window;
  caps.recv_wr = o_.window * 2;
  caps.send_sge = caps.recv_sge = 1;
  caps.inline_data = 0;
  ConnParams cp;
  cp.mtu = ibv_mtu(mtu_code(f_.topology().port_info(ranks_[0]->host).mtu));
  cp.access = IBV_ACCESS_REMOTE_WRITE;
  for (const auto& [a, b] : pairs) {
    auto c = std::make_unique<Conn>();
    c->a = a, c->b = b;
    Rank &A = *ranks_[a], &B = *ranks_[b];
    for (unsigned ch = 0; ch < o_.channels; ++ch) {
      c->qa.push_back(A.app->qp(A.pd, *A.cq, *A.cq, caps));
      c->qb.push_back(B.app->qp(B.pd, *B.cq, *B.cq, caps));
      f_.connect(A.host, *c->qa.back(), B.host, *c->qb.back(), cp, o_.sl);
      for (auto [rk, q] : {std::pair{&A, c->qa.back().get()}, std::pair{&B, c->qb.back().get()}}) {
        rk->by_qpn[q->qpn] = q;
        for (unsigned i = 0; i < caps.recv_wr; ++i) rk->app->post_recv(*q, recv_wqe(0, {}));
      }
      qp_count_ += 2;
    }
    by_pair_[uint64_t(a) << 32 | b] = c.get();
    conns_.push_back(std::move(c));
  }
}

void PlanRun::start() {
  started_ = f_.sched.now();
  finished_ranks_ = 0;
  delivered_ = 0;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    Rank& rk = *ranks_[r];
    for (auto& st : rk.steps)
      st.posted = st.sent = st.recv_bytes = st.recv_pieces = 0, st.arrived = st.complete = false;
    rk.first_open = 0;
    rk.finished = false;
    rk.steps_left = rk.steps.size();
    for (size_t s = 0; s < rk.steps.size(); ++s)
      if (plan_.ranks[r][s].recv_bytes == 0) rk.steps[s].arrived = true, step_progress(r, s);
    maybe_finish(r);
  }
  // Later flows' start times, latest first: the loop stops the clock there.
  starts_.clear();
  for (const auto& steps : plan_.ranks)
    for (const Step& st : steps)
      if (st.wait == Wait::None && st.send_to >= 0 && st.start > 0) starts_.push_back(started_ + st.start);
  std::sort(starts_.begin(), starts_.end(), std::greater<>());
}

bool PlanRun::poll_rank(size_t r) {
  Rank& rk = *ranks_[r];
  bool did = false;
  vhca_cqe c;
  while (error_.empty() && rk.app->poll_cq(*rk.cq, c)) {
    on_cqe(r, c);
    did = true;
  }
  return pump(r) || did;
}

bool PlanRun::poll() {
  bool did = false;
  for (size_t r = 0; r < ranks_.size() && error_.empty(); ++r) did |= poll_rank(r);
  return did;
}

bool PlanRun::poll(const std::vector<size_t>& hosts) {
  bool did = false;
  for (size_t h : hosts)
    if (error_.empty() && rank_of_host_[h] >= 0) did |= poll_rank(size_t(rank_of_host_[h]));
  return did;
}

// Posts every piece whose wait is over while the window has room: steps in
// order, a waiting step holding back the ones after it unless they are
// independent flows.
bool PlanRun::pump(size_t r) {
  Rank& rk = *ranks_[r];
  const auto& steps = plan_.ranks[r];
  bool did = false;
  const Nanos now = f_.sched.now();
  for (size_t s = rk.first_open; s < steps.size() && rk.outstanding < o_.window; ++s) {
    const Step& st = steps[s];
    auto& ss = rk.steps[s];
    const uint64_t total = st.send_to < 0 ? 0 : pieces(st.send_bytes, o_.chunk);
    if (st.wait == Wait::None && st.start > now - started_) continue;
    while (ss.posted < total && rk.outstanding < o_.window) {
      const bool ready = st.wait == Wait::None || s == 0 ||
                         (st.wait == Wait::Piece ? rk.steps[s - 1].arrived || rk.steps[s - 1].recv_pieces > ss.posted
                                                 : rk.steps[s - 1].arrived);
      if (!ready) break;
      post_piece(r, s, ss.posted++);
      did = true;
    }
    if (ss.posted < total && st.wait != Wait::None) break;  // later steps wait on this one
    if (s == rk.first_open && ss.posted == total) ++rk.first_open;
  }
  return did;
}

void PlanRun::post_piece(size_t r, size_t step, uint64_t piece) {
  Rank& rk = *ranks_[r];
  const Step& st = plan_.ranks[r][step];
  const size_t peer = size_t(st.send_to);
  Rank& pr = *ranks_[peer];
  const uint64_t off = piece * o_.chunk, len = std::min(o_.chunk, st.send_bytes - off);
  Conn& c = conn(r, peer);
  const unsigned ch = c.next[r == c.a ? 0 : 1]++ % o_.channels;
  AppQp& q = r == c.a ? *c.qa[ch] : *c.qb[ch];
  const uint64_t src = o_.check ? rk.steps[step].send_off + off : 0;
  const uint64_t dst = o_.check ? pr.steps[size_t(st.peer_step)].recv_off + off : 0;
  vhca_send_wqe w = send_wqe(wr_id(step, piece), {sge(rk.send_buf.data() + src, uint32_t(len), rk.smr.lkey)},
                             IBV_SEND_SIGNALED, IBV_WR_RDMA_WRITE_WITH_IMM, htonl(uint32_t(st.peer_step)));
  w.remote_addr = reinterpret_cast<uint64_t>(pr.recv_buf.data() + dst);
  w.rkey = pr.rmr.rkey;
  rk.app->post_send(q, w);
  f_.wake(rk.host);  // the doorbell
  ++rk.outstanding;
}

void PlanRun::on_cqe(size_t r, const vhca_cqe& c) {
  Rank& rk = *ranks_[r];
  if (c.status != IBV_WC_SUCCESS) {
    if (error_.empty())
      error_ = fmt::format("rank {} ({}): a completion failed: {} (vendor error {:#x}, QP {:#x})", r,
                           f_.vhca(rk.host).name, wc_status_name(c.status), c.vendor_err, c.qp_num);
    return;
  }
  if (c.opcode == IBV_WC_RDMA_WRITE) {
    const size_t step = size_t(c.wr_id >> 32);
    --rk.outstanding;
    ++rk.steps.at(step).sent;
    step_progress(r, step);
    return;
  }
  // IBV_WC_RECV_RDMA_WITH_IMM: a piece of one of this rank's steps arrived.
  const size_t step = ntohl(c.imm_data);
  if (step >= rk.steps.size() || rk.steps[step].arrived) {
    error_ = fmt::format("rank {}: a piece for step {} that expects none", r, step);
    return;
  }
  auto& ss = rk.steps[step];
  ss.recv_bytes += c.byte_len;
  ++ss.recv_pieces;
  delivered_ += c.byte_len;
  rk.app->post_recv(*rk.by_qpn.at(c.qp_num), recv_wqe(0, {}));
  if (ss.recv_bytes >= plan_.ranks[r][step].recv_bytes) step_arrived(r, step);
}

void PlanRun::step_arrived(size_t r, size_t step) {
  Rank& rk = *ranks_[r];
  auto& ss = rk.steps[step];
  const Step& st = plan_.ranks[r][step];
  ss.arrived = true;
  if (ss.recv_bytes != st.recv_bytes && error_.empty())
    error_ = fmt::format("rank {} step {}: {} bytes arrived, {} expected", r, step, ss.recv_bytes, st.recv_bytes);
  if (o_.check) {
    // Which of the sender's steps this is: the one that names it.
    const size_t from = size_t(st.recv_from);
    size_t sender_step = 0;
    while (sender_step < plan_.ranks[from].size() &&
           !(plan_.ranks[from][sender_step].send_to == int(r) && plan_.ranks[from][sender_step].peer_step == int(step)))
      ++sender_step;
    for (uint64_t x = 0; x < st.recv_bytes && error_.empty(); ++x)
      if (rk.recv_buf[ss.recv_off + x] != pattern(from, sender_step, x))
        error_ = fmt::format("rank {} step {}: byte {} from rank {} is corrupted", r, step, x, from);
    checked_ += st.recv_bytes;
  }
  step_progress(r, step);
}

void PlanRun::step_progress(size_t r, size_t s) {
  Rank& rk = *ranks_[r];
  auto& ss = rk.steps[s];
  const Step& st = plan_.ranks[r][s];
  if (ss.complete || !ss.arrived || ss.sent < (st.send_to < 0 ? 0 : pieces(st.send_bytes, o_.chunk))) return;
  ss.complete = true;
  --rk.steps_left;
  maybe_finish(r);
}

void PlanRun::maybe_finish(size_t r) {
  Rank& rk = *ranks_[r];
  if (rk.finished || rk.steps_left) return;
  rk.finished = true;
  rk.finished_at = f_.sched.now();
  ++finished_ranks_;
}

Nanos PlanRun::finished() const {
  Nanos t = started_;
  for (const auto& rk : ranks_) t = std::max(t, rk->finished_at);
  return t;
}

Nanos PlanRun::rank_finished(size_t r) const { return ranks_.at(r)->finished_at; }

Nanos PlanRun::next_start() {
  const Nanos now = f_.sched.now();
  while (!starts_.empty() && starts_.back() <= now) starts_.pop_back();
  return starts_.empty() ? kNever : starts_.back();
}

CollectiveFigures figures(const Plan& p, Nanos elapsed) {
  CollectiveFigures f;
  f.time_us = double(elapsed) / 1e3;
  if (elapsed == 0) return f;
  if (p.algo == "flows") {
    // No collective: the mean rate at which each receiving host took its
    // bytes in, comparable with the host link's bound.
    size_t receivers = 0;
    for (size_t r = 0; r < p.ranks.size(); ++r) receivers += p.received_by(r) > 0;
    f.algbw_gbs = double(p.total_bytes()) / double(receivers ? receivers : 1) / double(elapsed);
  } else {
    f.algbw_gbs = double(p.bytes) / double(elapsed);  // bytes per ns = GB/s
  }
  f.busbw_gbs = f.algbw_gbs * p.bus_factor;
  return f;
}

}  // namespace vf::sim
