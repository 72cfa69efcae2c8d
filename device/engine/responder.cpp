// Responder: request packets -> PSN check, duplicate and gap handling, RQ
// consumption, placement into the app with process_vm_writev, receive
// completions, and the ACK/NAK owed back.
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

#include "device/engine/hca_impl.hpp"
#include "device/engine/opcodes.hpp"

namespace vf::engine {

using namespace vf::wire;

void Hca::Impl::owe_response(Qp& qp, uint8_t syndrome, uint32_t psn, bool fatal) {
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

bool Hca::Impl::send_response(Qp& qp) {
  if (!qp.resp_pending) return false;
  if (!io_.can_transmit()) {
    ++ctr_.tx_stalls;
    return false;
  }
  rte_mbuf* m = io_.alloc();
  if (!m) {
    ++ctr_.tx_stalls;
    return false;
  }
  uint8_t* b = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kBthLen + kAethLen));
  if (!b) {
    rte_pktmbuf_free(m);
    return false;
  }
  put_bth(b, opcode(Transport::kRC, kAck), false, 0, qp.attr.dest_qp_num, false, qp.resp_psn);
  aeth_set(b + kBthLen, qp.resp_syndrome, qp.resp_msn);
  switch (syndrome_type(qp.resp_syndrome)) {
    case AckType::kAck: ++ctr_.acks_sent; break;
    case AckType::kRnrNak: ++ctr_.rnr_naks_sent; break;
    default:
      if (syndrome_value(qp.resp_syndrome) == kNakPsnSeqError)
        ++ctr_.seq_naks_sent;
      else
        ++ctr_.other_naks_sent;
  }
  ++ctr_.tx_packets;
  ctr_.tx_bytes += kBthLen + kAethLen;
  io_.transmit(m, qp.attr.ah_attr);
  qp.resp_pending = false;
  qp.acks_owed = 0;
  return true;
}

void Hca::Impl::post_recv_cqe(Qp& qp, ibv_wc_status status, uint32_t byte_len, const Pkt* p,
                              const RxMeta* meta) {
  vhca_cqe cqe;
  std::memset(&cqe, 0, sizeof(cqe));
  cqe.wr_id = qp.rwqe.w.wr_id;
  cqe.status = status;
  cqe.opcode = IBV_WC_RECV;
  cqe.byte_len = byte_len;
  cqe.qp_num = qp.qpn;
  cqe.src_qp = qp.attr.dest_qp_num;
  if (p && p->imm && (p->flags & kHasImm)) {
    cqe.wc_flags |= IBV_WC_WITH_IMM;
    std::memcpy(&cqe.imm_data, p->imm, 4);  // network order, as the sender gave it
  }
  if (meta) {
    cqe.slid = meta->slid;
    cqe.sl = meta->sl;
  }
  if (!cq_post(*qp.rcq, cqe, p && p->se)) qp_to_error(qp, true);
}

namespace {

// The RQ WQE's pieces for [off, off+len), each checked: key of this client and
// PD, local write access, inside the region.
bool gather_recv(const Hca::Impl& h, const Qp& qp, uint64_t off, uint32_t len, IoList& iol) {
  uint64_t pos = 0;
  const vhca_recv_wqe& w = qp.rwqe.w;
  for (unsigned i = 0; i < w.num_sge && len; ++i) {
    const vhca_sge& g = w.sge[i];
    if (off >= pos + g.length) {
      pos += g.length;
      continue;
    }
    const Mr* mr = h.mr_by_lkey(g.lkey);
    if (!mr || mr->client != qp.client || mr->pd != qp.pd ||
        !(mr->access & IBV_ACCESS_LOCAL_WRITE) || !mr->contains(g.addr, g.length))
      return false;
    const uint64_t in = off - pos;
    const uint32_t take = uint32_t(g.length - in < len ? g.length - in : len);
    iol.add(g.addr + in, take);
    off += take;
    len -= take;
    pos += g.length;
  }
  return len == 0;
}

}  // namespace

// Fails the responder side: NAK to the requester, the receive WQE in progress
// (if any) completes with `status`, the QP goes to ERR.
static void responder_fail(Hca::Impl& h, Qp& qp, uint32_t psn, uint8_t nak_code,
                           ibv_wc_status status) {
  h.owe_response(qp, make_syndrome(AckType::kNak, nak_code), psn, true);
  if (qp.rwqe_valid) {
    h.post_recv_cqe(qp, status, 0, nullptr, nullptr);
    qp.rwqe_valid = false;
    ++qp.rq_cons;
    qp.rq.store_consumer(qp.rq_cons);
  }
  h.qp_to_error(qp, false);
}

