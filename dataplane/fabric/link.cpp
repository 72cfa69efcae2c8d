#include "dataplane/fabric/link.hpp"

#include <algorithm>
#include <utility>

namespace vf::dp {

uint32_t max_frames_in_flight(LinkLayer ll, const LinkParams& p) {
  const unsigned __int128 min_bits = (ll == LinkLayer::kInfiniBand ? 6 : wire_bytes(ll, 0)) * 8;
  // delay_ns * rate / (min_bits * 1e9), in 128 bits: a 10 ms, 800 Gb/s link overflows 64.
  const unsigned __int128 n =
      static_cast<unsigned __int128>(p.delay_ns) * p.rate_bps / (min_bits * 1'000'000'000ULL) + 2 +
      kSendAheadSlack;
  // Beyond a million frames the mbuf pool is the limit, not the wire.
  return static_cast<uint32_t>(std::min<unsigned __int128>(n, 1u << 20));
}

LinkDirection::LinkDirection(Scheduler& sched, LinkLayer ll, const LinkParams& params)
    : sched_(sched),
      ll_(ll),
      params_(params),
      flight_(max_frames_in_flight(ll, params)),
      timer_(&LinkDirection::on_arrival, this),
      hold_timer_(&LinkDirection::on_hold_timeout, this) {}

LinkDirection::~LinkDirection() {
  sched_.disarm(timer_);
  sched_.disarm(hold_timer_);
  if (held_) rte_pktmbuf_free(held_);
  while (!flight_.empty()) rte_pktmbuf_free(flight_.pop().m);
}

WireTime LinkDirection::send(rte_mbuf* m) {
  const Nanos now = sched_.now();
  const WireTime depart = busy_ < WireTime{now, 0} ? WireTime{now, 0} : busy_;
  const uint64_t bytes = wire_bytes(ll_, rte_pktmbuf_pkt_len(m));
  busy_ = add_bits(depart, bytes * 8, params_.rate_bps);
  WireTime arrive = busy_;
  arrive.ns += params_.delay_ns;
  frames_sent.add();
  bytes_on_wire.add(bytes);
  if (tap_.on_frame || impair_.on_frame) [[unlikely]]
    run_stages(m, depart, arrive);
  else
    enqueue(m, arrive.ceil_ns());
  return arrive;
}

void LinkDirection::enqueue(rte_mbuf* m, Nanos at) {
  if (flight_.full()) {
    // Cannot happen while max_frames_in_flight holds (with room for the
    // impairments' extra frames); never silently reorder.
    overflow.add();
    rte_pktmbuf_free(m);
    return;
  }
  const bool was_empty = flight_.empty();
  // Only after set_timing shortened the delay, or behind a reordered frame,
  // could a frame catch up: arrivals never go back.
  last_arrive_ = std::max(at, last_arrive_);
  flight_.push(InFlight{m, last_arrive_});
  if (was_empty) sched_.arm(timer_, last_arrive_);
}

void LinkDirection::run_stages(rte_mbuf* m, const WireTime& depart, const WireTime& arrive) {
  tap_.pass(m, depart, arrive);  // the tap sees what was sent, whatever the wire does to it
  const WireVerdict v = impair_.pass(m, depart, arrive);
  const Nanos at = arrive.ceil_ns();
  if (v == WireVerdict::kLose) {
    lost.add();
    rte_pktmbuf_free(m);
    return;
  }
  if (v == WireVerdict::kHold && !held_) {
    // It waits for the next frame to pass it, or kHoldMax if none comes.
    held_ = m;
    held_at_ = at;
    sched_.arm(hold_timer_, at + kHoldMax);
    return;
  }
  enqueue(m, at);
  // A copy the in-flight FIFO has no room for is simply not made.
  if (v == WireVerdict::kDuplicate && !flight_.full()) {
    if (rte_mbuf* copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX)) {
      duplicated.add();
      enqueue(copy, at);
    }
  }
  if (held_) {
    reordered.add();
    sched_.disarm(hold_timer_);
    enqueue(std::exchange(held_, nullptr), at);
  }
}

void LinkDirection::on_hold_timeout(Timer& t, Nanos now) {
  auto& self = CtxTimer::owner<LinkDirection>(t);
  if (rte_mbuf* m = std::exchange(self.held_, nullptr)) self.enqueue(m, std::max(now, self.held_at_));
}

void LinkDirection::flush() {
  sched_.disarm(timer_);
  sched_.disarm(hold_timer_);
  if (rte_mbuf* m = std::exchange(held_, nullptr)) {
    rte_pktmbuf_free(m);
    lost.add();
  }
  while (!flight_.empty()) {
    rte_pktmbuf_free(flight_.pop().m);
    lost.add();
  }
  busy_ = WireTime{sched_.now(), 0};
}

void LinkDirection::set_timing(uint64_t rate_bps, Nanos delay_ns) {
  params_.rate_bps = rate_bps;
  params_.delay_ns = delay_ns;
  const uint32_t need = max_frames_in_flight(ll_, params_);
  if (need <= flight_.capacity()) return;
  Ring<InFlight> bigger(need);
  while (!flight_.empty()) bigger.push(flight_.pop());
  flight_ = std::move(bigger);
}

void LinkDirection::on_arrival(Timer& t, Nanos now) {
  auto& self = CtxTimer::owner<LinkDirection>(t);
  while (!self.flight_.empty() && self.flight_.front().arrive <= now) {
    rte_mbuf* m = self.flight_.pop().m;
    if (self.sink_.fn)
      self.sink_.fn(self.sink_.ctx, m);
    else
      rte_pktmbuf_free(m);  // unconnected far end: the frame falls off the wire
  }
  if (!self.flight_.empty()) self.sched_.arm(self.timer_, self.flight_.front().arrive);
}

namespace {
// No IBA or Linux counter names a wire; these follow the port counters' style.
constexpr CounterDef kLinkDefs[] = {
    VF_COUNTER(LinkDirectionSnapshot, frames_sent, "frames_sent", "link_frames_sent", kPackets,
               "frames put on this direction of the wire, lost ones included"),
    VF_COUNTER(LinkDirectionSnapshot, bytes_on_wire, "bytes_on_wire", "link_wire_bytes", kBytes,
               "bytes the frames occupied on the wire (Ethernet: with preamble, SFD, FCS and IFG)"),
    VF_COUNTER(LinkDirectionSnapshot, overflow, "overflow", "link_overflow_drops", kPackets,
               "frames dropped because too many were in flight (a sizing bug)"),
    VF_COUNTER(LinkDirectionSnapshot, lost, "lost", "link_lost_frames", kPackets,
               "frames lost on the wire: by the impairment stage (they still used their wire time) or on it when the link went down"),
    VF_COUNTER(LinkDirectionSnapshot, corrupted, "corrupted", "link_corrupted_frames", kPackets,
               "frames the impairment stage corrupted on the wire (they fail a CRC where one is checked)"),
    VF_COUNTER(LinkDirectionSnapshot, duplicated, "duplicated", "link_duplicated_frames", kPackets,
               "extra copies of frames the impairment stage duplicated on the wire"),
    VF_COUNTER(LinkDirectionSnapshot, reordered, "reordered", "link_reordered_frames", kPackets,
               "frames the impairment stage held back until the next frame had passed them"),
};
static_assert(valid_counter_table<LinkDirectionSnapshot>(kLinkDefs));
}  // namespace

const CounterTable kLinkDirectionCounters{kLinkDefs};

}  // namespace vf::dp
