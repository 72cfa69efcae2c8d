// Where a QP's receive WQEs come from: its own RQ ring, or the shared receive
// queue it was created with. The responders (RC in responder.cpp, UD in
// ud_receive.cpp) see one interface: peek at the next WQE (a copy, checked
// indices, no side effect), then take it.
//
// The two differ in when a slot goes back to the app. An RQ slot is retired
// when its WQE completes (retire_rq_slots), so a failure can roll the QP back
// to its last completion. An SRQ WQE belongs to the QP that took it from the
// moment it is copied -- other QPs take the next ones -- so the SRQ consumer
// moves at once, and a QP that fails completes the WQEs it holds itself.
#pragma once

#include <cstdint>

#include "device/engine/engine.hpp"

namespace vf::engine {

enum class RecvPeek : uint8_t {
  kOk,       // `out` holds the next WQE, copied once and range-checked
  kEmpty,    // nothing posted
  kHostile,  // the producer index is impossible (nothing was changed)
  kBroken,   // the queue failed earlier: treated as empty, never read again
};

// The memory of receive WQEs is checked against this PD: the SRQ's when the
// QP has one (IBA 10.2.9: the SRQ's PD governs its WQEs' L_Keys).
inline Pd* recv_pd(const Qp& qp) { return qp.srq ? qp.srq->pd : qp.pd; }
inline uint32_t recv_max_sge(const Qp& qp) { return qp.srq ? qp.srq->max_sge : qp.cap.max_recv_sge; }

// On an SRQ QP rq_cons/rq_spec only count the WQEs the QP took: the SRQ's
// slots went back when they were taken.
inline void retire_rq_slots(Qp& qp, uint32_t new_consumer) {
  qp.rq_cons = new_consumer;
  if (!qp.srq) qp.rq.store_consumer(new_consumer);
}

// Copies the WQE the QP would consume next into `out` (for an RQ the one at
// rq_spec). `out.num_sge` is not checked here.
RecvPeek recv_peek(const Qp&, vhca_recv_wqe& out);

// The pieces of receive WQE `w` for its bytes [off, off+len), each checked:
// key of this client and of recv_pd(), local write access, inside the region.
bool recv_gather(const Engine&, const Qp&, const vhca_recv_wqe& w, uint64_t off, uint32_t len,
                 IoList& iol);

}  // namespace vf::engine
