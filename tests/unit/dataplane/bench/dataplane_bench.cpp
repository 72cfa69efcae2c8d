// CPU cost per frame of the whole emulated path, HcaPort -> Link -> Switch ->
// Link -> HcaPort, in virtual time: framing, both CRCs, queueing, arbitration,
// timers, forwarding and decapsulation. items/s = frames the lcore can move
// per second of CPU, i.e. the ceiling on emulated packet rate. BM_IbPath's
// second argument turns IB credit flow control on (1, as fabricd runs) or
// off (0): its cost is the flow-control packets and the credit checks;
// BM_RocePath's turns PFC on priority 3 with a 16 MiB shared switch buffer on
// (1, as fabricd runs a RoCE fabric: DSCP 26 classified to priority 3,
// per-priority buffer accounting at every port) or leaves every priority
// lossy (0). Each
// also sends one frame through the idle path first and reports its emulated
// latency beside the configured one (latency_ns, configured_ns).
#include <benchmark/benchmark.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dataplane/fabric/fabric.hpp"
#include "dataplane/fabric/port_capture.hpp"
#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/ib_framing.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "dataplane/wire/opcode.hpp"
#include "dataplane/wire/transport.hpp"

namespace {

using namespace vf::dp;

rte_mempool* pool() {
  static rte_mempool* p = [] {
    rte_mempool* mp = rte_pktmbuf_pool_create("vf_bench_pool", 8191, 256, 0,
                                              RTE_PKTMBUF_HEADROOM + 4608, SOCKET_ID_ANY);
    if (!mp) std::abort();
    return mp;
  }();
  return p;
}

struct Sink {
  const vf::Scheduler* clock = nullptr;
  uint64_t frames = 0;
  vf::Nanos last_at = 0;  // emulated time of the latest arrival
  static void rx(void* ctx, rte_mbuf* m, const vf::wire::RxMeta&) {
    auto& s = *static_cast<Sink*>(ctx);
    ++s.frames;
    s.last_at = s.clock->now();
    rte_pktmbuf_free(m);
  }
};

struct Lab {
  // `fc`: the link layer's flow control (IB credits, Ethernet PFC).
  Lab(LinkLayer ll, bool fc) : f(s, ll == LinkLayer::kInfiniBand ? "ib" : "roce", ll, pool()) {
    const bool credits = fc;
    PortConfig pc;
    pc.credits = credits;
    if (ll == LinkLayer::kEthernet && fc) {
      pc.eth.trust_dscp = true;
      pc.eth.pfc.enable = 1u << 3;
    }
    SwitchConfig sc;
    sc.latency_ns = 100;
    sc.port = pc;
    if (ll == LinkLayer::kEthernet && fc) sc.buffer_bytes = 16u << 20;
    f.add_switch("sw", sc);
    const Mac m0{2, 0, 0, 0, 0, 1}, m1{2, 0, 0, 0, 0, 2};
    const Gid g0{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1};
    const Gid g1{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2};
    HcaPortConfig c;
    c.link_layer = ll;
    c.lid = 1;
    c.gids = {g0};
    c.mac = m0;
    c.port = pc;
    c.port.queue_pkts = 256;
    c.default_tclass = fc ? 106 : 0;
    h0 = &f.add_hca_port("h0", c);
    c.lid = 2;
    c.gids = {g1};
    c.mac = m1;
    h1 = &f.add_hca_port("h1", c);
    const LinkParams lp{100'000'000'000ULL, 100, ll == LinkLayer::kInfiniBand ? 4096u : 9000u};
    f.connect(*Endpoint::parse("h0"), *Endpoint::parse("sw/1"), lp);
    f.connect(*Endpoint::parse("h1"), *Endpoint::parse("sw/2"), lp);
    if (ll == LinkLayer::kInfiniBand)
      f.set_lft("sw", 2, 2);  // an IB switch forwards by DLID,
    else
      f.add_fdb("sw", m1, 2);  // an Ethernet switch by MAC
    f.set_neighbour("h0", g1, m1);
    sink.clock = &s;
    h1->set_receiver(&Sink::rx, &sink);
    av.dlid = 2;
    av.is_global = ll == LinkLayer::kEthernet;
    std::memcpy(av.dgid.data(), g1.data(), 16);
    av.hop_limit = 64;
  }
  vf::Scheduler s;
  Fabric f;
  HcaPort* h0;
  HcaPort* h1;
  Sink sink;
  vf::dp::Route av{};
};

// The engine's part is excluded as far as possible: a packet is a BTH plus
// payload written once per frame (as the engine would), then transmitted.
void send_one(Lab& lab, uint32_t payload) {
  rte_mbuf* m = lab.h0->alloc();
  auto* p = m ? reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, uint16_t(vf::wire::kBthLen + payload))) : nullptr;
  if (!p) std::abort();  // the pool is sized for the batch
  std::memset(p, 0, vf::wire::kBthLen);
  vf::wire::bth_set_opcode(p, vf::wire::opcode(vf::wire::Transport::kRC, vf::wire::kSendOnly));
  vf::wire::bth_set_dqpn(p, 17);
  lab.h0->transmit(m, lab.av);
}

