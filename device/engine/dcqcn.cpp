#include "device/engine/dcqcn.hpp"

#include <algorithm>
#include <cmath>

namespace vf::engine {
namespace {

void increase(DcqcnRp& rp, const DcqcnConfig& c) {
  const uint32_t f = c.rpg_threshold;
  const uint32_t lo = std::min(rp.t_events, rp.b_events), hi = std::max(rp.t_events, rp.b_events);
  if (hi < f) {
    // fast recovery: RC halves its distance to the target
  } else if (lo > f) {
    rp.rt += double(lo - f) * c.rpg_hai_rate_mbps;
  } else {
    rp.rt += c.rpg_ai_rate_mbps;
  }
  const double line = c.line_rate_mbps;
  rp.rt = std::min(rp.rt, line);
  rp.rc = std::min((rp.rt + rp.rc) / 2, line);
  if (rp.rc >= line - 1) rp.limited = false;  // within 1 Mb/s of the line: let go
}

}  // namespace

bool dcqcn_on_cnp(DcqcnRp& rp, const DcqcnConfig& c, Nanos now) {
  dcqcn_advance(rp, c, now, 0);
  if (!rp.limited) {
    rp = DcqcnRp{};
    rp.limited = true;
    rp.rc = rp.rt = c.line_rate_mbps;
    rp.alpha = 1;
  } else if (now - rp.last_cut < c.rate_reduce_monitor_period_ns) {
    return false;
  }
  rp.rt = rp.rc;
  const double floor_by_fac = rp.rc * (1 - c.rpg_min_dec_fac / 100.0);
  rp.rc = std::max({rp.rc * (1 - rp.alpha / 2), floor_by_fac, double(c.rpg_min_rate_mbps)});
  rp.alpha = (1 - c.g) * rp.alpha + c.g;
  rp.last_cut = rp.alpha_at = rp.timer_at = now;
  rp.t_events = rp.b_events = 0;
  rp.bytes = 0;
  return true;
}

uint32_t dcqcn_advance(DcqcnRp& rp, const DcqcnConfig& c, Nanos now, uint64_t bytes_sent) {
  if (!rp.limited) return 0;
  if (c.alpha_period_ns && now > rp.alpha_at) {
    const uint64_t n = (now - rp.alpha_at) / c.alpha_period_ns;
    if (n) {
      rp.alpha *= std::pow(1 - c.g, double(n));
      rp.alpha_at += n * c.alpha_period_ns;
    }
  }
  while (rp.limited && c.rpg_time_reset_ns && now - rp.timer_at >= c.rpg_time_reset_ns) {
    rp.timer_at += c.rpg_time_reset_ns;
    ++rp.t_events;
    increase(rp, c);
  }
  rp.bytes += bytes_sent;
  while (rp.limited && c.rpg_byte_reset && rp.bytes >= c.rpg_byte_reset) {
    rp.bytes -= c.rpg_byte_reset;
    ++rp.b_events;
    increase(rp, c);
  }
  return rp.limited ? std::max<uint32_t>(1, uint32_t(rp.rc)) : 0;
}

}  // namespace vf::engine
