// Receive WQE sources (recv_queue.hpp): peeking at an RQ or an SRQ, taking a
// WQE from an SRQ (its consumer index and limit event), and what a hostile
// producer index does to each; and the receive side of a QP in ERR (flush_rq).
#include "device/engine/recv_queue.hpp"

#include <cstring>

#include "device/engine/placement.hpp"
#include "device/engine/responder.hpp"

namespace vf::engine {

RecvPeek recv_peek(const Qp& qp, vhca_recv_wqe& out) {
  if (qp.srq) {
    const Srq& s = *qp.srq;
    if (s.error) return RecvPeek::kBroken;
    const uint32_t avail = s.ring.load_producer() - s.cons;
    if (avail == 0) return RecvPeek::kEmpty;
    if (avail > s.ring.entries()) return RecvPeek::kHostile;
    std::memcpy(&out, s.ring.slot(s.cons), sizeof(out));
    return RecvPeek::kOk;
  }
  if (qp.rq_broken) return RecvPeek::kBroken;
  // The app may have posted up to a ring's worth past what we published as
  // consumed (rq_cons); rq_spec may already be ahead of that.
  const uint32_t avail = qp.rq.load_producer() - qp.rq_cons, taken = qp.rq_spec - qp.rq_cons;
  if (avail == taken) return RecvPeek::kEmpty;
  if (avail > qp.rq.entries() || avail < taken) return RecvPeek::kHostile;
  std::memcpy(&out, qp.rq.slot(qp.rq_spec), sizeof(out));
  return RecvPeek::kOk;
}

bool recv_gather(const Engine& h, const Qp& qp, const vhca_recv_wqe& w, uint64_t off,
                 uint32_t len, IoList& iol) {
  return h.collect_sges(w.sge, w.num_sge, qp.client, recv_pd(qp), IBV_ACCESS_LOCAL_WRITE, off,
                        len, iol);
}

void Responder::recv_take(Qp& qp) {
  if (!qp.srq) return;  // the RQ position (rq_spec) moves when the message ends
  Srq& s = *qp.srq;
  s.ring.store_consumer(++s.cons);
  // IBA 10.2.9.3 / 11.5.2.2: once armed, the event fires when fewer than
  // srq_limit WQEs remain, and the SRQ is disarmed until the next modify.
  // Checked as WQEs are taken (as rxe does), so arming below the limit fires
  // at the next one.
  if (s.armed && s.ring.load_producer() - s.cons < s.limit) {
    s.armed = false;
    s.limit = 0;
    ++s.events_reported;
    eng_.async_event(s.client, IBV_EVENT_SRQ_LIMIT_REACHED, s.handle);
  }
}

void Responder::recv_hostile(Qp& qp) {
  ++eng_.ctr.hostile_ring_events;
  if (qp.srq) {
    srq_fail(*qp.srq);
    return;
  }
  qp.rq_broken = true;
  eng_.qp_to_error(qp, true);
}

void Responder::srq_fail(Srq& s) {
  if (s.error) return;
  s.error = true;
  ++s.events_reported;
  eng_.async_event(s.client, IBV_EVENT_SRQ_ERR, s.handle);
  // Every QP on it loses its receive queue: each flushes the WQEs it holds
  // and reports its last WQE (flush_rq).
  eng_.objs.of<Qp>().for_each([&](Qp& q) {
    // RESET/INIT QPs are not running (and RESET->ERR is no transition):
    // they meet the broken SRQ at their first receive.
    if (q.srq == &s && q.state >= IBV_QPS_RTR && q.state != IBV_QPS_ERR) eng_.qp_to_error(q, false);
  });
}

unsigned Responder::flush_rq(Qp& qp, unsigned budget) {
  unsigned n = 0;
  if (qp.srq) {
    // The SRQ stays with the other QPs: only what this QP took completes,
    // then IBA 11.6.3 / 10.3.1: the last WQE has been reached (once).
    if (qp.rx_pending) place_.flush();
    if (n < budget && qp.rwqe_valid) {
      qp.rwqe_valid = false;
      retire_rq_slots(qp, qp.rq_spec + 1);
      qp.rq_spec = qp.rq_cons;
      post_recv_cqe(qp, qp.rwqe.w.wr_id, IBV_WC_WR_FLUSH_ERR, 0, nullptr, 0, 0);
      ++n;
    }
    if (n < budget && !qp.rwqe_valid && !qp.last_wqe_reported) {
      qp.last_wqe_reported = true;
      eng_.async_qp_event(qp, IBV_EVENT_QP_LAST_WQE_REACHED);
      ++n;
    }
    return n;
  }
  if (!qp.rq_broken) {
    const uint32_t prod = qp.rq.load_producer();
    if (prod - qp.rq_cons > qp.rq.entries()) {
      qp.rq_broken = true;
      ++eng_.ctr.hostile_ring_events;
    } else {
      while (n < budget && qp.rq_cons != prod) {
        // In ERR nothing is queued for placement: rq_spec == rq_cons.
        if (!qp.rwqe_valid) std::memcpy(&qp.rwqe.w, qp.rq.slot(qp.rq_cons), sizeof(qp.rwqe.w));
        qp.rwqe_valid = false;
        retire_rq_slots(qp, qp.rq_cons + 1);
        qp.rq_spec = qp.rq_cons;
        post_recv_cqe(qp, qp.rwqe.w.wr_id, IBV_WC_WR_FLUSH_ERR, 0, nullptr, 0, 0);
        ++n;
      }
    }
  }
  return n;
}

}  // namespace vf::engine
