// Receive WQE sources (recv_queue.hpp): peeking at an RQ or an SRQ, taking a
// WQE from an SRQ (its consumer index and limit event), and what a hostile
// producer index does to each.
#include "device/engine/recv_queue.hpp"

#include <cstring>

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

bool recv_gather(const Hca::Impl& h, const Qp& qp, const vhca_recv_wqe& w, uint64_t off,
                 uint32_t len, IoList& iol) {
  return h.collect_sges(w.sge, w.num_sge, qp.client, recv_pd(qp), IBV_ACCESS_LOCAL_WRITE, off,
                        len, iol);
}

void Hca::Impl::recv_take(Qp& qp) {
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
    async_event(s.client, IBV_EVENT_SRQ_LIMIT_REACHED, s.handle);
  }
}

void Hca::Impl::recv_hostile(Qp& qp) {
  ++ctr_.hostile_ring_events;
  if (qp.srq) {
    srq_fail(*qp.srq);
    return;
  }
  qp.rq_broken = true;
  qp_to_error(qp, true);
}

void Hca::Impl::srq_fail(Srq& s) {
  if (s.error) return;
  s.error = true;
  ++s.events_reported;
  async_event(s.client, IBV_EVENT_SRQ_ERR, s.handle);
  // Every QP on it loses its receive queue: each flushes the WQEs it holds
  // and reports its last WQE (flush()).
  objs_.of<Qp>().for_each([&](Qp& q) {
    // RESET/INIT QPs are not running (and RESET->ERR is no transition):
    // they meet the broken SRQ at their first receive.
    if (q.srq == &s && q.state >= IBV_QPS_RTR && q.state != IBV_QPS_ERR) qp_to_error(q, false);
  });
}

}  // namespace vf::engine
