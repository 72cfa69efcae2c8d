// Completer stage: what comes back to a requester -- ACK / RNR NAK / NAK
// (completer.cpp), READ responses and atomic ACKs (read_response.cpp) -- turned
// into send completions, retry bookkeeping and the two requester timers; and
// the flush of a failed send queue. It moves the SQ cursor back
// (send_queue.hpp) when the requester has to send again.
#pragma once

#include "device/engine/engine.hpp"
#include "device/engine/packet.hpp"

namespace vf::engine {

class Placement;

class Completer {
 public:
  Completer(Engine& eng, Placement& place) : eng_(eng), place_(place) {}

  // An ACK or NAK for `qp` (its earlier arrivals are placed).
  void on_ack(Qp&, const Pkt&);
  // A READ response or atomic ACK; the Rx contract of batches.hpp.
  Rx on_rd_atomic_response(Qp&, const Pkt&, rte_mbuf*, bool ordered);
  // Placement hook: a queued response was written (or failed, or its QP is
  // `dead`): advance, complete the WQE.
  void response_placed(RxPlacement&, bool dead);

  // Completes the head WQE if it is marked kError (the requester stopped there).
  bool complete_error_head(Qp&);
  void post_send_cqe(Qp&, const SendWqe&, ibv_wc_status);
  // BIND_MW / LOCAL_INV WQEs at the head whose place in PSN order is behind
  // snd_una: complete, in order (an ACK or a READ's responses acknowledge them).
  void retire_local_heads(Qp&);
  // SQD: raises IBV_EVENT_SQ_DRAINED once nothing is outstanding.
  void check_sq_drained(Qp&);
  // Completes every posted send WQE with WR_FLUSH_ERR, at most `budget`.
  unsigned flush_sq(Qp&, unsigned budget);

  static void retrans_timer_fired(vf::Timer&, Nanos);
  static void rnr_timer_fired(vf::Timer&, Nanos);
  // The QP's rate allows its next packet: the next poll() sends it.
  static void pace_timer_fired(vf::Timer&, Nanos);

 private:
  // Everything before `new_una` is acknowledged (ACK, NAK or a response's
  // implicit ACK) -- except READ/atomic WQEs, which only their responses
  // complete: the acknowledgement stops at one and re-issues it (its
  // responses were lost).
  void ack_progress(Qp&, uint32_t new_una);
  void complete_acked(Qp&, uint32_t last_acked_psn);
  // Completes the WQE at the head of the SQ with an error and fails the QP.
  void fail_head(Qp&, ibv_wc_status);
  void arm_retrans(Qp&);
  // Responses missing before snd_una's packet: go back to it once.
  void read_retry(Qp&);

  Engine& eng_;
  Placement& place_;
};

}  // namespace vf::engine
