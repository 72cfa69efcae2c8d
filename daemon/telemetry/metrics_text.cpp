#include "daemon/telemetry/metrics_text.hpp"

#include "daemon/telemetry/counter_format.hpp"

namespace vf {
namespace {
constexpr std::string_view kPrefix = "vfabric";

// A port's label set and its snapshot, whether an HCA's port or a switch's.
struct PortRef {
  std::string labels;
  LinkLayer ll;
  const dp::PortSnapshot* port;
};

void append_ports(std::string& out, const std::vector<PortRef>& ports) {
  std::vector<PromRow> rows;
  for (const PortRef& p : ports) rows.push_back({p.labels, p.port});
  append_prometheus(out, kPrefix, dp::kPortCounters, rows);
  // One family per class counter, every class of every port in it.
  rows.clear();
  for (const PortRef& p : ports)
    for (unsigned c = 0; c < dp::kNumClasses; ++c)
      if (const char* name = dp::class_name(p.ll, c))
        rows.push_back({p.labels + "," + prom_labels({{"class", name}}), &p.port->classes[c]});
  append_prometheus(out, kPrefix, dp::kClassCounters, rows);
}

constexpr CounterDef kFabricDefs[] = {
    VF_COUNTER(FabricFlowSnapshot, credit_loop_deadlocks, "credit_loop_deadlocks", "credit_loop_deadlocks",
               kEvents, "circles of IB links found stuck for good: full buffers waiting on each other"),
};
static_assert(valid_counter_table<FabricFlowSnapshot>(kFabricDefs));

}  // namespace

const CounterTable kFabricCounters{kFabricDefs};

std::string prometheus_text(const MetricsSnapshot& m) {
  std::string out;
  const PromRow lcore[] = {{"", &m.lcore}};
  append_prometheus(out, kPrefix, kLcoreCounters, lcore);

  std::vector<PortRef> ports;
  for (const auto& v : m.vhcas)
    ports.push_back({prom_labels({{"fabric", v.fabric}, {"port", v.name}}), v.link_layer, &v.port.port});
  for (const auto& s : m.switch_ports)
    ports.push_back({prom_labels({{"fabric", s.fabric}, {"port", s.name}}), s.link_layer, &s.port});
  append_ports(out, ports);

  // Per vHCA: the HCA port's own counters, its receive errors by reason, the
  // engine's and the event sink's, each table one family per row.
  auto per_vhca = [&](CounterTable t, auto member) {
    std::vector<PromRow> rows;
    for (const auto& v : m.vhcas) rows.push_back({prom_labels({{"fabric", v.fabric}, {"hca", v.name}}), &(v.*member)});
    append_prometheus(out, kPrefix, t, rows);
  };
  per_vhca(dp::kHcaPortCounters, &MetricsSnapshot::Vhca::port);
  per_vhca(dp::kRxErrorCounters, &MetricsSnapshot::Vhca::port);
  per_vhca(engine::kEngineCounters, &MetricsSnapshot::Vhca::engine);
  per_vhca(kEventSinkCounters, &MetricsSnapshot::Vhca::events);
  per_vhca(kUmadCounters, &MetricsSnapshot::Vhca::mad);
  per_vhca(cm::kCmCounters, &MetricsSnapshot::Vhca::cm);

  std::vector<PromRow> links;
  for (const auto& l : m.links)
    links.push_back({prom_labels({{"fabric", l.fabric}, {"from", l.from}, {"to", l.to}}), &l.wire});
  append_prometheus(out, kPrefix, dp::kLinkDirectionCounters, links);

  std::vector<PromRow> vls;
  for (const auto& v : m.vl_credits)
    vls.push_back({prom_labels({{"fabric", v.fabric}, {"port", v.port}, {"vl", std::to_string(v.vl)}}), &v.credits});
  append_prometheus(out, kPrefix, dp::kVlCreditCounters, vls);
  std::vector<PromRow> prios;
  for (const auto& p : m.pfc)
    prios.push_back(
        {prom_labels({{"fabric", p.fabric}, {"port", p.port}, {"priority", std::to_string(p.priority)}}), &p.pfc});
  append_prometheus(out, kPrefix, dp::kPfcPriorityCounters, prios);
  std::vector<PromRow> ecn;
  for (const auto& e : m.ecn)
    ecn.push_back(
        {prom_labels({{"fabric", e.fabric}, {"port", e.port}, {"priority", std::to_string(e.priority)}}), &e.ecn});
  append_prometheus(out, kPrefix, dp::kEcnPriorityCounters, ecn);
  std::vector<PromRow> bridges, routers;
  for (const auto& b : m.bridges) bridges.push_back({prom_labels({{"fabric", b.fabric}, {"switch", b.name}}), &b.bridge});
  for (const auto& r : m.routers) routers.push_back({prom_labels({{"fabric", r.fabric}, {"switch", r.name}}), &r.router});
  append_prometheus(out, kPrefix, dp::kBridgeCounters, bridges);
  append_prometheus(out, kPrefix, dp::kRouterCounters, routers);
  std::vector<PromRow> ib_switches;
  for (const auto& s : m.ib_switches) ib_switches.push_back({prom_labels({{"fabric", s.fabric}, {"switch", s.name}}), &s.ib});
  append_prometheus(out, kPrefix, dp::kIbSwitchCounters, ib_switches);
  std::vector<PromRow> fabrics;
  for (const auto& f : m.fabrics) fabrics.push_back({prom_labels({{"fabric", f.name}}), &f.flow});
  append_prometheus(out, kPrefix, kFabricCounters, fabrics);
  return out;
}

}  // namespace vf
