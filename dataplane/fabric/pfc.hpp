// IEEE 802.1Qbb Priority-based Flow Control for one Ethernet port (a switch
// port or a RoCE vHCA's NIC port). Like IbCredits it is both halves of the
// link's flow control and plugs into the port's seams (port_hooks.hpp):
//
// Receiver half (IngressHooks). Per priority group (one per priority) the
// bytes of received frames the port still holds. A lossless priority (bit set
// in the pfc enable vector) has an XOFF threshold and headroom: a frame goes
// into the shared part while the group holds at most `xoff` bytes there and
// the switch's shared pool has room, otherwise into the group's headroom --
// which sends XOFF (a PFC frame with `pause_quanta` for that priority). What
// does not fit in the headroom either is dropped and counted as a headroom
// overflow: with a large enough headroom (pfc_headroom.hpp) that never
// happens. Released bytes leave the headroom first; once it is empty and the
// shared part is down to `xon`, XON goes out (time 0). While XOFF holds, it is
// refreshed every half pause time so the peer never resumes on its own. A
// lossy priority takes from the shared pool and is dropped when it is full.
// The headroom of every lossless group is reserved out of the switch's
// SharedBuffer when the port is set up.
//
// A switch port's groups may each have a static reserved part
// (reserved_bytes, set aside in the SharedBuffer with the headroom): a frame
// fills it first, so a group always gets that much whatever the others took
// from the shared pool; XOFF, XON and the dynamic bound look at the shared
// part only, and released bytes leave the headroom, then the shared part,
// then the reserved one (so the pool frees first).
//
// Dynamic thresholds (alpha_log2 set, a switch port with a SharedBuffer): as
// with a Spectrum pool of thtype dynamic (Choudhury and Hahne's dynamic
// threshold), a group's shared part is bounded by alpha times the shared
// buffer still free, not by a fixed size: a lossless group goes to its
// headroom and sends XOFF beyond it, and XON once it is down to that bound
// less the static XOFF-XON gap; a lossy group drops beyond it. One congested
// group alone settles at alpha / (1 + alpha) of the pool, n of them at
// alpha / (1 + n alpha) each, and the rest always stays for the others.
//
// Sender half (EgressGate). A PFC frame from the peer sets, per enabled
// priority, a pause that takes effect `response_ns` after the frame arrived
// (what is already on the wire or starts before then still goes) and lasts
// its quanta (512 bit times each at the link's rate); time 0 resumes. Only
// priorities in this port's enable vector are honoured, as 802.1Qbb says.
// A paused priority's frames wait in their queue -- never dropped -- and the
// port counts PortXmitWait; a timer wakes the port when the pause ends.
//
// The watchdog: a priority paused without a break for longer than
// `watchdog_ns` is declared stormed (counted, visible in the snapshot); like
// switches' PFC watchdogs the port then ignores that priority's pauses and
// sends what it holds (the peer that keeps pausing takes the drops) until
// the peer has sent no pause for `watchdog_ns`.
//
// Fault injection (set_storm): a receive pipeline that stopped draining, the
// classic source of a PFC storm, holds XOFF on the given priorities whatever
// its buffer holds -- refreshed like any XOFF, kept across a link retrain --
// until cleared; then XON follows as soon as the buffer allows.
//
// Frames the port receives with EtherType 0x8808 are link-local MAC Control
// frames: consumed here, never forwarded. Anything but a well-formed PFC frame
// is dropped and counted (malformed; an 802.3x PAUSE counts as unsupported).
#pragma once

#include <rte_mempool.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "core/counter_def.hpp"
#include "core/pfc_headroom.hpp"
#include "dataplane/fabric/ctx_timer.hpp"
#include "dataplane/fabric/port.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

inline constexpr unsigned kNumPriorities = 8;

// One lossless priority group's receive thresholds, in bytes as stored.
struct PfcThresholds {
  uint32_t xoff = 0;      // the shared part a group may fill before XOFF
  uint32_t xon = 0;       // XON once the shared part is down to this (headroom empty)
  uint32_t headroom = 0;  // taken beyond XOFF while the pause takes effect
};

