// CPU cost of one RC SEND (and RDMA WRITE / READ) end to end between two vHCAs on the engine tests'
// virtual-time wire (tests/unit/engine/harness.hpp): WQE fetch, segmentation,
// the DMA read out of the "app" (this process), the test port, PSN checks,
// placement with the DMA write, the ACK and both CQEs. Time is CPU per
// message; dma_calls/msg counts process_vm_readv/writev calls (both sides),
// which on a VM cost 4-8 us each and dominate the lcore's profile.
#include <benchmark/benchmark.h>

#include "tests/unit/engine/harness.hpp"

namespace {

using namespace vf::engine;
using namespace vf::engine::test;

// The tests' two-vHCA fixture, driven by hand instead of by GoogleTest.
class Rig : public Pair {
 public:
  explicit Rig(ibv_mtu mtu) {
    ConnParams p;
    p.mtu = mtu;
    setup(p);
    fill_pattern(buf_a.data(), buf_a.size(), 1);
  }
  void TestBody() override {}

  // One SEND of `len` bytes A -> B; false unless both sides complete.
  bool message(uint32_t len, uint64_t id) {
    app_b->post_recv(*qp_b, recv_wqe(id, {sge(buf_b.data(), len, mr_b.lkey)}));
    app_a->post_send(*qp_a, send_wqe(id, {sge(buf_a.data(), len, mr_a.lkey)}));
    bool sent = false, recvd = false, ok = true;
    run_until([&] {
      vhca_cqe e;
      while (app_a->poll_cq(*cq_a, e)) sent = true, ok &= e.status == IBV_WC_SUCCESS;
      while (app_b->poll_cq(*cq_b, e)) recvd = true, ok &= e.status == IBV_WC_SUCCESS;
      return sent && recvd;
    });
    return sent && recvd && ok;
  }
  // One RDMA WRITE (A's buffer -> B's) or READ (B's -> A's) of `len` bytes;
  // false unless it completes.
  bool rdma(uint8_t opcode, uint32_t len, uint64_t id) {
    vhca_send_wqe w = send_wqe(id, {sge(buf_a.data(), len, mr_a.lkey)}, IBV_SEND_SIGNALED, opcode);
    w.remote_addr = reinterpret_cast<uint64_t>(buf_b.data());
    w.rkey = mr_b.rkey;
    app_a->post_send(*qp_a, w);
    bool done = false, ok = true;
    run_until([&] {
      vhca_cqe e;
      while (app_a->poll_cq(*cq_a, e)) done = true, ok &= e.status == IBV_WC_SUCCESS;
      return done;
    });
    return done && ok;
  }
  const Counters& a() const { return hca_a.counters(); }
  const Counters& b() const { return hca_b.counters(); }
};

void BM_Send(benchmark::State& state) {
  const auto len = uint32_t(state.range(0));
  Rig rig(ibv_mtu(state.range(1)));
  const Counters a0 = rig.a(), b0 = rig.b();
  uint64_t id = 0;
  for (auto _ : state) {
    if (!rig.message(len, ++id)) {
      state.SkipWithError("message failed");
      return;
    }
  }
  const double n = double(state.iterations());
  state.SetBytesProcessed(int64_t(state.iterations()) * len);
  state.counters["pkts/msg"] = double(rig.a().tx_packets - a0.tx_packets) / n;
  state.counters["dma_calls/msg"] =
      double(rig.a().dma_calls - a0.dma_calls + rig.b().dma_calls - b0.dma_calls) / n;
}
// {message bytes, path MTU (ibv_mtu)}
BENCHMARK(BM_Send)
    ->Args({65536, IBV_MTU_4096})
    ->Args({65536, IBV_MTU_1024})
    ->Args({4096, IBV_MTU_4096})
    ->Args({64, IBV_MTU_4096})
    ->Unit(benchmark::kMicrosecond);

// RDMA WRITE / READ of {bytes, path MTU}: the same costs without a receive
// WQE; a READ's data comes back in response packets (one DMA read per burst
// at B, one DMA write per receive burst at A).
void BM_Rdma(benchmark::State& state, uint8_t opcode) {
  const auto len = uint32_t(state.range(0));
  Rig rig(ibv_mtu(state.range(1)));
  const Counters a0 = rig.a(), b0 = rig.b();
  uint64_t id = 0;
  for (auto _ : state) {
    if (!rig.rdma(opcode, len, ++id)) {
      state.SkipWithError("operation failed");
      return;
    }
  }
  const double n = double(state.iterations());
  state.SetBytesProcessed(int64_t(state.iterations()) * len);
  state.counters["pkts/op"] =
      double(rig.a().tx_packets - a0.tx_packets + rig.b().tx_packets - b0.tx_packets) / n;
  state.counters["dma_calls/op"] =
      double(rig.a().dma_calls - a0.dma_calls + rig.b().dma_calls - b0.dma_calls) / n;
}
BENCHMARK_CAPTURE(BM_Rdma, write, uint8_t(IBV_WR_RDMA_WRITE))
    ->Args({8, IBV_MTU_4096})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Rdma, read, uint8_t(IBV_WR_RDMA_READ))
    ->Args({65536, IBV_MTU_4096})
    ->Args({65536, IBV_MTU_1024})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  vf::test::EalEnvironment eal;
  eal.SetUp();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
