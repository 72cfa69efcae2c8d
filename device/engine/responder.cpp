// Responder: request packets -> PSN check, duplicate and gap handling, RQ
// consumption, placement into the app with process_vm_writev, receive
// completions, and the ACK/NAK owed back.
//
// Placement is batched: an in-order request whose target is checked (RQ WQE,
// keys, length) is *accepted* -- PSN, offset and RQ position move on -- and
// queued with its mbuf; placement.cpp later writes the whole queue with one
// process_vm_writev per app and only then completes receive WQEs and owes
// ACKs, in arrival order. Any branch here that would answer the requester or
// complete a WQE first needs the queue placed (IBA: an ACK, or a NAK, says
// everything before it is in memory), so with packets queued it returns
// kUnordered untouched and receive() places the queue and offers it again.
//
// ACK coalescing: the requester asks for an ACK (AckReq) on the last packet of
// every message and every kAckReqEvery packets. The responder does not answer
// each such packet at once: it records the newest ACK owed per QP (one slot --
// ACKs are cumulative) and poll() sends it after the receive burst, so N
// messages that arrive back to back cost one ACK. An ACK is forced out
// immediately after kAckCoalesceMax owed ones, so a long burst still lets the
// requester's window move. NAKs (sequence, RNR, fatal) go out at once; a NAK
// for PSN p also acknowledges everything before p, so it replaces the ACK
// owed, and an ACK never replaces a NAK for a later PSN.
#include <cstring>

#include "device/engine/cqe.hpp"
#include "device/engine/opcodes.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/recv_queue.hpp"
#include "device/engine/responder.hpp"

namespace vf::engine {

using namespace vf::wire;

void Responder::owe_response(Qp& qp, uint8_t syndrome, uint32_t psn, bool fatal) {
  if (qp.type != IBV_QPT_RC) return;  // UC: no acknowledgements at all
  if (qp.resp_fatal) return;  // the connection is dead after a fatal NAK
  const bool is_ack = syndrome_type(syndrome) == AckType::kAck;
  if (qp.resp_pending && is_ack && syndrome_type(qp.resp_syndrome) != AckType::kAck &&
      psn_diff(psn, qp.resp_psn) < 0)
    return;  // keep the unsent NAK: it says more than this ACK
  qp.resp_pending = true;
  qp.resp_fatal = fatal;
  qp.resp_syndrome = syndrome;
  qp.resp_psn = psn & kPsnMask;
  qp.resp_msn = qp.msn;
  if (!qp.on_resp_list) {
    qp.on_resp_list = true;
    resp_list_.push_back(&qp);
  }
  if (!is_ack || ++qp.acks_owed >= kAckCoalesceMax) send_response(qp);
}

bool Responder::send_owed(unsigned& budget) {
  bool did = false;
  size_t keep = 0;
  for (size_t i = 0; i < resp_list_.size(); ++i) {
    Qp* qp = resp_list_[i];
    if (budget && send_response(*qp)) {
      did = true;
      --budget;
      qp->on_resp_list = false;
    } else if (qp->resp_pending) {
      resp_list_[keep++] = qp;  // stalled on the port: retry next poll
    } else {
      qp->on_resp_list = false;
    }
  }
  resp_list_.resize(keep);
  return did;
}

void Responder::forget(Qp& qp) {
  if (!qp.on_resp_list) return;
  for (size_t i = 0; i < resp_list_.size(); ++i)
    if (resp_list_[i] == &qp) {
      resp_list_.erase(resp_list_.begin() + long(i));
      break;
    }
  qp.on_resp_list = false;
}

bool Responder::send_response(Qp& qp) {
  if (!qp.resp_pending) return false;
  // After the READ responses / atomic ACKs of earlier PSNs, never before.
  if (qp.res_pending && response_blocked(qp, qp.resp_psn)) return false;
  if (!eng_.io.can_transmit(qp.route)) {
    ++eng_.ctr.tx_stalls;
    return false;
  }
  rte_mbuf* m = eng_.io.alloc();
  if (!m) {
    ++eng_.ctr.tx_stalls;
    return false;
  }
  constexpr uint8_t opc = opcode(Transport::kRC, kAck);
  constexpr unsigned total = kBthLen + layout(opc).payload;
  uint8_t* b = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, total));
  if (!b) {
    rte_pktmbuf_free(m);
    return false;
  }
  put_bth(b, opc, false, 0, qp.attr.dest_qp_num, false, qp.resp_psn, qp.pkey);
  aeth_set(b + kBthLen + layout(opc).aeth, qp.resp_syndrome, qp.resp_msn);
  switch (syndrome_type(qp.resp_syndrome)) {
    case AckType::kAck: ++eng_.ctr.acks_sent; break;
    case AckType::kRnrNak: ++eng_.ctr.rnr_naks_sent; break;
    default:
      if (syndrome_value(qp.resp_syndrome) == kNakPsnSeqError)
        ++eng_.ctr.seq_naks_sent;
      else
        ++eng_.ctr.other_naks_sent;
  }
  ++eng_.ctr.tx_packets;
  eng_.ctr.tx_bytes += total;
  eng_.io.transmit(m, qp.route);
  qp.resp_pending = false;
  qp.acks_owed = 0;
  return true;
}

