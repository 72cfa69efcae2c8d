#include "dataplane/fabric/pfc.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "dataplane/wire/bytes.hpp"
#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/frame_peek.hpp"
#include "dataplane/wire/pfc.hpp"

namespace vf::dp {

namespace {
constexpr CounterDef kPfcPriorityDefs[] = {
    VF_COUNTER(PfcPrioritySnapshot, rx_pause, "rx_pause", "rx_pause_frames", kPackets,
               "PFC frames received that name this priority (XOFF or XON)"),
    VF_COUNTER(PfcPrioritySnapshot, tx_pause, "tx_pause", "tx_pause_frames", kPackets,
               "PFC frames sent that name this priority (XOFF, refresh or XON)"),
    VF_COUNTER(PfcPrioritySnapshot, rx_pause_duration, "rx_pause_duration", "rx_pause_duration_us", kEvents,
               "microseconds this port's egress on the priority was paused by its peer"),
    VF_COUNTER(PfcPrioritySnapshot, tx_pause_duration, "tx_pause_duration", "tx_pause_duration_us", kEvents,
               "microseconds this port held its peer in XOFF for the priority"),
    VF_COUNTER(PfcPrioritySnapshot, rx_pause_transition, "rx_pause_transition", "rx_pause_transitions", kEvents,
               "XON received while the priority was paused"),
    VF_COUNTER(PfcPrioritySnapshot, headroom_overflow, "headroom_overflow", "headroom_overflow_drops", kPackets,
               "lossless frames dropped at ingress: XOFF threshold and headroom both full"),
    VF_COUNTER(PfcPrioritySnapshot, buffer_drops, "buffer_drops", "shared_buffer_drops", kPackets,
               "lossy frames dropped at ingress: the shared buffer had no room"),
    VF_GAUGE(PfcPrioritySnapshot, buffer_bytes, "buffer_used", "ingress_buffer_bytes", kBytes,
             "receive buffer the priority group holds now (shared part and headroom)"),
    VF_GAUGE(PfcPrioritySnapshot, buffer_peak, "buffer_peak", "ingress_buffer_peak_bytes", kBytes,
             "most receive buffer the priority group ever held (watermark)"),
    VF_GAUGE(PfcPrioritySnapshot, headroom_bytes, "headroom_used", "headroom_bytes", kBytes,
             "of it, held in the PFC headroom now"),
    VF_GAUGE(PfcPrioritySnapshot, headroom_peak, "headroom_peak", "headroom_peak_bytes", kBytes,
             "most headroom the priority group ever held"),
    VF_COUNTER(PfcPrioritySnapshot, storm_events, "pause_storm_events", "pause_storm_events", kEvents,
               "times the PFC watchdog declared the priority stormed (paused too long)"),
};
static_assert(valid_counter_table<PfcPrioritySnapshot>(kPfcPriorityDefs));

std::string where(const Port& p) { return "port " + p.name() + ": "; }
}  // namespace

const CounterTable kPfcPriorityCounters{kPfcPriorityDefs};

Pfc::Pfc(Port& port, rte_mempool* pool, SharedBuffer* buffer, const PfcConfig& cfg)
    : port_(port),
      pool_(pool),
      buffer_(buffer),
      cfg_(cfg),
      pause_timer_(&Pfc::on_pause_timer, this),
      refresh_timer_(&Pfc::on_refresh_timer, this) {
  if (port.link_layer() != LinkLayer::kEthernet || !port.connected())
    throw std::invalid_argument(where(port) + "PFC needs a linked Ethernet port");
  uint64_t headroom = 0;
  for (unsigned p = 0; p < kNumPriorities; ++p) {
    if (!lossless(p)) continue;
    const PfcThresholds& t = cfg.pg[p];
    if (t.xon > t.xoff)
      throw std::invalid_argument(where(port) + "priority " + std::to_string(p) + ": XON threshold " +
                                  std::to_string(t.xon) + " is above XOFF " + std::to_string(t.xoff));
    headroom += t.headroom;
  }
  if (buffer_) {
    const uint64_t set_aside = headroom + uint64_t(cfg.reserved_bytes) * kNumPriorities;
    if (!buffer_->reserve(set_aside))
      throw std::invalid_argument(where(port) + "the lossless headroom (" + std::to_string(headroom) +
                                  " bytes) and reserved parts (" + std::to_string(uint64_t(cfg.reserved_bytes) * kNumPriorities) +
                                  " bytes) do not fit the switch buffer (" + std::to_string(buffer_->size()) +
                                  " bytes, " + std::to_string(buffer_->reserved()) + " already reserved)");
    reserved_ = set_aside;
  }
  port.set_gate(EgressGate{this, &Pfc::may_transmit, nullptr});
  IngressHooks in{this, &Pfc::on_control, &Pfc::admit, &Pfc::release};
  in.buffers = true;
  port.set_ingress(in);
  port.set_link_control(LinkControl{this, &Pfc::next_frame});
  port.set_link_state_hook(LinkStateHook{this, &Pfc::on_link_state});
}

Pfc::~Pfc() {
  port_.scheduler().disarm(pause_timer_);
  port_.scheduler().disarm(refresh_timer_);
  port_.set_gate({});
  port_.set_ingress({});
  port_.set_link_control({});
  port_.set_link_state_hook({});
  if (buffer_) buffer_->unreserve(reserved_);
}

// ---------------------------------------------------------------- receiver

bool Pfc::admit(void* self, unsigned cls, uint32_t bytes) {
  auto& c = *static_cast<Pfc*>(self);
  if (cls >= kNumPriorities) return true;
  Group& g = c.pg_[cls];
  if (c.admit_reserved(g, bytes)) return true;
  if (c.lossless(cls)) return c.admit_lossless(g, cls, bytes);
  if (c.dynamic() && g.shared + bytes > c.dynamic_limit()) [[unlikely]] {
    ++g.buffer_drops;
    return false;
  }
  if (c.buffer_ && !c.buffer_->take(bytes)) {
    ++g.buffer_drops;
    return false;
  }
  g.shared += bytes;
  g.peak = std::max(g.peak, g.reserved + g.shared);
  return true;
}

bool Pfc::admit_reserved(Group& g, uint32_t bytes) {
  if (!buffer_ || g.reserved + bytes > cfg_.reserved_bytes) return false;
  g.reserved += bytes;
  buffer_->take_reserved(bytes);
  g.peak = std::max(g.peak, g.reserved + g.shared + g.headroom);
  return true;
}

bool Pfc::admit_lossless(Group& g, unsigned prio, uint32_t bytes) {
  const PfcThresholds& t = cfg_.pg[prio];
  const uint64_t xoff = xoff_level(prio);
  if (g.shared + bytes <= xoff && (!buffer_ || buffer_->take(bytes))) {
    g.shared += bytes;
  } else if (g.headroom + bytes <= t.headroom) {
    g.headroom += bytes;
    if (buffer_) buffer_->take_headroom(bytes);
    g.headroom_peak = std::max(g.headroom_peak, g.headroom);
  } else {
    ++g.headroom_overflow;
    set_xoff(prio, true);
    return false;
  }
  g.peak = std::max(g.peak, g.reserved + g.shared + g.headroom);
  if (g.headroom > 0 || g.shared >= xoff) set_xoff(prio, true);
  return true;
}

void Pfc::release(void* self, unsigned cls, uint32_t bytes) {
  auto& c = *static_cast<Pfc*>(self);
  if (cls >= kNumPriorities) return;
  Group& g = c.pg_[cls];
  // The headroom drains first: it is what lets XON go; then the shared
  // part, which others may be waiting for; the reserved part last.
  const uint32_t from_headroom = std::min(g.headroom, bytes);
  const uint32_t from_shared = std::min(g.shared, bytes - from_headroom);
  const uint32_t from_reserved = bytes - from_headroom - from_shared;
  g.headroom -= from_headroom;
  g.shared -= from_shared;
  g.reserved -= from_reserved;
  if (c.buffer_) {
    c.buffer_->give_headroom(from_headroom);
    c.buffer_->give(from_shared);
    c.buffer_->give_reserved(from_reserved);
  }
  if (g.xoff && g.headroom == 0 && g.shared <= c.xon_level(cls) && !(c.storm_ >> cls & 1)) c.set_xoff(cls, false);
}

void Pfc::set_storm(uint8_t prios) {
  storm_ = prios;
  if (!port_.link_up()) return;  // on_link_state asserts it when the link trains
  for (unsigned p = 0; p < kNumPriorities; ++p) {
    const Group& g = pg_[p];
    if (prios >> p & 1)
      set_xoff(p, true);
    else if (g.xoff && g.headroom == 0 && g.shared <= xon_level(p))
      set_xoff(p, false);  // what release() would have done had the storm not held it
  }
}

void Pfc::set_xoff(unsigned prio, bool on) {
  Group& g = pg_[prio];
  if (g.xoff == on) return;
  const Nanos now = port_.scheduler().now();
  g.xoff = on;
  if (on)
    g.xoff_since = now;
  else
    g.xoff_ns += now - g.xoff_since;
  due_ |= uint8_t(1u << prio);
  port_.request_control();
  if (on && !refresh_timer_.armed()) {
    const Nanos half = std::max<Nanos>(1, wire::pause_quanta_ns(cfg_.pause_quanta, port_.link_params().rate_bps) / 2);
    port_.scheduler().arm(refresh_timer_, now + half);
  }
}

// XOFF is refreshed every half pause time, so a peer that keeps a quantum
// timer never resumes while this port still holds it off.
void Pfc::on_refresh_timer(Timer& t, Nanos now) {
  auto& c = CtxTimer::owner<Pfc>(t);
  uint8_t held = 0;
  for (unsigned p = 0; p < kNumPriorities; ++p)
    if (c.pg_[p].xoff) held |= uint8_t(1u << p);
  if (!held) return;
  c.due_ |= held;
  c.port_.request_control();
  const Nanos half =
      std::max<Nanos>(1, wire::pause_quanta_ns(c.cfg_.pause_quanta, c.port_.link_params().rate_bps) / 2);
  c.port_.scheduler().arm(t, now + half);
}

rte_mbuf* Pfc::next_frame(void* self) {
  auto& c = *static_cast<Pfc*>(self);
  if (!c.due_) return nullptr;
  rte_mbuf* m = rte_pktmbuf_alloc(c.pool_);
  uint8_t* f = m ? reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, wire::kPfcFrameLen)) : nullptr;
  if (!f) {
    // The due priorities stay due; the next XOFF/XON change or refresh retries.
    if (m) rte_pktmbuf_free(m);
    ++c.tx_unsent_;
    return nullptr;
  }
  wire::PfcFrame p;
  p.enable = c.due_;
  for (unsigned i = 0; i < kNumPriorities; ++i) {
    if (!(c.due_ >> i & 1)) continue;
    p.quanta[i] = c.pg_[i].xoff ? c.cfg_.pause_quanta : 0;
    ++c.pg_[i].tx_pause;
  }
  c.due_ = 0;
  wire::pfc_put(f, c.cfg_.mac.data(), p);
  return m;
}

