#include "daemon/fabric/config_check.hpp"

#include <fmt/format.h>

#include "daemon/config/config.hpp"
#include "daemon/sm/credit_loops.hpp"
#include "daemon/config/pfc_watchdog_check.hpp"
#include "daemon/config/units.hpp"
#include "daemon/sm/routing.hpp"

namespace vf {

ConfigCheck check_config_file(const std::string& path, const config::Limits& limits) {
  ConfigCheck out;
  config::Config cfg;
  try {
    cfg = config::load_config(path, limits);
  } catch (const config::ConfigError& e) {
    out.error = e.what();
    return out;
  }
  out.ok = true;
  out.fabrics = cfg.fabrics.size();
  for (const auto& f : cfg.fabrics) {
    out.switches += f.switches.size();
    out.hcas += f.hcas.size();
    out.links += f.links.size();
    if (!f.generated.empty()) out.generated.push_back(fmt::format("fabric '{}': {}", f.name, f.generated));
    if (f.adaptive.mode != config::AdaptiveRouting::Mode::Off) {
      const bool ib = f.link_layer == config::LinkLayer::Infiniband;
      std::string gap = f.adaptive.mode == config::AdaptiveRouting::Mode::Flowlet
                            ? fmt::format(" (gap {})", units::format_delay(f.adaptive.flowlet_gap_ns))
                            : "";
      out.adaptive.push_back(fmt::format("fabric '{}': {}{}, among {}", f.name, to_string(f.adaptive.mode), gap,
                                         ib ? "the SM's Up/Down equal-cost ports" : "each route's ECMP next hops"));
    }
    if (const std::string w = credit_loop_warning(f, compute_routes(f)); !w.empty()) out.warnings.push_back(w);
    if (const std::string w = pfc_watchdog_warning(f); !w.empty()) out.warnings.push_back(w);
  }
  return out;
}

}  // namespace vf
