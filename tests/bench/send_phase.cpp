#include "tests/bench/send_phase.hpp"

namespace vf::bench {
namespace {

void post_recv(VerbsSide& s, int slot) {
  if (int err = vf::test::post_recv(s, uint64_t(slot),
                                    {vf::test::sge(s, kSendSlot * size_t(slot), uint32_t(kSendSlot))}))
    die("ibv_post_recv", err);
}

void post_send(VerbsSide& s, size_t bytes, int slot) {
  if (int err = vf::test::post_send(s, uint64_t(slot),
                                    {vf::test::sge(s, kSendSlot * size_t(slot), uint32_t(bytes))}))
    die("ibv_post_send", err);
}

}  // namespace

double send_latency_us(VerbsSide& a, VerbsSide& b, size_t bytes, int iters) {
  post_recv(a, 0);
  post_recv(b, 0);
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    post_send(a, bytes, 0);
    wait_cq(a, 1);
    wait_cq(b, 1);  // b's receive
    post_recv(b, 0);
    post_send(b, bytes, 0);
    wait_cq(b, 1);
    wait_cq(a, 1);
    post_recv(a, 0);
  }
  return seconds_since(t0) * 1e6 / iters / 2;  // half round trip
}

double send_bandwidth_gbps(VerbsSide& a, VerbsSide& b, size_t bytes, int depth, int iters) {
  for (int i = 0; i < depth; ++i) post_recv(b, i);
  const auto t0 = Clock::now();
  int sent = 0, done = 0, in_flight = 0;
  while (done < iters) {
    while (sent < iters && in_flight < depth) {
      post_send(a, bytes, sent % depth);
      ++sent;
      ++in_flight;
    }
    ibv_wc wc[16];
    int got = ibv_poll_cq(b.cq, 16, wc);
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) die_wc("receive", wc[i]);
      ++done;
      post_recv(b, int(wc[i].wr_id));
    }
    got = ibv_poll_cq(a.cq, 16, wc);
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) die_wc("send", wc[i]);
      --in_flight;
    }
  }
  const double secs = seconds_since(t0);
  while (in_flight > 0) in_flight -= wait_cq(a, 1) == 0 ? 1 : 0;
  return gbps(bytes, iters, secs);
}

}  // namespace vf::bench