// ---------------------------------------------------------------- sender

bool Pfc::may_transmit(void* self, unsigned cls, uint32_t) {
  auto& c = *static_cast<Pfc*>(self);
  if (cls >= kNumPriorities) return true;
  const Pause& p = c.pause_[cls];
  return p.stormed || !c.paused_now(p, c.port_.scheduler().now());
}

bool Pfc::on_control(void* self, Port&, rte_mbuf* m) {
  const uint8_t* f = wire::frame_data(m);
  const uint16_t len = rte_pktmbuf_data_len(m);
  if (len < wire::kEthHdrLen) return false;  // a runt: the port counts it
  const uint16_t type = wire::eth_type(f);
  const bool tagged_control = type == wire::kEtherTypeVlan && len >= wire::kEthHdrLen + wire::kVlanLen &&
                              wire::get16(f + wire::kEthTypeOffset + wire::kVlanLen) == wire::kEtherTypeMacControl;
  if (type != wire::kEtherTypeMacControl && !tagged_control) [[likely]]
    return false;
  auto& c = *static_cast<Pfc*>(self);
  c.receive_pfc(m);
  rte_pktmbuf_free(m);
  return true;
}

void Pfc::receive_pfc(const rte_mbuf* m) {
  wire::PfcFrame p;
  const wire::PfcError e = wire::pfc_parse(wire::frame_data(m), rte_pktmbuf_data_len(m), p);
  if (e == wire::PfcError::kOpcode) {
    ++rx_unsupported_;
    return;
  }
  if (e != wire::PfcError::kOk) {
    ++rx_malformed_;
    return;
  }
  const Nanos now = port_.scheduler().now();
  for (unsigned i = 0; i < kNumPriorities; ++i) {
    if (!(p.enable >> i & 1)) continue;
    ++pause_[i].rx_pause;
    if (lossless(i)) pause(i, p.quanta[i], now);
  }
  arm_pause_timer(now);
  port_.wake();  // an XON may have opened a gate already (response 0)
}