void Responder::post_recv_cqe(Qp& qp, uint64_t wr_id, ibv_wc_status status, uint32_t byte_len,
                              const Pkt* p, uint16_t slid, uint8_t sl) {
  vhca_cqe cqe = recv_cqe(qp, wr_id, status, byte_len, slid, sl);
  // RDMA WRITE with immediate consumes a receive WQE: RECV_RDMA_WITH_IMM.
  if (p && (p->flags & kIsWrite)) cqe.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
  cqe.src_qp = qp.attr.dest_qp_num;
  if (p && p->imm && (p->flags & kHasImm)) {
    cqe.wc_flags |= IBV_WC_WITH_IMM;
    std::memcpy(&cqe.imm_data, p->imm, 4);  // network order, as the sender gave it
  } else if (p && p->imm && (p->flags & kHasIeth)) {
    uint32_t key;  // ibv_wc's invalidated_rkey shares imm_data, in host order
    std::memcpy(&key, p->imm, 4);
    cqe.wc_flags |= IBV_WC_WITH_INV;
    cqe.imm_data = be32toh(key);
  }
  if (!eng_.cq_post(*qp.rcq, cqe, p && p->se)) eng_.qp_to_error(qp, true);
}

namespace {

// The RQ WQE's pieces for [off, off+len) (recv_queue.cpp checks each).
bool gather_recv(const Engine& h, const Qp& qp, uint64_t off, uint32_t len, IoList& iol) {
  return recv_gather(h, qp, qp.rwqe.w, off, len, iol);
}

}  // namespace

void Responder::fail_receive(Qp& qp, uint32_t psn, uint8_t nak_code, ibv_wc_status status,
                             bool have_wqe, uint64_t wr_id, uint32_t rq_index) {
  owe_response(qp, make_syndrome(AckType::kNak, nak_code), psn, true);
  if (have_wqe) {
    retire_rq_slots(qp, rq_index + 1);
    post_recv_cqe(qp, wr_id, status, 0, nullptr, 0, 0);
  }
  // Nothing after the failed WQE was accepted for good. An SRQ WQE cannot go
  // back to the SRQ: unless it is the one that failed, it stays held and
  // the QP's flush completes it (a failed WRITE took none, so the held one stays).
  if (!qp.srq || (have_wqe && qp.rq_spec == rq_index)) qp.rwqe_valid = false;
  qp.rq_spec = qp.rq_cons;
  eng_.qp_to_error(qp, false);
}

void Responder::fail_current(Qp& qp, uint32_t psn, uint8_t nak_code, ibv_wc_status status) {
  fail_receive(qp, psn, nak_code, status, qp.rwqe_valid, qp.rwqe.w.wr_id, qp.rq_spec);
}

int Responder::recv_fetch(Qp& qp, uint32_t psn, bool ordered) {
  switch (recv_peek(qp, qp.rwqe.w)) {
    case RecvPeek::kEmpty: return 0;
    case RecvPeek::kBroken:
      if (!qp.srq) return 0;  // (the QP already failed with its RQ)
      // An SRQ that failed earlier (a QP created on it since): no receives.
      if (!ordered) return kFetchUnordered;
      owe_response(qp, make_syndrome(AckType::kNak, kNakRemoteOperationalError), psn, true);
      eng_.qp_to_error(qp, false);
      return -1;
    case RecvPeek::kHostile:
      if (!ordered) return kFetchUnordered;
      owe_response(qp, make_syndrome(AckType::kNak, kNakRemoteOperationalError), psn, true);
      recv_hostile(qp);
      eng_.qp_to_error(qp, false);  // (an SRQ's failure already did)
      return -1;
    case RecvPeek::kOk: break;
  }
  const vhca_recv_wqe& w = qp.rwqe.w;
  if (w.num_sge > recv_max_sge(qp) || w.num_sge > VHCA_MAX_SGE) {
    if (!ordered) return kFetchUnordered;
    recv_take(qp);  // an SRQ WQE is this QP's now: it completes in error here
    qp.rwqe_valid = true;
    ++eng_.ctr.hostile_ring_events;
    fail_current(qp, psn, kNakRemoteOperationalError, IBV_WC_LOC_QP_OP_ERR);
    return -1;
  }
  recv_take(qp);
  qp.rwqe_valid = true;
  uint64_t total = 0;
  for (unsigned i = 0; i < w.num_sge; ++i) total += w.sge[i].length;
  qp.rwqe.length = total;
  return 1;
}

