// Scenario 2: half round trip against message size. In virtual time the
// figure is what the fabric adds (serialization, propagation, switch hops);
// beside a bulk flow into the same vHCA it also shows how deep each fabric
// lets a queue grow in front of a small message. The wall-clock figures of
// unmodified ib_send_lat against a real fabricd (live_fabric.cpp) add the
// host software.
#include <algorithm>

#include "compare/lab_setup.hpp"
#include "compare/lab_stream.hpp"
#include "compare/live_fabric.hpp"
#include "compare/scenarios.hpp"

namespace vf::compare {
namespace {

constexpr LinkSpec kIbLink{100'000'000'000ULL, 100, 4096};
constexpr LinkSpec kEthLink{100'000'000'000ULL, 100, 1500};
constexpr Nanos kSwitchLatency = 100;

using sim::App;

// A SEND ping-pong between hosts 0 and 1: host 1 answers each message with
// one of the same size; each sample is half the round trip.
class PingPong {
 public:
  PingPong(sim::FabricLab& lab, uint32_t bytes, ibv_mtu mtu) : lab_(lab), bytes_(bytes) {
    for (unsigned h = 0; h < 2; ++h) {
      End& e = end_[h];
      App& app = *lab.host(h).app;
      e.buf.assign(std::max<uint32_t>(bytes, 1), uint8_t(h));
      const uint32_t pd = app.alloc_pd();
      e.mr = app.mr(pd, e.buf.data(), e.buf.size());
      e.scq = app.cq(255);
      e.rcq = app.cq(255);
      e.qp = app.qp(pd, *e.scq, *e.rcq);
    }
    sim::ConnParams p;
    p.mtu = mtu;
    lab.connect(0, *end_[0].qp, 1, *end_[1].qp, p);
    for (unsigned h = 0; h < 2; ++h)
      for (unsigned k = 0; k < 16; ++k) post_recv(h);
  }
  // Runs `iters` round trips; returns each half round trip, ns.
  std::vector<double> run(unsigned iters, const std::function<void()>& also_poll) {
    std::vector<double> samples;
    Nanos sent = lab_.sched.now();
    send(0);
    lab_.run_until([&] {
      if (also_poll) also_poll();
      reap_sends();
      vhca_cqe c;
      while (lab_.host(1).app->poll_cq(*end_[1].rcq, c)) {
        post_recv(1);
        send(1);
      }
      while (lab_.host(0).app->poll_cq(*end_[0].rcq, c)) {
        post_recv(0);
        samples.push_back(double(lab_.sched.now() - sent) / 2);
        if (samples.size() < iters) {
          sent = lab_.sched.now();
          send(0);
        }
      }
      return samples.size() >= iters;
    });
    return samples;
  }

 private:
  struct End {
    std::vector<uint8_t> buf;
    vhca_reg_mr_rsp mr{};
    std::unique_ptr<sim::AppCq> scq, rcq;
    std::unique_ptr<sim::AppQp> qp;
  };
  void post_recv(unsigned h) {
    End& e = end_[h];
    lab_.host(h).app->post_recv(*e.qp, sim::recv_wqe(0, {sim::sge(e.buf.data(), bytes_, e.mr.lkey)}));
  }
  void send(unsigned h) {
    End& e = end_[h];
    lab_.host(h).app->post_send(
        *e.qp, sim::send_wqe(0, {sim::sge(e.buf.data(), bytes_, e.mr.lkey)}, IBV_SEND_SIGNALED, IBV_WR_SEND));
  }
  void reap_sends() {
    vhca_cqe c;
    for (unsigned h = 0; h < 2; ++h)
      while (lab_.host(h).app->poll_cq(*end_[h].scq, c)) {
      }
  }
  sim::FabricLab& lab_;
  uint32_t bytes_;
  End end_[2];
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t rank = size_t(std::ceil(p / 100 * double(v.size())));
  return v[std::min(v.size() - 1, rank ? rank - 1 : 0)];
}

struct Latency {
  double p50, p99, p999;
  uint64_t pinger_cnps;  // CNPs the pinging vHCA's QP was slowed by (DCQCN)
};

// `loaded`: host 2 WRITEs 64 KiB messages into host 1 all the while.
Latency measure(Flavour f, const LinkSpec& l, uint32_t bytes, unsigned iters, bool loaded) {
  sim::FabricLab lab(single_switch(f, 3, l, kSwitchLatency));
  const ibv_mtu mtu = ibv_path_mtu(path_mtu(f, l));
  std::unique_ptr<Stream> bulk;
  if (loaded) {
    StreamSpec s;
    s.from = 2;
    s.to = 1;
    s.bytes = 64 * 1024;
    s.messages = 1u << 30;  // for as long as the pings run
    s.window = 64;
    s.conn.mtu = mtu;
    bulk = std::make_unique<Stream>(lab, s);
    lab.run_until([] { return false; }, lab.sched.now() + 200'000);  // let its queue build
  }
  PingPong pp(lab, bytes, mtu);
  const std::vector<double> s = pp.run(iters, [&] {
    if (bulk) bulk->poll();
  });
  if (s.size() < iters) throw std::runtime_error(std::string(flavour_name(f)) + ": the ping-pong stalled");
  return {percentile(s, 50), percentile(s, 99), percentile(s, 99.9), lab.host(0).hca->counters().rp_cnp_handled};
}

std::vector<uint32_t> sizes(bool quick) {
  if (quick) return {8, 64, 512, 4096, 32768};
  return {8, 32, 128, 512, 2048, 4096, 8192, 32768, 65536};
}

}  // namespace

Section run_latency(const Options& o, Findings& f) {
  Section sec;
  sec.id = "latency";
  sec.title = "2. Latency: what the fabric adds and what the host adds";
  const unsigned iters = o.quick ? 200 : 2000;
  sec.conditions = "emulated (virtual time): RC SEND ping-pong between two vHCAs through one switch, " +
                   std::to_string(iters) +
                   " round trips per point, half round trip; 100 Gb/s links, 100 ns propagation, 100 ns switch "
                   "latency on both fabrics (fabricd's default Ethernet switch latency is 300 ns; it is set equal "
                   "here so only the protocols differ); IB MTU 4096, RoCEv2 1500-byte MTU, PFC + ECN + DCQCN. "
                   "*Loaded*: a third vHCA WRITEs 64 KiB messages (64 in flight) into the ping's target "
                   "throughout, so the ping shares the switch's egress port with a standing bulk flow.";
  Table t{"half-rtt", "Half round trip, ns (emulated):",
          {"fabric", "bytes", "idle p50", "loaded p50", "loaded p99", "loaded p99.9", "CNPs to the pinger (loaded)",
           "loaded p99, PFC without ECN/DCQCN"},
          {}};
  PlotSpec idle{"Half round trip, idle fabric (emulated)", "message size (bytes)", "ns", true, false, true, {}};
  PlotSpec loaded{"Half round trip p99 beside a bulk flow (emulated)", "message size (bytes)", "ns", true, true, false, {}};
  uint32_t largest = 0;
  for (Flavour fl : {Flavour::kIb, Flavour::kRoceEcn}) {
    const LinkSpec& l = is_ib(fl) ? kIbLink : kEthLink;
    const char* name = is_ib(fl) ? "InfiniBand" : "RoCEv2";
    Series si{name, {}, {}}, sl{name, {}, {}};
    for (uint32_t b : sizes(o.quick)) {
      const Latency a = measure(fl, l, b, iters, false);
      const Latency z = measure(fl, l, b, iters, true);
      const double pfc_only = is_ib(fl) ? kNaN : measure(Flavour::kRocePfc, l, b, iters, true).p99;
      t.rows.push_back({name, std::to_string(b), num(a.p50, 1), num(z.p50, 1), num(z.p99, 1), num(z.p999, 1),
                        std::to_string(z.pinger_cnps), is_ib(fl) ? "-" : num(pfc_only, 1)});
      si.x.push_back(b);
      si.y.push_back(a.p50);
      sl.x.push_back(b);
      sl.y.push_back(z.p99);
      if (b == 8) {
        (is_ib(fl) ? f.ib_fabric_ns : f.roce_fabric_ns) = a.p50;
        (is_ib(fl) ? f.ib_loaded_p99_ns : f.roce_loaded_p99_ns) = z.p99;
        if (!is_ib(fl)) {
          f.roce_loaded_p99_pfc_ns = pfc_only;
          f.roce_pinger_cnps = z.pinger_cnps;
        }
      }
      // The last (largest) size stays.
      largest = b;
      (is_ib(fl) ? f.ib_large_idle_ns : f.roce_large_idle_ns) = a.p50;
      if (!is_ib(fl)) {
        f.roce_large_p99_ns = z.p99;
        f.roce_large_p99_pfc_ns = pfc_only;
      }
    }
    idle.series.push_back(std::move(si));
    loaded.series.push_back(std::move(sl));
  }
  sec.tables.push_back(std::move(t));
  sec.plots.push_back({"idle", std::move(idle)});
  sec.plots.push_back({"loaded", std::move(loaded)});
  sec.findings.push_back("8-byte SEND, idle: the fabric and the vHCAs' emulated ports add " +
                         num(f.ib_fabric_ns, 1) + " ns on InfiniBand and " + num(f.roce_fabric_ns, 1) +
                         " ns on RoCEv2 (the RoCE headers take longer to serialize). At " + std::to_string(largest) +
                         " bytes: " + num(f.ib_large_idle_ns, 1) + " against " + num(f.roce_large_idle_ns, 1) +
                         " ns" +
                         (f.roce_large_idle_ns < f.ib_large_idle_ns
                              ? ": RoCEv2's smaller packets pipeline through the switch, which forwards a packet "
                                "once it has received all of it."
                              : "."));
  sec.findings.push_back("Beside a bulk flow into the same vHCA, the 8-byte p99 becomes " + num(f.ib_loaded_p99_ns, 1) +
                         " ns on InfiniBand, " + num(f.roce_loaded_p99_pfc_ns, 1) + " ns on RoCEv2 with PFC alone and " +
                         num(f.roce_loaded_p99_ns, 1) + " ns with ECN/DCQCN: the ping queues behind the bulk flow.");
  if (f.roce_pinger_cnps > 0)
    sec.findings.push_back("With ECN/DCQCN the pinging QP itself received " + std::to_string(f.roce_pinger_cnps) +
                           " CNPs (8 bytes): its packets were CE-marked in that queue like the bulk flow's. At " +
                           std::to_string(largest) + " bytes its p99 is " + num(f.roce_large_p99_ns, 1) +
                           " ns against " + num(f.roce_large_p99_pfc_ns, 1) +
                           " ns with PFC alone (the CNP column). InfiniBand runs no end-to-end congestion control "
                           "in this configuration.");
  if (o.live) add_live_latency(o, sec, f);
  return sec;
}

}  // namespace vf::compare
