// What a reload (SIGHUP, `systemctl reload fabricd`) can apply to a running
// fabric, and what only a restart can: the running config against the file
// as it is now. A link's rate and delay change live (dp::Link::set_timing),
// as `fabricctl link set` does; anything that shapes the fabric itself --
// nodes, ports, cabling, MTUs, VL buffers, QoS tables, routing, daemon
// settings -- is built once, and changing it under running programs would
// tear down their contexts, so the plan names it instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"

namespace vf {

struct ReloadPlan {
  struct LinkTiming {
    size_t fabric, link;  // indexes into the running config
    uint64_t rate_bps, delay_ns;
    std::string what;  // "fabric ib: link vib0 - ibsw0/1: rate 100 Gb/s -> 10 Gb/s"
  };
  std::vector<LinkTiming> live;
  std::vector<std::string> restart;  // each difference a restart would apply, in plain words
};

ReloadPlan plan_reload(const config::Config& running, const config::Config& next);

}  // namespace vf
