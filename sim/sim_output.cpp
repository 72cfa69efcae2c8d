#include "sim/sim_output.hpp"

#include <algorithm>

#include "core/svg_plot.hpp"

namespace vf::sim {
namespace {

constexpr double kIbHeaders = 8 + 12 + 4 + 2;                   // LRH, BTH, ICRC, VCRC
constexpr double kRoceHeaders = 14 + 20 + 8 + 12 + 4 + 4 + 20;  // Ethernet, IPv4, UDP, BTH, ICRC, FCS, preamble+IFG

uint64_t deepest(const dp::PortSnapshot& p) {
  uint64_t d = 0;
  for (const auto& c : p.classes) d = std::max(d, c.max_depth_pkts);
  return d;
}

}  // namespace

double host_link_bound_gbs(const config::Fabric& f, const config::Link& host_link, uint32_t mtu) {
  const double headers = f.link_layer == config::LinkLayer::Infiniband ? kIbHeaders : kRoceHeaders;
  return double(config::line_rate_bps(host_link)) / 8e9 * double(mtu) / (double(mtu) + headers);
}

void write_iterations_csv(std::FILE* out, const Plan& p, const std::vector<IterationRow>& rows, double bound) {
  std::fprintf(out, "workload,algo,ranks,bytes,iteration,time_us,algbw_GBps,busbw_GBps,bound_busbw_GBps\n");
  for (const auto& r : rows) {
    const CollectiveFigures f = figures(p, r.elapsed);
    std::fprintf(out, "%s,%s,%zu,%llu,%u,%.3f,%.4f,%.4f,%.4f\n", p.name.c_str(), p.algo.c_str(), p.ranks.size(),
                 (unsigned long long)p.bytes, r.iteration, f.time_us, f.algbw_gbs, f.busbw_gbs, bound);
  }
}

void write_ports_csv(std::FILE* out, const MetricsSnapshot& m) {
  std::fprintf(out, "fabric,port,tx_bytes,rx_bytes,xmit_wait_ns,tx_drops,rx_drops,max_queue_pkts\n");
  auto row = [&](const std::string& fabric, const std::string& port, const dp::PortSnapshot& p) {
    std::fprintf(out, "%s,%s,%llu,%llu,%llu,%llu,%llu,%llu\n", fabric.c_str(), port.c_str(),
                 (unsigned long long)p.tx_bytes, (unsigned long long)p.rx_bytes,
                 (unsigned long long)p.port_xmit_wait_ns, (unsigned long long)p.tx_drops,
                 (unsigned long long)p.rx_drops, (unsigned long long)deepest(p));
  };
  for (const auto& v : m.vhcas) row(v.fabric, v.name, v.port.port);
  for (const auto& s : m.switch_ports) row(s.fabric, s.name, s.port);
}

std::string finish_svg(const Plan& p, std::vector<Nanos> finish_ns, Nanos elapsed, double bound) {
  std::sort(finish_ns.begin(), finish_ns.end());
  Series ranks{"ranks finished", {}, {}};
  for (size_t i = 0; i < finish_ns.size(); ++i) {
    ranks.x.push_back(100.0 * double(i + 1) / double(finish_ns.size()));
    ranks.y.push_back(double(finish_ns[i]) / 1e3);
  }
  PlotSpec spec{p.name + " " + p.algo + ", " + std::to_string(p.ranks.size()) + " ranks, " +
                             std::to_string(p.bytes) + " B: when each rank finished (emulated)",
                         "ranks finished (%)", "time (µs)", false, false, true, {std::move(ranks)}};
  const CollectiveFigures f = figures(p, elapsed);
  if (bound > 0 && f.busbw_gbs > 0) {
    const double at_bound_us = f.time_us * f.busbw_gbs / bound;  // the same bus bytes at the bound
    spec.series.push_back({"at the host link's bound", {0, 100}, {at_bound_us, at_bound_us}});
  }
  return render_svg(spec);
}

}  // namespace vf::sim