// The pause takes effect response_ns after the frame arrived and lasts its
// quanta from then; a frame that arrives while one is in force replaces its
// end (time 0 ends it).
void Pfc::pause(unsigned prio, uint16_t quanta, Nanos now) {
  Pause& p = pause_[prio];
  p.last_heard = now;
  if (p.stormed) return;  // ignored until the peer has been quiet for a while
  const Nanos eff = now + cfg_.response_ns;
  const Nanos end = quanta ? eff + Nanos(wire::pause_quanta_ns(quanta, port_.link_params().rate_bps)) : eff;
  if (eff <= p.until) {
    if (!quanta && p.until > eff) ++p.transitions;
    p.until = std::max(p.from, end);
  } else {
    p.done_ns += p.until - p.from;
    p.from = eff;
    p.until = end;
  }
  check_watchdog(p, now);
}

// Stormed: paused without a break for watchdog_ns. Recovered: no pause frame
// for watchdog_ns.
void Pfc::check_watchdog(Pause& p, Nanos now) {
  if (!cfg_.watchdog_ns) return;
  if (p.stormed) {
    if (now >= recovery_at(p)) p.stormed = false;
    return;
  }
  if (paused_now(p, now) && now - p.from >= cfg_.watchdog_ns) {
    // The pause in force ends here; pauses that come while stormed are ignored.
    p.stormed = true;
    p.stormed_at = now;
    ++p.storms;
    p.done_ns += now - p.from;
    p.from = p.until = now;
  }
}