struct PfcConfig {
  uint8_t enable = 0;              // pfc enable vector: the lossless priorities
  uint16_t pause_quanta = 0xFFFF;  // the time an XOFF asks for
  Nanos response_ns = 1000;        // how long this port takes to act on a received pause
  Nanos watchdog_ns = 0;           // 0 = no PFC watchdog
  std::array<PfcThresholds, kNumPriorities> pg{};
  Mac mac{};                       // source address of the PFC frames this port sends
  // The 802.1Qbb delay model for this port's link and peer, which the
  // default headroom comes from (shown and compared, never enforced here).
  HeadroomTerms model{};
  int8_t alpha_log2 = PfcSettings::kStaticThresholds;  // dynamic thresholds (above)
  uint32_t reserved_bytes = 0;  // each group's static reserved part (switch ports)
};

// One priority's flow-control counters and levels, in the names RoCE users
// know from mlx5's ethtool statistics.
struct PfcPrioritySnapshot {
  uint64_t rx_pause;            // PFC frames received with this priority enabled
  uint64_t tx_pause;            // PFC frames sent with this priority enabled
  uint64_t rx_pause_duration;   // microseconds this port's egress was paused
  uint64_t tx_pause_duration;   // microseconds this port held the peer in XOFF
  uint64_t rx_pause_transition; // XOFF -> XON transitions received
  uint64_t headroom_overflow;   // lossless frames dropped beyond XOFF + headroom
  uint64_t buffer_drops;        // lossy frames dropped: the shared buffer was full
  uint64_t buffer_bytes;        // held by this group now (shared + headroom)
  uint64_t buffer_peak;
  uint64_t headroom_bytes;      // of it, in the headroom
  uint64_t headroom_peak;
  uint64_t storm_events;        // the watchdog declared the priority stormed
};
extern const CounterTable kPfcPriorityCounters;

struct PfcSnapshot {
  uint8_t enable;
  uint8_t paused;   // priorities whose egress is paused now
  uint8_t xoff;     // priorities this port holds the peer in XOFF for
  uint8_t stormed;  // priorities the watchdog declared stormed
  uint8_t storming;  // priorities this port itself holds in XOFF as injected fault (set_storm)
  std::array<PfcThresholds, kNumPriorities> pg;
  std::array<PfcPrioritySnapshot, kNumPriorities> prio;
  uint64_t rx_malformed;    // 0x8808 frames that are not valid PFC frames
  uint64_t rx_unsupported;  // 802.3x PAUSE and other MAC Control opcodes
  uint64_t tx_unsent;       // a due PFC frame found no mbuf (it goes with a later one)
  bool dynamic;             // dynamic thresholds: pg[].xoff / xon give way to
  int8_t alpha_log2;        // alpha = 2^alpha_log2 times the free shared buffer,
  uint64_t dynamic_limit;   // which is this many bytes now
  uint32_t reserved_bytes;  // each group's static reserved part
};

class Pfc {
 public:
  // Plugs into `port` (an Ethernet port already attached to its link);
  // `buffer`: the switch's shared packet memory the port's received frames
  // occupy (null at a vHCA). Throws std::invalid_argument when the headroom
  // does not fit the buffer or a threshold is inconsistent.
  Pfc(Port& port, rte_mempool* pool, SharedBuffer* buffer, const PfcConfig& cfg);
  ~Pfc();
  Pfc(const Pfc&) = delete;
  Pfc& operator=(const Pfc&) = delete;

  // On the lcore, like IbCredits::snapshot.
  PfcSnapshot snapshot() const;
  // Clears the counts (fabricctl counters reset): levels stay, watermarks
  // restart from them, a pause or XOFF in progress counts from now.
  void reset_counters();
  const PfcConfig& config() const { return cfg_; }
  const Port& port() const { return port_; }
  bool lossless(unsigned prio) const { return cfg_.enable >> prio & 1; }
  // Injects (or, with 0, ends) a PFC storm from this port on `prios`.
  void set_storm(uint8_t prios);

