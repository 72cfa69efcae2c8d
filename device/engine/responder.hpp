// Responder stage: request packets -> PSN checks, receive WQEs from the RQ or
// SRQ, the placement queue, receive completions and the ACK/NAK owed back
// (responder.cpp); RDMA WRITE targets (write_request.cpp); READ/atomic
// responder resources and their responses (rd_atomic_responder.cpp); refused
// requests, RC vs UC (request_reject.cpp); the receive WQE sources
// (recv_queue.cpp); UD receive (ud_receive.cpp).
#pragma once

#include <vector>

#include "device/engine/engine.hpp"
#include "device/engine/packet.hpp"

namespace vf::engine {

class Placement;

class Responder {
 public:
  Responder(Engine& eng, Placement& place) : eng_(eng), place_(place) {
    resp_list_.reserve(eng.cfg.limits.max_qp);
  }

  // An RC/UC request; the Rx contract of batches.hpp.
  Rx on_request(Qp&, const Pkt&, const RxMeta&, rte_mbuf* m, bool ordered);
  // A UD datagram for a QP that may receive; takes `m`.
  void ud_receive(Qp&, const Pkt&, const RxMeta&, rte_mbuf*);
  // Placement hooks: a queued request / datagram was written (or failed, or
  // its QP is `dead`): completions and the ACK owed.
  void request_placed(RxPlacement&, bool dead);
  void ud_placed(RxPlacement&, bool dead);

  // Sends the ACKs/NAKs owed (coalesced over the last receive burst), one
  // packet of `budget` each; true if any went out.
  bool send_owed(unsigned& budget);
  // Sends pending READ responses / atomic ACKs; returns packets sent.
  unsigned rd_atomic_respond(Qp&, unsigned budget);
  // The receive side of a QP in ERR: its RQ's WQEs, or the SRQ WQE it holds
  // and IBV_EVENT_QP_LAST_WQE_REACHED; at most `budget` completions/events.
  unsigned flush_rq(Qp&, unsigned budget);
  // The QP is going: it owes nothing any more.
  void forget(Qp&);

 private:
  void owe_response(Qp&, uint8_t syndrome, uint32_t psn, bool fatal);
  bool send_response(Qp&);
  // Whether an ACK/NAK for `psn` must wait for earlier READ/atomic responses.
  bool response_blocked(const Qp&, uint32_t psn) const;

  // ---- write_request.cpp, rd_atomic_responder.cpp
  Rx on_write_request(Qp&, const Pkt&, const RxMeta&, rte_mbuf*, bool ordered);
  Rx on_rd_atomic_request(Qp&, const Pkt&, bool ordered);
  void on_rd_atomic_duplicate(Qp&, const Pkt&);

  // ---- request_reject.cpp
  // A request the responder refuses. RC: NAK `nak_code`, the receive WQE in
  // progress completes with `status`, the QP goes to ERR and raises `event`
  // (0: none). UC: the message is silently dropped (IBA 9.8.4).
  Rx reject(Qp&, const Pkt&, bool ordered, uint8_t nak_code, ibv_wc_status status, int event);
  // The responder fails: NAK, the receive WQE `rq_index` (if `have_wqe`)
  // completes with `status`, the QP goes to ERR.
  void fail_receive(Qp&, uint32_t psn, uint8_t nak_code, ibv_wc_status, bool have_wqe,
                    uint64_t wr_id, uint32_t rq_index);
  // The same for the receive WQE in progress, with nothing queued for the QP.
  void fail_current(Qp&, uint32_t psn, uint8_t nak_code, ibv_wc_status);

  // ---- responder.cpp: receive WQEs
  // Copies the RQ WQE at rq_spec: 1 ok, 0 RQ empty, -1 failed (QP in error),
  // kFetchUnordered: hostile, and !ordered (nothing done).
  static constexpr int kFetchUnordered = -2;
  int recv_fetch(Qp&, uint32_t psn, bool ordered);
  // The receive WQE a SEND or WRITE_WITH_IMM needs (recv_fetch): true when
  // it is in rwqe; false with `out` what on_request returns (unordered,
  // failed, UC drop, or RNR NAK owed).
  bool take_recv_wqe(Qp&, const Pkt&, bool ordered, Rx& out);
  void post_recv_cqe(Qp&, uint64_t wr_id, ibv_wc_status, uint32_t byte_len, const Pkt*,
                     uint16_t slid, uint8_t sl);
  void post_ud_recv_cqe(Qp&, uint64_t wr_id, ibv_wc_status, uint32_t byte_len,
                        const RxPlacement*, uint16_t slid, uint8_t sl);

  // ---- recv_queue.cpp
  // Takes the WQE recv_peek() returned: an SRQ's consumer moves (and its
  // limit event may fire); an RQ's position moves when the message ends.
  void recv_take(Qp&);
  // A hostile producer index: an RQ breaks and its QP fails (QP_FATAL); an
  // SRQ fails (SRQ_ERR) with every QP on it.
  void recv_hostile(Qp&);
  void srq_fail(Srq&);

  Engine& eng_;
  Placement& place_;
  std::vector<Qp*> resp_list_;  // QPs owing a response
};

}  // namespace vf::engine