bool Responder::take_recv_wqe(Qp& qp, const Pkt& p, bool ordered, Rx& out) {
  const int r = recv_fetch(qp, p.psn, ordered);
  if (r == 1) return true;
  if (r == kFetchUnordered) {
    out = Rx::kUnordered;
  } else if (r < 0) {
    out = Rx::kDone;
  } else if (qp.type == IBV_QPT_UC) {
    out = reject(qp, p, ordered, 0, IBV_WC_SUCCESS, 0);  // UC: no RNR, the message drops (IBA 9.8)
  } else if (!ordered) {
    out = Rx::kUnordered;
  } else {
    // Receiver not ready: tell the requester to come back later.
    qp.nak_outstanding = true;
    owe_response(qp, make_syndrome(AckType::kRnrNak, qp.attr.min_rnr_timer), p.psn, false);
    out = Rx::kDone;
  }
  return false;
}

Rx Responder::on_request(Qp& qp, const Pkt& p, const RxMeta& meta, rte_mbuf* m,
                                    bool ordered) {
  if (qp.state == IBV_QPS_RTR && !qp.comm_est_reported) {
    if (!ordered) return Rx::kUnordered;
    qp.comm_est_reported = true;
    eng_.async_qp_event(qp, IBV_EVENT_COMM_EST);
  }
  const uint16_t f = p.flags;
  const bool first = f & kIsFirst, last = f & kIsLast;
  if (qp.type == IBV_QPT_UC) {
    // IBA 9.8: no ACK/NAK on UC. A PSN error drops the message in progress
    // and the packet; the next First/Only starts afresh at its own PSN, into
    // the same receive WQE (it was never completed).
    if (first) {
      qp.in_message = qp.in_write = false;
      qp.drop_msg = false;
      qp.epsn = p.psn;
    } else if (qp.drop_msg || p.psn != qp.epsn) {
      qp.drop_msg = true;
      qp.in_message = qp.in_write = false;
      ++eng_.ctr.rx_dropped;
      return Rx::kDone;
    }
  }
  const int32_t d = psn_diff(p.psn, qp.epsn);
  if (d > 0) {
    // A gap: one NAK, then silence until the expected PSN comes back.
    if (!qp.nak_outstanding) {
      if (!ordered) return Rx::kUnordered;
      qp.nak_outstanding = true;
      owe_response(qp, make_syndrome(AckType::kNak, kNakPsnSeqError), qp.epsn, false);
    }
    ++eng_.ctr.out_of_sequence;
    return Rx::kDone;
  }
  if (d < 0) {
    // Duplicate (our ACK was lost or is late): acknowledge again, drop it.
    if (!ordered) return Rx::kUnordered;
    ++eng_.ctr.duplicate_requests;
    // A duplicate READ/atomic is answered from its responder resource.
    if (f & (kIsRead | kIsAtomic)) {
      on_rd_atomic_duplicate(qp, p);
      return Rx::kDone;
    }
    owe_response(qp, make_syndrome(AckType::kAck, kAethCreditsInvalid), qp.epsn - 1, false);
    return Rx::kDone;
  }
  qp.nak_outstanding = false;  // (idempotent: safe to redo when offered again)
  if (f & (kIsRead | kIsAtomic)) return on_rd_atomic_request(qp, p, ordered);
  if (f & kIsWrite) return on_write_request(qp, p, meta, m, ordered);
  // SEND.
  if (qp.in_message == first || (!first && qp.in_write) || (!last && p.paylen != qp.mtu) ||
      p.paylen > qp.mtu)
    return reject(qp, p, ordered, kNakInvalidRequest, IBV_WC_REM_INV_REQ_ERR, 0);
  // With Invalidate (its Last/Only packet): the window goes once everything
  // before it has landed.
  if ((f & kHasIeth) && !ordered) return Rx::kUnordered;
  Rx early;
  if (first && !qp.rwqe_valid && !take_recv_wqe(qp, p, ordered, early)) return early;
  const uint64_t offset = first ? 0 : qp.rcv_offset;
  if (offset + p.paylen > qp.rwqe.length)
    return reject(qp, p, ordered, kNakInvalidRequest, IBV_WC_LOC_LEN_ERR, 0);
  RxPlacement& e = eng_.rxq.q[eng_.rxq.n];
  IoList iol(e.iov, VHCA_MAX_SGE);
  if (p.paylen && !gather_recv(eng_, qp, offset, p.paylen, iol))
    return reject(qp, p, ordered, kNakRemoteOperationalError, IBV_WC_LOC_PROT_ERR, 0);
  if (f & kHasIeth) {
    // Only now, so an RNR NAK's retry does not invalidate twice. A key that
    // names no window this QP may invalidate: Invalid Request (IBA 9.4.1.1,
    // rxe's class J).
    uint32_t key;
    std::memcpy(&key, p.imm, 4);
    if (!eng_.invalidate(qp, be32toh(key), true))
      return reject(qp, p, ordered, kNakInvalidRequest, IBV_WC_REM_INV_REQ_ERR, 0);
  }
  // Accepted. The receive completion and the ACK wait for the placement.
  e.qp = &qp;
  e.m = m;
  e.p = p;
  e.wr_id = qp.rwqe.w.wr_id;
  e.rq_index = qp.rq_spec;
  e.byte_len = uint32_t(offset + p.paylen);
  e.slid = meta.slid;
  e.sl = meta.sl;
  e.niov = uint8_t(iol.n);
  e.has_wqe = true;
  e.state = RxPlacement::kWaiting;
  ++eng_.rxq.n;
  ++qp.rx_pending;
  if (last || p.ackreq) eng_.rxq.due = true;
  qp.rcv_offset = offset + p.paylen;
  qp.epsn = (qp.epsn + 1) & kPsnMask;
  qp.in_write = false;
  if (last) {
    qp.in_message = false;
    qp.rwqe_valid = false;
    ++qp.rq_spec;
  } else {
    qp.in_message = true;
  }
  return Rx::kQueued;
}

