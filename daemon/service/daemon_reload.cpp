// fabricd's reload (SIGHUP; the unit's ExecReload checks the file first):
// the config file as it is now against what runs. What can change live is
// applied on the lcore -- a link's rate and delay -- and the rest is named
// in the journal and `fabricctl events` as needing a restart, because
// rebuilding the fabric would end every program's contexts.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/config/config_reload.hpp"
#include "daemon/service/daemon_state.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/lcore/mbuf_pool.hpp"
#include "daemon/service/sd_notify.hpp"
#include "daemon/fabric/topology.hpp"

namespace vf {

void DaemonState::reload() {
  SdNotify::reloading();
  config::Config next;
  try {
    next = config::load_config(cfg_.source);
  } catch (const config::ConfigError& e) {
    spdlog::error("reload: {}; nothing changed", e.what());
    fabric_event("daemon", std::string("reload refused, nothing changed: ") + e.what());
    SdNotify::ready();
    return;
  }
  const ReloadPlan plan = plan_reload(applied_, next);
  const bool queued = plan.live.empty() || lcore_->post([this, live = plan.live] {
    for (const auto& t : live) topology_->set_link_timing(t.fabric, t.link, t.rate_bps, t.delay_ns);
  });
  if (!queued) {
    spdlog::error("reload: the dataplane is busy; nothing changed, reload again");
    fabric_event("daemon", "reload refused: the dataplane is busy; nothing changed, reload again");
    SdNotify::ready();
    return;
  }
  for (const auto& t : plan.live) {
    spdlog::info("reload: {}", t.what);
    fabric_event("link", t.what);
    applied_.fabrics[t.fabric].links[t.link].rate_bps = t.rate_bps;
    applied_.fabrics[t.fabric].links[t.link].delay_ns = t.delay_ns;
  }
  // The pool was sized for the links as they were at start; it cannot grow.
  if (const uint32_t need = mbuf_pool_size(applied_); need > eal_.pool()->size) {
    const std::string why = fmt::format(
        "the links now hold up to {} frames in flight, more than the {} packet buffers sized at start: senders "
        "will wait for buffers; restart fabricd to size the pool",
        need, eal_.pool()->size);
    spdlog::warn("reload: {}", why);
    fabric_event("daemon", why);
  }
  std::string restart;
  for (const auto& r : plan.restart) restart += (restart.empty() ? "" : ", ") + r;
  if (!restart.empty())
    spdlog::warn("reload: changed in {} but applied only by a restart, which ends every program's contexts: {}",
                 cfg_.source, restart);
  std::string summary = "reload of " + cfg_.source + ": " +
                        (plan.live.empty() ? std::string("nothing to change live")
                                           : std::to_string(plan.live.size()) + " link change" +
                                                 (plan.live.size() == 1 ? "" : "s") + " applied");
  if (!restart.empty()) summary += "; needs a restart: " + restart;
  fabric_event("daemon", summary);
  SdNotify::ready();
}

}  // namespace vf
