// A full-duplex point-to-point link: two independent directions, each a wire
// with a rate, a propagation delay and the frames currently on it.
//
// Timing of one frame on a direction (all exact, see wire_time.hpp):
//   depart  = max(now, busy_until)          the wire carries one frame at a time
//   busy_until = depart + wire_bits / rate  it occupies the wire for its length
//   arrival = busy_until + delay            its last bit reaches the far end
// The far end receives the mbuf at ceil(arrival) in whole ns. Frames in flight
// sit in a bounded FIFO whose arrivals are monotonic (a later frame departs after
// the earlier one finished and has the same delay), so one Timer armed for the
// head delivers them all.
//
// The sender (a Port) asks idle(now) before sending and sends only then, so the
// queueing and the choice of what goes next stay in the port's arbiter. idle is
// true from the whole ns in which the wire frees: the port's timer fires at
// floor(busy_until), and depart = busy_until keeps back-to-back frames exactly
// back to back instead of losing the fraction of a ns each time.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "core/counter_def.hpp"
#include "dataplane/fabric/counter.hpp"
#include "dataplane/fabric/ctx_timer.hpp"
#include "dataplane/fabric/ring.hpp"
#include "dataplane/fabric/types.hpp"
#include "dataplane/fabric/wire_stage.hpp"
#include "dataplane/fabric/wire_time.hpp"

namespace vf::dp {

// Where arriving frames go: a Port's receive function, or a test's.
struct FrameSink {
  void (*fn)(void* ctx, rte_mbuf* m) = nullptr;
  void* ctx = nullptr;
};

// What one direction has carried, in plain numbers (LinkDirection::snapshot).
struct LinkDirectionSnapshot {
  uint64_t frames_sent;    // put on the wire, lost ones included
  uint64_t bytes_on_wire;  // incl. Ethernet preamble, SFD, FCS and IFG
  uint64_t overflow;       // dropped: in-flight FIFO full (a sizing bug)
  uint64_t lost;           // the impairment stage lost them on the wire
  uint64_t corrupted;      // the impairment stage flipped a bit in them
  uint64_t duplicated;     // extra copies the impairment stage put on the wire
  uint64_t reordered;      // frames held back until the next one passed them
};
extern const CounterTable kLinkDirectionCounters;

class LinkDirection {
 public:
  LinkDirection(Scheduler& sched, LinkLayer ll, const LinkParams& params);
  ~LinkDirection();
  LinkDirection(const LinkDirection&) = delete;
  LinkDirection& operator=(const LinkDirection&) = delete;

  void set_sink(FrameSink sink) { sink_ = sink; }
  // The capture tap and the impairment of this direction (wire_stage.hpp).
  void set_tap(WireStage s) { tap_ = s; }
  bool tapped() const { return tap_.on_frame != nullptr; }
  void set_impairment(WireStage s) { impair_ = s; }

  // Whether a frame handed over now departs within this ns (see above).
  bool idle(Nanos now) const { return now >= busy_.ns; }
  // The whole ns at which idle() becomes true.
  Nanos free_at() const { return busy_.ns; }
  const WireTime& busy_until() const { return busy_; }

  // Takes ownership of `m` and puts it on the wire (call when idle()). Returns
  // the exact arrival time of its last bit at the far end.
  WireTime send(rte_mbuf* m);

  // The link went down: the frames on the wire never arrive (counted in
  // `lost`) and the wire is free at once.
  void flush();

  // A new rate and delay for the frames sent from now on (fabricctl link
  // set rate/delay): frames on the wire keep their arrival, the one being
  // serialized its end, and none is overtaken -- after a shorter delay the
  // next frames arrive no earlier than the last one sent before. Lcore only;
  // may allocate (a longer or faster wire holds more frames).
  void set_timing(uint64_t rate_bps, Nanos delay_ns);

  uint32_t in_flight() const { return flight_.size(); }
  const LinkParams& params() const { return params_; }
  LinkLayer link_layer() const { return ll_; }

  Counter frames_sent;  // frames put on the wire
  Counter bytes_on_wire;  // incl. Ethernet overhead
  Counter overflow;    // frames dropped because the in-flight FIFO was full (sizing bug)
  Counter lost;        // frames lost on the wire: the impairment stage, or the link went down
  Counter corrupted;   // frames the impairment stage corrupted (they fail a CRC downstream)
  Counter duplicated;  // extra copies of duplicated frames
  Counter reordered;   // frames that arrived after the next one (WireVerdict::kHold)

  LinkDirectionSnapshot snapshot() const {
    return {frames_sent.get(), bytes_on_wire.get(), overflow.get(), lost.get(), corrupted.get(),
            duplicated.get(), reordered.get()};
  }

 private:
  struct InFlight {
    rte_mbuf* m;
    Nanos arrive;  // ceil of the exact arrival
  };
  static void on_arrival(Timer& t, Nanos now);
  static void on_hold_timeout(Timer& t, Nanos now);
  void enqueue(rte_mbuf* m, Nanos arrive);
  // Tap, then impairment, then what the impairment said: lose, pass,
  // duplicate, or hold the frame until the next one has passed it.
  [[gnu::noinline, gnu::cold]] void run_stages(rte_mbuf* m, const WireTime& depart, const WireTime& arrive);

  Scheduler& sched_;
  const LinkLayer ll_;
  LinkParams params_;
  WireTime busy_;
  Nanos last_arrive_ = 0;  // of the newest frame in flight: arrivals never go back
  Ring<InFlight> flight_;
  CtxTimer timer_;
  // A frame held back for reordering, and until when it may wait for the
  // next frame to overtake it before it goes anyway.
  rte_mbuf* held_ = nullptr;
  Nanos held_at_ = 0;
  CtxTimer hold_timer_;
  FrameSink sink_;
  WireStage tap_;
  WireStage impair_;
};

class Link {
 public:
  Link(Scheduler& sched, LinkLayer ll, const LinkParams& params)
      : params_(params), ab_(sched, ll, params), ba_(sched, ll, params) {}

  LinkDirection& a_to_b() { return ab_; }
  LinkDirection& b_to_a() { return ba_; }
  const LinkParams& params() const { return params_; }
  // Both directions (LinkDirection::set_timing).
  void set_timing(uint64_t rate_bps, Nanos delay_ns) {
    params_.rate_bps = rate_bps;
    params_.delay_ns = delay_ns;
    ab_.set_timing(rate_bps, delay_ns);
    ba_.set_timing(rate_bps, delay_ns);
  }

 private:
  LinkParams params_;
  LinkDirection ab_;
  LinkDirection ba_;
};

// Frames one direction can have in flight at most: the delay filled with the
// shortest frames the link layer has (IB flow-control packets, 6 bytes; the
// 84-byte Ethernet minimum), plus the one being serialized, plus slack for a
// sender that hands over a few frames before the wire is idle (they queue on
// the wire in order; ports never do that, tests and tools may).
inline constexpr uint32_t kSendAheadSlack = 64;
// How long a frame held for reordering waits for the next one (emulated).
inline constexpr Nanos kHoldMax = 10'000;
uint32_t max_frames_in_flight(LinkLayer ll, const LinkParams& params);

}  // namespace vf::dp