void Pfc::arm_pause_timer(Nanos now) {
  Nanos next = kNever;
  for (Pause& p : pause_) {
    if (p.until > now && !p.stormed) next = std::min(next, p.until);
    if (!cfg_.watchdog_ns) continue;
    if (p.stormed)
      next = std::min(next, recovery_at(p));
    else if (p.until > now)
      next = std::min(next, std::max(now, p.from + cfg_.watchdog_ns));
  }
  if (next == kNever)
    port_.scheduler().disarm(pause_timer_);
  else
    port_.scheduler().arm(pause_timer_, next);
}

void Pfc::on_pause_timer(Timer& t, Nanos now) {
  auto& c = CtxTimer::owner<Pfc>(t);
  for (Pause& p : c.pause_) c.check_watchdog(p, now);
  c.arm_pause_timer(now);
  c.port_.wake();
}

uint64_t Pfc::paused_ns(const Pause& p, Nanos now) const {
  const Nanos end = std::min(now, p.until);
  return p.done_ns + (end > p.from ? end - p.from : 0);
}

// ---------------------------------------------------------------- link state

void Pfc::on_link_state(void* self, bool up) {
  auto& c = *static_cast<Pfc*>(self);
  const Nanos now = c.port_.scheduler().now();
  if (!up) {
    // The peer's pauses die with the link; so do this end's XOFFs (the
    // frames this port holds stay accounted until they leave).
    for (Pause& p : c.pause_) {
      p.done_ns = c.paused_ns(p, now);
      p.from = p.until = now;
      p.stormed = false;
    }
    for (Group& g : c.pg_)
      if (g.xoff) {
        g.xoff = false;
        g.xoff_ns += now - g.xoff_since;
      }
    c.due_ = 0;
    c.port_.scheduler().disarm(c.pause_timer_);
    c.port_.scheduler().disarm(c.refresh_timer_);
    return;
  }
  for (unsigned i = 0; i < kNumPriorities; ++i) {
    const Group& g = c.pg_[i];
    if ((c.lossless(i) && (g.headroom > 0 || g.shared >= c.xoff_level(i))) || (c.storm_ >> i & 1)) c.set_xoff(i, true);
  }
}