 private:
  struct Group {  // receiver half, one priority
    uint32_t reserved = 0, shared = 0, headroom = 0, peak = 0, headroom_peak = 0;
    bool xoff = false;
    Nanos xoff_since = 0;
    uint64_t xoff_ns = 0;
    uint64_t tx_pause = 0, headroom_overflow = 0, buffer_drops = 0;
  };
  struct Pause {  // sender half, one priority: paused during [from, until)
    Nanos from = 0, until = 0;
    Nanos last_heard = 0;     // the last pause frame (watchdog recovery)
    Nanos stormed_at = 0;
    uint64_t done_ns = 0;     // paused time of earlier intervals
    uint64_t rx_pause = 0, transitions = 0, storms = 0;
    bool stormed = false;
  };

  static bool may_transmit(void* self, unsigned cls, uint32_t bytes);
  static bool on_control(void* self, Port& port, rte_mbuf* m);
  static bool admit(void* self, unsigned cls, uint32_t bytes);
  static void release(void* self, unsigned cls, uint32_t bytes);
  static rte_mbuf* next_frame(void* self);
  static void on_link_state(void* self, bool up);
  static void on_pause_timer(Timer& t, Nanos now);
  static void on_refresh_timer(Timer& t, Nanos now);

  bool admit_lossless(Group& g, unsigned prio, uint32_t bytes);
  // Into the group's reserved part, if it has room (switch ports only).
  bool admit_reserved(Group& g, uint32_t bytes);
  bool dynamic() const { return buffer_ && cfg_.alpha_log2 != PfcSettings::kStaticThresholds; }
  // The dynamic bound: alpha times the free shared buffer.
  uint64_t dynamic_limit() const {
    const uint64_t free = buffer_->shared_free();
    return cfg_.alpha_log2 >= 0 ? free << cfg_.alpha_log2 : free >> -cfg_.alpha_log2;
  }
  // What the group's shared part may reach before XOFF, and XON's level.
  uint64_t xoff_level(unsigned prio) const { return dynamic() ? dynamic_limit() : cfg_.pg[prio].xoff; }
  uint64_t xon_level(unsigned prio) const {
    if (!dynamic()) return cfg_.pg[prio].xon;
    const uint64_t gap = cfg_.pg[prio].xoff - cfg_.pg[prio].xon, lim = dynamic_limit();
    return lim > gap ? lim - gap : 0;
  }
  void receive_pfc(const rte_mbuf* m);
  void pause(unsigned prio, uint16_t quanta, Nanos now);
  void set_xoff(unsigned prio, bool on);
  void arm_pause_timer(Nanos now);
  void check_watchdog(Pause& p, Nanos now);
  bool paused_now(const Pause& p, Nanos now) const { return now >= p.from && now < p.until; }
  // A stormed priority recovers once the peer sent no pause for watchdog_ns.
  Nanos recovery_at(const Pause& p) const { return std::max(p.last_heard, p.stormed_at) + cfg_.watchdog_ns; }
  uint64_t paused_ns(const Pause& p, Nanos now) const;

  Port& port_;
  rte_mempool* pool_;
  SharedBuffer* buffer_;
  const PfcConfig cfg_;
  uint64_t reserved_ = 0;  // headroom reserved in buffer_
  std::array<Group, kNumPriorities> pg_{};
  std::array<Pause, kNumPriorities> pause_{};
  uint8_t due_ = 0;  // priorities owed a PFC frame (XOFF or XON)
  uint8_t storm_ = 0;  // injected: priorities held in XOFF regardless
  CtxTimer pause_timer_;    // the earliest end of a pause
  CtxTimer refresh_timer_;  // XOFF refresh, while any group holds one
  uint64_t rx_malformed_ = 0, rx_unsupported_ = 0, tx_unsent_ = 0;
};

}  // namespace vf::dp