// One frame alone through the idle path, in emulated time, against what the
// configuration says it takes: on each of the two links its serialization
// (wire bytes at the link rate) plus the propagation delay, and the switch's
// latency once. Counters latency_ns and configured_ns.
void measure_latency(benchmark::State& st, Lab& lab, uint32_t payload) {
  // Past link training (with credits the first frame would wait for the
  // peer's Init flow-control packet) and clear of a resend round's FCPs,
  // which go ahead of data: 20 us rounds, so 5 us after one.
  lab.s.advance_to(25'000);
  const vf::Nanos t0 = lab.s.now();
  send_one(lab, payload);
  while (lab.sink.frames < 1 && lab.s.run_next()) {
  }
  const uint64_t frame = lab.h0->port().snapshot(0).tx_bytes;
  const LinkParams& lp = lab.f.links().front().link->params();
  const double serialize_ns = double(wire_bytes(lab.f.link_layer(), frame)) * 8 * 1e9 / double(lp.rate_bps);
  st.counters["latency_ns"] = double(lab.sink.last_at - t0);
  st.counters["configured_ns"] = 2 * (serialize_ns + double(lp.delay_ns)) + 100;
}

void run_path(benchmark::State& st, LinkLayer ll) {
  Lab lab(ll, st.range(1) != 0);
  const uint32_t payload = uint32_t(st.range(0));
  measure_latency(st, lab, payload);
  uint64_t expected = lab.sink.frames;
  const uint32_t batch = 32;
  for (auto _ : st) {
    for (uint32_t i = 0; i < batch; ++i) send_one(lab, payload);
    // Until the batch is through (not until idle: a credit link's resend
    // rounds would run on for 100 ms of emulated time).
    expected += batch;
    while (lab.sink.frames < expected && lab.s.run_next()) {
    }
  }
  if (lab.sink.frames != expected) st.SkipWithError("frames lost");
  st.SetItemsProcessed(int64_t(lab.sink.frames - 1));
  st.SetBytesProcessed(int64_t(lab.sink.frames - 1) * payload);
}

void BM_IbPath(benchmark::State& st) { run_path(st, LinkLayer::kInfiniBand); }
void BM_RocePath(benchmark::State& st) { run_path(st, LinkLayer::kEthernet); }
BENCHMARK(BM_IbPath)->ArgsProduct({{64, 1024, 4096}, {0, 1}})->ArgNames({"", "credits"});
BENCHMARK(BM_RocePath)->ArgsProduct({{64, 1024, 4096}, {0, 1}})->ArgNames({"", "pfc"});

// What a capture costs the dataplane: the IB path with the link at the far
// switch port (sw/2 -> h1) tapped (1) or not (0). The ring is drained between
// batches outside the timing -- the control thread's work, not the lcore's --
// so every frame is copied, none dropped. A link without a tap runs the
// untapped code, so a capture elsewhere costs an uncaptured port nothing.
void BM_IbPathCapture(benchmark::State& st) {
  Lab lab(LinkLayer::kInfiniBand, true);
  PortCapture cap(8u << 20, PortCapture::kMaxSnaplen);
  if (st.range(1)) lab.f.set_capture(*Endpoint::parse("sw/2"), &cap);
  const uint32_t payload = uint32_t(st.range(0));
  lab.s.advance_to(25'000);
  uint64_t expected = lab.sink.frames, copied = 0;
  for (auto _ : st) {
    for (uint32_t i = 0; i < 32; ++i) send_one(lab, payload);
    expected += 32;
    while (lab.sink.frames < expected && lab.s.run_next()) {
    }
    st.PauseTiming();
    copied += cap.drain([](const CaptureRecord&, const uint8_t*) {}, SIZE_MAX);
    st.ResumeTiming();
  }
  if (lab.sink.frames != expected) st.SkipWithError("frames lost");
  if (st.range(1) && cap.dropped.get()) st.SkipWithError("copies dropped");
  st.SetItemsProcessed(int64_t(lab.sink.frames));
  st.counters["copied"] = double(copied);
}
BENCHMARK(BM_IbPathCapture)->ArgsProduct({{64, 4096}, {0, 1}})->ArgNames({"", "captured"});

// What a scrape (GET /metrics, fabricctl metrics) costs the lcore: the copy
// of every port's counters it makes (Fabric::snapshot); formatting the text
// happens on the control thread. Per port, with traffic having run so the
// per-class counters are live.
void BM_ScrapeCopy(benchmark::State& st) {
  Lab lab(LinkLayer::kInfiniBand, true);
  lab.s.advance_to(25'000);
  for (int i = 0; i < 32; ++i) send_one(lab, 1024);
  while (lab.sink.frames < 32 && lab.s.run_next()) {
  }
  size_t ports = 0;
  for (auto _ : st) {
    const auto snap = lab.f.snapshot(lab.s.now());
    ports = snap.size();
    benchmark::DoNotOptimize(snap.data());
  }
  st.SetItemsProcessed(int64_t(st.iterations() * ports));  // items/s = ports copied per second
  st.counters["ports"] = double(ports);
}
BENCHMARK(BM_ScrapeCopy);

// The element model alone: pre-framed frames through Port -> Link -> Switch ->
// Link -> Port, no CRCs, to separate timing/queueing cost from framing cost.
void BM_SwitchedFrameNoFraming(benchmark::State& st) {
  vf::Scheduler s;
  IbSwitch sw(s, "sw", SwitchConfig{});
  Port a(s, "a", LinkLayer::kInfiniBand), b(s, "b", LinkLayer::kInfiniBand);
  const LinkParams lp{100'000'000'000ULL, 100, 4096};
  Link la(s, LinkLayer::kInfiniBand, lp), lb(s, LinkLayer::kInfiniBand, lp);
  connect_ports(a, sw.port(1), la);
  connect_ports(b, sw.port(2), lb);
  sw.set_lft(2, 2);
  uint64_t got = 0;
  b.set_owner(&got, [](void* c, Port& p, rte_mbuf* m, unsigned cls) {
    ++*static_cast<uint64_t*>(c);
    p.release(cls, rte_pktmbuf_pkt_len(m));
    rte_pktmbuf_free(m);
  });
  for (auto _ : st) {
    for (int i = 0; i < 32; ++i) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool());
      auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, 64));
      p[0] = 0;
      p[1] = 2;
      p[2] = 0;
      p[3] = 2;  // DLID 2
      a.enqueue(0, m);
    }
    s.run_until_idle();
  }
  st.SetItemsProcessed(int64_t(got));
}
BENCHMARK(BM_SwitchedFrameNoFraming);