void Responder::request_placed(RxPlacement& e, bool dead) {
  Qp& qp = *e.qp;
  const uint64_t gen = eng_.rxq.gen;
  if (dead) {
    qp.rx_dead_gen = gen;
    ++eng_.ctr.rx_dropped;  // arrived after its QP failed: dropped on arrival before
    // An SRQ WQE this message took is the QP's: it completes, flushed.
    if (qp.srq && e.has_wqe && (e.p.flags & kIsLast) && int32_t(e.rq_index - qp.rq_cons) >= 0) {
      retire_rq_slots(qp, e.rq_index + 1);
      post_recv_cqe(qp, e.wr_id, IBV_WC_WR_FLUSH_ERR, 0, nullptr, 0, 0);
    }
    return;
  }
  if (e.state != RxPlacement::kPlaced) {
    ++eng_.ctr.dma_errors;
    fail_receive(qp, e.p.psn, kNakRemoteOperationalError, IBV_WC_LOC_PROT_ERR, e.has_wqe, e.wr_id,
                 e.rq_index);
    qp.rx_dead_gen = gen;
    return;
  }
  if (e.p.flags & kIsLast) qp.msn = (qp.msn + 1) & 0xFFFFFF;
  // A message that consumed a receive WQE (SEND, WRITE with immediate).
  if ((e.p.flags & kIsLast) && e.has_wqe) {
    retire_rq_slots(qp, e.rq_index + 1);
    post_recv_cqe(qp, e.wr_id, IBV_WC_SUCCESS, e.byte_len, &e.p, e.slid, e.sl);
    if (qp.state == IBV_QPS_ERR) {
      // The CQ overran: what was accepted after this WQE never happened.
      // (An SRQ WQE already taken for a later message stays held: the QP's
      // flush completes it.)
      if (!qp.srq) qp.rwqe_valid = false;
      qp.rq_spec = qp.rq_cons;
      qp.rx_dead_gen = gen;
    }
  }
  if (e.p.ackreq && qp.rx_dead_gen != gen)
    owe_response(qp, make_syndrome(AckType::kAck, kAethCreditsInvalid), e.p.psn, false);
}

}  // namespace vf::engine
