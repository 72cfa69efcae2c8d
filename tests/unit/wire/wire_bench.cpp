// Throughput of the CRC engines and the cost of framing a packet and taking
// it apart again. zlib and DPDK's rte_net_crc run alongside for comparison.
#include <benchmark/benchmark.h>
#include <rte_net_crc.h>
#include <zlib.h>

#include <cstring>
#include <vector>

#include "dataplane/wire/crc.hpp"
#include "dataplane/wire/framing.hpp"
#include "dataplane/wire/icrc.hpp"
#include "dataplane/wire/transport.hpp"
#include "eal_init.hpp"

namespace {

using namespace vf::wire;

rte_mempool* g_pool;

std::vector<uint8_t> data(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 31 + 7);
  return v;
}

void sizes(benchmark::internal::Benchmark* b) { b->Arg(64)->Arg(1024)->Arg(4096); }

void BM_Crc32(benchmark::State& s) {
  crc_force_portable(false);
  const auto d = data(size_t(s.range(0)));
  for (auto _ : s) benchmark::DoNotOptimize(crc32_ieee(0, d.data(), d.size()));
  s.SetBytesProcessed(int64_t(s.iterations()) * s.range(0));
}
BENCHMARK(BM_Crc32)->Apply(sizes);

void BM_Crc32Portable(benchmark::State& s) {
  crc_force_portable(true);
  const auto d = data(size_t(s.range(0)));
  for (auto _ : s) benchmark::DoNotOptimize(crc32_ieee(0, d.data(), d.size()));
  s.SetBytesProcessed(int64_t(s.iterations()) * s.range(0));
  crc_force_portable(false);
}
BENCHMARK(BM_Crc32Portable)->Apply(sizes);

void BM_Crc32Zlib(benchmark::State& s) {
  const auto d = data(size_t(s.range(0)));
  for (auto _ : s) benchmark::DoNotOptimize(crc32(0, d.data(), uInt(d.size())));
  s.SetBytesProcessed(int64_t(s.iterations()) * s.range(0));
}
BENCHMARK(BM_Crc32Zlib)->Apply(sizes);

void BM_Crc32RteNetCrc(benchmark::State& s) {
  rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
  const auto d = data(size_t(s.range(0)));
  for (auto _ : s) benchmark::DoNotOptimize(rte_net_crc_calc(d.data(), uint32_t(d.size()), RTE_NET_CRC32_ETH));
  s.SetBytesProcessed(int64_t(s.iterations()) * s.range(0));
}
BENCHMARK(BM_Crc32RteNetCrc)->Apply(sizes);

// ICRC of a RoCEv2 IPv4 packet whose IP..pad is `range` bytes long.
void BM_IcrcRoce(benchmark::State& s) {
  auto d = data(size_t(s.range(0)));
  d[0] = 0x45;
  for (auto _ : s) benchmark::DoNotOptimize(icrc_roce(d.data(), d.size()));
  s.SetBytesProcessed(int64_t(s.iterations()) * s.range(0));
}
BENCHMARK(BM_IcrcRoce)->Apply(sizes);

void BM_IcrcIb(benchmark::State& s) {
  auto d = data(size_t(s.range(0)));
  d[1] = 0x02;  // LNH local
  for (auto _ : s) benchmark::DoNotOptimize(icrc_ib(d.data(), d.size()));
  s.SetBytesProcessed(int64_t(s.iterations()) * s.range(0));
}
BENCHMARK(BM_IcrcIb)->Apply(sizes);

void BM_Vcrc(benchmark::State& s) {
  const auto d = data(size_t(s.range(0)));
  for (auto _ : s) benchmark::DoNotOptimize(vcrc(d.data(), d.size()));
  s.SetBytesProcessed(int64_t(s.iterations()) * s.range(0));
}
BENCHMARK(BM_Vcrc)->Apply(sizes);

rte_mbuf* transport_mbuf(size_t payload) {
  rte_mbuf* m = rte_pktmbuf_alloc(g_pool);
  uint8_t* t = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, uint16_t(kBthLen + payload)));
  std::memset(t, 0x5A, kBthLen + payload);
  bth_set_opcode(t, 0x04);
  bth_set_padcnt(t, 0);
  return m;
}

// Encapsulate + decapsulate one packet with `range` bytes of payload.
void BM_RoceEncapDecap(benchmark::State& s) {
  RoceRoute r;
  r.sgid[10] = r.sgid[11] = r.dgid[10] = r.dgid[11] = 0xFF;  // IPv4-mapped
  r.sgid[15] = 1;
  r.dgid[15] = 2;
  rte_mbuf* m = transport_mbuf(size_t(s.range(0)));
  vf::wire::RxMeta meta;
  for (auto _ : s) {
    if (!roce_encapsulate(m, r) || roce_decapsulate(m, &meta) != RxError::kOk) s.SkipWithError("framing failed");
  }
  s.SetBytesProcessed(int64_t(s.iterations()) * s.range(0));
  rte_pktmbuf_free(m);
}
BENCHMARK(BM_RoceEncapDecap)->Apply(sizes);

void BM_RoceV6EncapDecap(benchmark::State& s) {
  RoceRoute r;
  r.sgid[0] = r.dgid[0] = 0x20;
  r.dgid[15] = 2;
  rte_mbuf* m = transport_mbuf(size_t(s.range(0)));
  vf::wire::RxMeta meta;
  for (auto _ : s) {
    if (!roce_encapsulate(m, r) || roce_decapsulate(m, &meta) != RxError::kOk) s.SkipWithError("framing failed");
  }
  s.SetBytesProcessed(int64_t(s.iterations()) * s.range(0));
  rte_pktmbuf_free(m);
}
BENCHMARK(BM_RoceV6EncapDecap)->Apply(sizes);

void BM_IbEncapDecap(benchmark::State& s) {
  IbRoute r;
  r.slid = 1;
  r.dlid = 2;
  rte_mbuf* m = transport_mbuf(size_t(s.range(0)));
  vf::wire::RxMeta meta;
  for (auto _ : s) {
    if (!ib_encapsulate(m, r) || ib_decapsulate(m, &meta) != RxError::kOk) s.SkipWithError("framing failed");
  }
  s.SetBytesProcessed(int64_t(s.iterations()) * s.range(0));
  rte_pktmbuf_free(m);
}
BENCHMARK(BM_IbEncapDecap)->Apply(sizes);

}  // namespace

int main(int argc, char** argv) {
  g_pool = vf::test::init_eal_and_pool("vf_wire_bench");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
