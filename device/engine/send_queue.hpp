// The send queue as the requester and the completer both see it: the
// engine's shadow copies of the WQEs (SendWqe, fetched once), indexed by the
// free-running SQ indices, and the one cursor both move -- where the
// requester sends next (sq_next, next_offset, psn). The completer moves it
// back for go-back-N, RNR retry and READ re-issue; the requester moves it on.
#pragma once

#include <cstdint>

#include "dataplane/wire/transport.hpp"
#include "device/engine/qp.hpp"

namespace vf::engine {

// The shadow WQE at free-running SQ index `i`.
inline SendWqe& sq_wqe(Qp& qp, uint32_t i) { return qp.swqe[i & qp.sq.mask()]; }
inline const SendWqe& sq_wqe(const Qp& qp, uint32_t i) { return qp.swqe[i & qp.sq.mask()]; }

// Positions the requester at PSN `p`: inside the started WQE whose range
// holds it (at that packet's offset), else at the first WQE not yet started.
inline void sq_seek(Qp& qp, uint32_t p) {
  using vf::wire::kPsnMask;
  using vf::wire::psn_diff;
  for (uint32_t i = qp.sq_cons; i != qp.sq_started; ++i) {
    const SendWqe& s = sq_wqe(qp, i);
    if (!s.ranged) break;
    if (psn_diff(p, s.first_psn) >= 0 && psn_diff(p, s.last_psn) <= 0) {
      qp.sq_next = i;
      qp.next_offset = uint64_t(uint32_t(p - s.first_psn) & kPsnMask) * s.pmtu;
      qp.psn = p & kPsnMask;
      return;
    }
  }
  qp.sq_next = qp.sq_started;
  qp.next_offset = 0;
  qp.psn = p & kPsnMask;
}

// A work-queue slot goes back to the app before the completion that reports
// it: an app that polls the CQE and posts again must find the room (perftest
// and vfabric-bench keep their queues exactly full).
inline void retire_sq_slot(Qp& qp) { qp.sq.store_consumer(++qp.sq_cons); }

}  // namespace vf::engine