int Hca::Impl::recv_fetch(Qp& qp, uint32_t psn) {
  if (qp.rq_broken) return 0;
  const uint32_t prod = qp.rq.load_producer();
  if (prod == qp.rq_cons) return 0;
  if (prod - qp.rq_cons > qp.rq.entries()) {
    ++ctr_.hostile_ring_events;
    qp.rq_broken = true;
    owe_response(qp, make_syndrome(AckType::kNak, kNakRemoteOperationalError), psn, true);
    qp_to_error(qp, true);
    return -1;
  }
  std::memcpy(&qp.rwqe.w, qp.rq.slot(qp.rq_cons), sizeof(qp.rwqe.w));
  qp.rwqe_valid = true;
  const vhca_recv_wqe& w = qp.rwqe.w;
  if (w.num_sge > qp.cap.max_recv_sge || w.num_sge > VHCA_MAX_SGE) {
    ++ctr_.hostile_ring_events;
    responder_fail(*this, qp, psn, kNakRemoteOperationalError, IBV_WC_LOC_QP_OP_ERR);
    return -1;
  }
  uint64_t total = 0;
  for (unsigned i = 0; i < w.num_sge; ++i) total += w.sge[i].length;
  qp.rwqe.length = total;
  return 1;
}

void Hca::Impl::on_request(Qp& qp, const Pkt& p, const RxMeta& meta) {
  if (qp.state == IBV_QPS_RTR && !qp.comm_est_reported) {
    qp.comm_est_reported = true;
    async_qp_event(qp, IBV_EVENT_COMM_EST);
  }
  const int32_t d = psn_diff(p.psn, qp.epsn);
  if (d > 0) {
    // A gap: one NAK, then silence until the expected PSN comes back.
    if (!qp.nak_outstanding) {
      qp.nak_outstanding = true;
      owe_response(qp, make_syndrome(AckType::kNak, kNakPsnSeqError), qp.epsn, false);
    }
    return;
  }
  if (d < 0) {
    // Duplicate (our ACK was lost or is late): acknowledge again, drop it.
    ++ctr_.duplicate_requests;
    owe_response(qp, make_syndrome(AckType::kAck, kAethCreditsInvalid), qp.epsn - 1, false);
    return;
  }
  qp.nak_outstanding = false;
  const uint16_t f = p.flags;
  const bool first = f & kIsFirst, last = f & kIsLast;
  // Only SEND for now; WRITE/READ/atomics and SEND with invalidate: next issue.
  if (!(f & kIsSend) || (f & kHasIeth) || qp.in_message == first ||
      (!last && p.paylen != qp.mtu) || p.paylen > qp.mtu) {
    responder_fail(*this, qp, p.psn, kNakInvalidRequest, IBV_WC_REM_INV_REQ_ERR);
    return;
  }
  if (first) {
    if (!qp.rwqe_valid) {
      const int r = recv_fetch(qp, p.psn);
      if (r < 0) return;
      if (r == 0) {
        // Receiver not ready: tell the requester to come back later.
        qp.nak_outstanding = true;
        owe_response(qp, make_syndrome(AckType::kRnrNak, qp.attr.min_rnr_timer), p.psn, false);
        return;
      }
    }
    qp.rcv_offset = 0;
  }
  if (qp.rcv_offset + p.paylen > qp.rwqe.length) {
    responder_fail(*this, qp, p.psn, kNakInvalidRequest, IBV_WC_LOC_LEN_ERR);
    return;
  }
  if (p.paylen) {
    IoList iol;
    bool ok = gather_recv(*this, qp, qp.rcv_offset, p.paylen, iol);
    if (ok) {
      iovec local{p.payload, p.paylen};
      if (!qp.client->mem.write(&local, 1, iol.iov, iol.n, sched_.now())) {
        ++ctr_.dma_errors;
        ok = false;
      }
    }
    if (!ok) {
      responder_fail(*this, qp, p.psn, kNakRemoteOperationalError, IBV_WC_LOC_PROT_ERR);
      return;
    }
  }
  qp.rcv_offset += p.paylen;
  qp.epsn = (qp.epsn + 1) & kPsnMask;
  if (last) {
    qp.msn = (qp.msn + 1) & 0xFFFFFF;
    qp.in_message = false;
    qp.rwqe_valid = false;
    post_recv_cqe(qp, IBV_WC_SUCCESS, uint32_t(qp.rcv_offset), &p, &meta);
    ++qp.rq_cons;
    qp.rq.store_consumer(qp.rq_cons);
    if (qp.state == IBV_QPS_ERR) return;  // the CQ overran
  } else {
    qp.in_message = true;
  }
  if (p.ackreq) owe_response(qp, make_syndrome(AckType::kAck, kAethCreditsInvalid), p.psn, false);
}

}  // namespace vf::engine
