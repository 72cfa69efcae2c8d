// Scenario 1: what the headers cost. One RC stream of back-to-back messages
// per size, operation and fabric, in virtual time, beside the goodput the
// wire formats allow (analytic.hpp).
#include <algorithm>
#include <cmath>

#include "compare/lab_setup.hpp"
#include "compare/lab_stream.hpp"
#include "compare/live_fabric.hpp"
#include "compare/scenarios.hpp"

namespace vf::compare {
namespace {

constexpr LinkSpec kIbLink{100'000'000'000ULL, 100, 4096};
constexpr LinkSpec kEthLink{100'000'000'000ULL, 100, 1500};
constexpr LinkSpec kJumboLink{100'000'000'000ULL, 100, 9000};
constexpr Nanos kSwitchLatency = 100;

struct Variant {
  const char* name;
  Flavour flavour;
  LinkSpec link;
  Encap encap;
};
const Variant kVariants[] = {
    {"InfiniBand", Flavour::kIb, kIbLink, Encap::kInfiniBand},
    {"RoCEv2, 1500 MTU", Flavour::kRoceEcn, kEthLink, Encap::kRoceV4},
    {"RoCEv2, 9000 MTU", Flavour::kRoceEcn, kJumboLink, Encap::kRoceV4},
};

struct Point {
  double measured_bps, analytic_bps;
  unsigned messages;
};

Point measure(const Variant& v, Op op, uint32_t bytes, bool quick) {
  sim::FabricLab lab(single_switch(v.flavour, 2, v.link, kSwitchLatency));
  const uint32_t mtu = path_mtu(v.flavour, v.link);
  StreamSpec s;
  s.op = op;
  s.bytes = bytes;
  // Enough bytes that the first round trip and the last ACK are a small part
  // of the run, enough WRs in flight to cover the bandwidth-delay product.
  const uint64_t budget = quick ? (8u << 20) : (64u << 20);
  s.messages = unsigned(std::clamp<uint64_t>(budget / bytes, 32, quick ? 8192 : 32768));
  s.window = 512;
  s.conn.mtu = ibv_path_mtu(mtu);
  Stream st(lab, s);
  if (!lab.run_until([&] { return st.poll(); }) || st.failed || st.ok != s.messages)
    throw std::runtime_error(std::string(v.name) + ": the encapsulation run did not complete every message");
  return {goodput_bps(st), analytic_goodput_bps(v.encap, op, bytes, mtu, v.link.rate_bps), s.messages};
}

std::vector<uint32_t> sizes(bool quick) {
  std::vector<uint32_t> s;
  for (uint32_t b = 64; b <= (1u << 20); b *= quick ? 4 : 2) s.push_back(b);
  return s;
}

}  // namespace

Section run_encapsulation(const Options& o, Findings& f) {
  Section sec;
  sec.id = "encapsulation";
  sec.title = "1. Encapsulation cost: goodput against message size";
  sec.conditions =
      "emulated (virtual time); one RC stream between two vHCAs through one switch, 512 WRs in flight; links "
      "100 Gb/s (IB 4X EDR data rate; Ethernet 100G), 100 ns propagation, 100 ns switch latency on both "
      "fabrics; IB MTU 4096; RoCEv2 over IPv4 with a 1500-byte Ethernet MTU (path MTU 1024, as rxe and mlx5 "
      "choose it) and with 9000 (path MTU 4096); RoCE as fabricd sets it up (PFC priority 3, ECN, DCQCN). "
      "The vHCAs' processing takes no emulated time, so the link is the bottleneck by construction. "
      "Analytic: payload / wire bytes per message (IB: LRH 8 + BTH 12 + ICRC 4 + VCRC 2; RoCEv2: Ethernet 14 + "
      "IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + preamble 8 + IFG 12, 64-byte minimum frame; RETH 16 on a "
      "WRITE's first packet).";
  Table t{"goodput", "Goodput per message size (emulated; analytic beside it):",
          {"fabric", "operation", "bytes", "path MTU", "messages", "goodput Gb/s", "analytic Gb/s",
           "measured/analytic", "IPv6 analytic Gb/s"},
          {}};
  double worst = 0;
  for (Op op : {Op::kWrite, Op::kSend}) {
    PlotSpec plot;
    plot.title = std::string("RC ") + op_name(op) + " goodput at 100 Gb/s (emulated)";
    plot.x_label = "message size (bytes)";
    plot.y_label = "goodput (Gb/s)";
    plot.log_x = true;
    for (const Variant& v : kVariants) {
      Series meas{std::string(v.name) + " measured", {}, {}};
      Series ana{std::string(v.name) + " analytic", {}, {}};
      const uint32_t mtu = path_mtu(v.flavour, v.link);
      for (uint32_t b : sizes(o.quick)) {
        const Point p = measure(v, op, b, o.quick);
        const double ratio = p.measured_bps / p.analytic_bps;
        worst = std::max(worst, std::fabs(ratio - 1));
        const double v6 = v.encap == Encap::kInfiniBand
                              ? kNaN
                              : analytic_goodput_bps(Encap::kRoceV6, op, b, roce_path_mtu(v.link.mtu, Encap::kRoceV6),
                                                     v.link.rate_bps);
        t.rows.push_back({v.name, op_name(op), std::to_string(b), std::to_string(mtu), std::to_string(p.messages),
                          gbps(p.measured_bps), gbps(p.analytic_bps), num(ratio, 4), gbps(v6)});
        meas.x.push_back(b);
        meas.y.push_back(p.measured_bps / 1e9);
        ana.x.push_back(b);
        ana.y.push_back(p.analytic_bps / 1e9);
        const double share = p.measured_bps / double(v.link.rate_bps);
        if (op == Op::kWrite && b == 64) {
          if (v.encap == Encap::kInfiniBand) f.ib_share_small = share;
          else if (v.link.mtu == 1500) f.roce_share_small = share;
        }
        if (op == Op::kWrite && b == (1u << 20)) {
          if (v.encap == Encap::kInfiniBand) f.ib_share_large = share;
          else if (v.link.mtu == 1500) f.roce_share_large = share;
          else f.roce_jumbo_share_large = share;
        }
      }
      plot.series.push_back(std::move(meas));
      plot.series.push_back(std::move(ana));
    }
    sec.plots.push_back({std::string("goodput-") + (op == Op::kWrite ? "write" : "send"), std::move(plot)});
  }
  sec.tables.push_back(std::move(t));
  const uint64_t ib_hdr = packet_wire_bytes(Encap::kInfiniBand, 64, true) - 64;
  const uint64_t roce_hdr = packet_wire_bytes(Encap::kRoceV4, 64, true) - 64;
  sec.findings.push_back("64-byte WRITEs: InfiniBand carries " + percent(f.ib_share_small) +
                         " of the line rate as payload, RoCEv2 " + percent(f.roce_share_small) + " (each packet costs " +
                         std::to_string(ib_hdr) + " bytes besides its payload on IB and " + std::to_string(roce_hdr) +
                         " on RoCEv2/IPv4, RETH included).");
  // What the Ethernet MTU is worth against what the encapsulation costs, at 1 MiB.
  const double mtu_gain = f.roce_jumbo_share_large - f.roce_share_large;
  const double encap_gap = f.ib_share_large - f.roce_jumbo_share_large;
  sec.findings.push_back("1 MiB WRITEs: InfiniBand " + percent(f.ib_share_large) + ", RoCEv2 " + percent(f.roce_share_large) +
                         " with a 1500-byte Ethernet MTU (1024-byte packets) and " + percent(f.roce_jumbo_share_large) +
                         " with 9000-byte frames: " +
                         (mtu_gain > encap_gap ? "at large sizes the MTU is worth more (" + percent(mtu_gain) +
                                                     ") than the encapsulation costs at equal packet size (" +
                                                     percent(encap_gap) + ")."
                                               : "the encapsulation costs " + percent(encap_gap) +
                                                     " at equal packet size, the smaller MTU " + percent(mtu_gain) + "."));
  sec.findings.push_back("Measured and analytic goodput agree within " + num(100 * worst, 2) +
                         " % at every size (the emulated links carry the bytes the wire formats say; the first round "
                         "trip is the rest).");
  if (o.live) add_live_bandwidth(o, sec);
  return sec;
}

}  // namespace vf::compare