void Pfc::reset_counters() {
  const Nanos now = port_.scheduler().now();
  for (Group& g : pg_) {
    g.tx_pause = g.headroom_overflow = g.buffer_drops = 0;
    g.xoff_ns = 0;
    if (g.xoff) g.xoff_since = now;
    g.peak = g.reserved + g.shared + g.headroom;
    g.headroom_peak = g.headroom;
  }
  for (Pause& p : pause_) {
    p.rx_pause = p.transitions = p.storms = 0;
    p.done_ns = 0;
    if (p.until > now && p.from < now) p.from = now;  // the part still to come counts
    else if (p.until <= now) p.from = p.until = now;
  }
  rx_malformed_ = rx_unsupported_ = tx_unsent_ = 0;
}

PfcSnapshot Pfc::snapshot() const {
  const Nanos now = port_.scheduler().now();
  PfcSnapshot s{};
  s.enable = cfg_.enable;
  s.pg = cfg_.pg;
  s.dynamic = dynamic();
  s.alpha_log2 = cfg_.alpha_log2;
  s.dynamic_limit = dynamic() ? dynamic_limit() : 0;
  s.reserved_bytes = buffer_ ? cfg_.reserved_bytes : 0;
  for (unsigned i = 0; i < kNumPriorities; ++i) {
    const Group& g = pg_[i];
    const Pause& p = pause_[i];
    if (paused_now(p, now) && !p.stormed) s.paused |= uint8_t(1u << i);
    if (g.xoff) s.xoff |= uint8_t(1u << i);
    if (p.stormed) s.stormed |= uint8_t(1u << i);
    if (storm_ >> i & 1) s.storming |= uint8_t(1u << i);
    PfcPrioritySnapshot& o = s.prio[i];
    o.rx_pause = p.rx_pause;
    o.tx_pause = g.tx_pause;
    o.rx_pause_duration = paused_ns(p, now) / 1000;
    o.tx_pause_duration = (g.xoff_ns + (g.xoff ? now - g.xoff_since : 0)) / 1000;
    o.rx_pause_transition = p.transitions;
    o.headroom_overflow = g.headroom_overflow;
    o.buffer_drops = g.buffer_drops;
    o.buffer_bytes = g.reserved + g.shared + g.headroom;
    o.buffer_peak = g.peak;
    o.headroom_bytes = g.headroom;
    o.headroom_peak = g.headroom_peak;
    o.storm_events = p.storms;
  }
  s.rx_malformed = rx_malformed_;
  s.rx_unsupported = rx_unsupported_;
  s.tx_unsent = tx_unsent_;
  return s;
}

}  // namespace vf::dp