// An Ethernet switch's forwarding decision, bridged (FDB lookup) against
// routed (IPv4 checks, TTL and checksum, longest prefix, ECMP hash over two
// members): 64-byte UDP frames, one flow per frame, Port -> Link -> switch ->
// Link -> Port as above.
void BM_EthernetFrame(benchmark::State& st) {
  const bool routed = st.range(0) != 0;
  vf::Scheduler s;
  SwitchConfig sc;
  sc.nports = 4;
  EthSwitch sw(s, "sw", sc);
  Port a(s, "a", LinkLayer::kEthernet), b(s, "b", LinkLayer::kEthernet), c(s, "c", LinkLayer::kEthernet);
  const LinkParams lp{100'000'000'000ULL, 100, 1500};
  Link la(s, LinkLayer::kEthernet, lp), lb(s, LinkLayer::kEthernet, lp), lc(s, LinkLayer::kEthernet, lp);
  connect_ports(a, sw.port(1), la);
  connect_ports(b, sw.port(3), lb);
  connect_ports(c, sw.port(4), lc);
  const Mac router{0x02, 0x52, 0, 0, 0, 1}, to_b{0x02, 0, 0, 0, 0, 3}, to_c{0x02, 0, 0, 0, 0, 4};
  if (routed) {
    RouterConfig rc;
    rc.mac = router;
    rc.gateway = 0xC6120001;
    rc.prefix_len = 26;
    rc.routed_ports = {3, 4};
    sw.enable_routing(rc, pool()).set_routes({Ipv4Route{0xC6336400, 24, false, {{3, to_b}, {4, to_c}}}});
  } else {
    sw.add_fdb(to_b, 3);
  }
  uint64_t got = 0;
  auto sink = [](void* n, Port& p, rte_mbuf* m, unsigned cls) {
    ++*static_cast<uint64_t*>(n);
    p.release(cls, rte_pktmbuf_pkt_len(m));
    rte_pktmbuf_free(m);
  };
  b.set_owner(&got, sink);
  c.set_owner(&got, sink);
  uint16_t sport = 0xC000;
  for (auto _ : st) {
    for (int i = 0; i < 32; ++i) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool());
      auto* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, 64));
      std::memset(f, 0, 64);
      vf::wire::eth_set_dst(f, (routed ? router : to_b).data());
      vf::wire::eth_set_type(f, vf::wire::kEtherTypeIpv4);
      uint8_t* ip = f + 14;
      ip[0] = 0x45;
      vf::wire::ipv4_set_total_len(ip, 50);
      vf::wire::ipv4_set_ttl(ip, 64);
      vf::wire::ipv4_set_proto(ip, vf::wire::kIpProtoUdp);
      vf::wire::ipv4_set_src(ip, 0xC612000A);
      vf::wire::ipv4_set_dst(ip, 0xC6336407);
      vf::wire::ipv4_fill_checksum(ip);
      vf::wire::put16(ip + 20, sport++ | 0xC000);
      vf::wire::put16(ip + 22, 4791);
      a.enqueue(0, m);
    }
    s.run_until_idle();
  }
  st.SetItemsProcessed(int64_t(got));
}
BENCHMARK(BM_EthernetFrame)->Arg(0)->Arg(1)->ArgName("routed");

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args = {"dataplane_bench", "--no-huge",      "--no-pci",
                                   "--no-shconf",     "--no-telemetry", "-m",
                                   "256",             "--log-level=lib.eal:error",
                                   "--file-prefix=vf_bench"};
  std::vector<char*> eal;
  for (auto& a : args) eal.push_back(a.data());
  if (rte_eal_init(int(eal.size()), eal.data()) < 0) return 1;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  rte_eal_cleanup();
  return 0;
}
