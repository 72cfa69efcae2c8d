// A fabric's adaptive_routing: key.
//   adaptive_routing: per-packet
//   adaptive_routing: {mode: flowlet, flowlet_gap: 20us}
// IB: the SM's Up/Down equal-cost ports are the choices, so routing must be
// updn (min-hop's alternatives may close a credit loop). Ethernet: a route's
// ECMP next hops are, so some switch must route.
#include <fmt/format.h>

#include "daemon/config/config_detail.hpp"
#include "daemon/config/units.hpp"

namespace vf::config {

const char* to_string(AdaptiveRouting::Mode m) {
  switch (m) {
    case AdaptiveRouting::Mode::Off: return "off";
    case AdaptiveRouting::Mode::PerPacket: return "per-packet";
    case AdaptiveRouting::Mode::Flowlet: return "flowlet";
  }
  return "?";
}

AdaptiveProblem adaptive_routing_problem(const Fabric& f, AdaptiveRouting::Mode mode) {
  if (mode == AdaptiveRouting::Mode::Off) return {};
  const std::string what = fmt::format("fabric '{}'", f.name);
  if (f.link_layer == LinkLayer::Infiniband && f.sm.routing != Routing::UpDown)
    return {fmt::format("adaptive routing on {} needs Up/Down routing", what),
            "add sm: {routing: updn} (min-hop's equal-cost ports may close a credit loop), or remove adaptive_routing"};
  if (f.link_layer == LinkLayer::Ethernet) {
    bool routed = false;
    for (const Switch& s : f.switches) routed |= s.router.has_value();
    if (!routed)
      return {fmt::format("adaptive routing on {} chooses among ECMP next hops, and none of its switches routes", what),
              "give the leaf and spine switches a router: (or generate a leaf_spine or fat_tree topology), or "
              "remove adaptive_routing"};
  }
  return {};
}

namespace detail {
namespace {

constexpr uint64_t kMaxFlowletGapNs = 1'000'000'000;

AdaptiveRouting::Mode read_mode(const Reader& r, const YAML::Node& v) {
  const std::string t = units::lower(r.scalar(v, "adaptive_routing mode", "adaptive_routing: per-packet"));
  for (const auto m : {AdaptiveRouting::Mode::Off, AdaptiveRouting::Mode::PerPacket, AdaptiveRouting::Mode::Flowlet})
    if (t == to_string(m)) return m;
  const std::string hint = units::did_you_mean(t, {"off", "per-packet", "flowlet"});
  r.fail(v, fmt::format("unknown adaptive routing mode {}", quote(v.Scalar())),
         hint.empty() ? "use off, per-packet or flowlet" : fmt::format("did you mean '{}'?", hint));
}

}  // namespace

void read_adaptive_routing(const Reader& r, const YAML::Node& v, Fabric& f, const std::string& what) {
  AdaptiveRouting a;
  if (v.IsMap()) {
    r.expect_map(v, what + " adaptive_routing", {"mode", "flowlet_gap"});
    a.mode = read_mode(r, r.required(v, "mode", what + " adaptive_routing", "mode: flowlet"));
    if (const auto g = v["flowlet_gap"]) {
      if (a.mode != AdaptiveRouting::Mode::Flowlet)
        r.fail(g, "flowlet_gap is for mode: flowlet", "set mode: flowlet, or remove flowlet_gap");
      const std::string t = r.scalar(g, "flowlet_gap", "flowlet_gap: 20us");
      const auto ns = units::parse_delay_ns(t, kMaxFlowletGapNs);
      if (!ns || *ns == 0)
        r.fail(g, fmt::format("flowlet_gap {} is not a time", quote(t)),
               fmt::format("write a time with a unit, above 0 and at most {}", units::format_delay(kMaxFlowletGapNs)));
      a.flowlet_gap_ns = *ns;
    }
  } else {
    a.mode = read_mode(r, v);
  }
  const AdaptiveProblem p = adaptive_routing_problem(f, a.mode);
  if (!p.problem.empty()) r.fail(v, p.problem, p.fix);
  f.adaptive = a;
}

}  // namespace detail
}  // namespace vf::config
