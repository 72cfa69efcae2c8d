#include "tests/bench/rdma_phase.hpp"

#include <atomic>

namespace vf::bench {
namespace {

char* local(VerbsSide& s, size_t region) { return s.buf.data() + region; }
char* target(VerbsSide& s) { return s.buf.data(); }

void fill_wr(ibv_send_wr& wr, ibv_sge& sge, VerbsSide& a, VerbsSide& b, ibv_wr_opcode op,
             size_t region, size_t bytes, bool signaled) {
  sge = ibv_sge{reinterpret_cast<uintptr_t>(local(a, region)), uint32_t(bytes), a.mr->lkey};
  wr = {};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(target(b));
  wr.wr.rdma.rkey = b.mr->rkey;
}

void post_one(VerbsSide& a, VerbsSide& b, ibv_wr_opcode op, size_t region, size_t bytes) {
  ibv_send_wr wr, *bad = nullptr;
  ibv_sge sge;
  fill_wr(wr, sge, a, b, op, region, bytes, true);
  if (int err = ibv_post_send(a.qp, &wr, &bad)) die("ibv_post_send", err);
}

// The peer's WRITE lands through process_vm_writev from fabricd: watch the
// byte through an atomic_ref so the compiler reloads it every time. The
// writer's CQ is polled meanwhile so a failed WRITE ends the run instead of
// spinning forever; `pending` counts its completions not yet seen.
void spin_until(char* p, char v, VerbsSide& writer, int& pending) {
  std::atomic_ref<char> r(*p);
  while (r.load(std::memory_order_acquire) != v) {
    ibv_wc wc;
    const int got = ibv_poll_cq(writer.cq, 1, &wc);
    if (got < 0) die("ibv_poll_cq");
    if (got == 0) continue;
    if (wc.status != IBV_WC_SUCCESS) die_wc("WRITE", wc);
    --pending;
  }
}

}  // namespace

double write_latency_us(VerbsSide& a, VerbsSide& b, size_t region, size_t bytes, int iters) {
  char* a_last = target(a) + bytes - 1;
  char* b_last = target(b) + bytes - 1;
  *a_last = *b_last = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    const char seq = char(i % 127 + 1);
    int a_pending = 1, b_pending = 1;
    local(a, region)[bytes - 1] = seq;
    post_one(a, b, IBV_WR_RDMA_WRITE, region, bytes);
    spin_until(b_last, seq, a, a_pending);
    local(b, region)[bytes - 1] = seq;
    post_one(b, a, IBV_WR_RDMA_WRITE, region, bytes);
    spin_until(a_last, seq, b, b_pending);
    wait_cq(a, a_pending);
    wait_cq(b, b_pending);
  }
  return seconds_since(t0) * 1e6 / iters / 2;
}

double read_latency_us(VerbsSide& a, VerbsSide& b, size_t region, size_t bytes, int iters) {
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    post_one(a, b, IBV_WR_RDMA_READ, region, bytes);
    wait_cq(a, 1);
  }
  return seconds_since(t0) * 1e6 / iters;
}

double rdma_bandwidth_gbps(VerbsSide& a, VerbsSide& b, ibv_wr_opcode op, size_t region,
                           size_t bytes, int depth, int iters) {
  const auto t0 = Clock::now();
  int sent = 0, done = 0;
  ibv_wc wc[16];
  while (done < iters) {
    while (sent < iters && sent - done < depth) {
      post_one(a, b, op, region, bytes);
      ++sent;
    }
    const int got = ibv_poll_cq(a.cq, 16, wc);
    if (got < 0) die("ibv_poll_cq");
    for (int i = 0; i < got; ++i)
      if (wc[i].status != IBV_WC_SUCCESS) die_wc(op == IBV_WR_RDMA_READ ? "READ" : "WRITE", wc[i]);
    done += got;
  }
  return gbps(bytes, iters, seconds_since(t0));
}

double write_msg_rate_mps(VerbsSide& a, VerbsSide& b, size_t region, int batch, int depth,
                          long msgs) {
  const size_t n = static_cast<size_t>(batch);
  std::vector<ibv_send_wr> wrs(n);
  std::vector<ibv_sge> sges(n);
  for (int i = 0; i < batch; ++i) {
    fill_wr(wrs[size_t(i)], sges[size_t(i)], a, b, IBV_WR_RDMA_WRITE, region, 8, i == batch - 1);
    wrs[size_t(i)].next = i + 1 < batch ? &wrs[size_t(i) + 1] : nullptr;
  }
  const long lists = msgs / batch;
  const int max_lists = depth / batch > 0 ? depth / batch : 1;
  long posted = 0, done = 0;
  ibv_wc wc[16];
  const auto t0 = Clock::now();
  while (done < lists) {
    while (posted < lists && posted - done < max_lists) {
      ibv_send_wr* bad = nullptr;
      if (int err = ibv_post_send(a.qp, wrs.data(), &bad)) die("ibv_post_send (list)", err);
      ++posted;
    }
    const int got = ibv_poll_cq(a.cq, 16, wc);
    if (got < 0) die("ibv_poll_cq");
    for (int i = 0; i < got; ++i)
      if (wc[i].status != IBV_WC_SUCCESS) die_wc("WRITE", wc[i]);
    done += got;
  }
  return double(lists * batch) / seconds_since(t0) / 1e6;
}

}  // namespace vf::bench
