// Completer: ACK / RNR NAK / NAK -> send completions, retry bookkeeping and
// the two requester timers. An ACK for PSN p completes every WQE whose last
// packet is <= p (ACKs are cumulative, so coalesced or lost ACKs are fine); a
// NAK for p implicitly acknowledges everything before p.
#include <cstring>

#include "device/engine/completer.hpp"
#include "device/engine/opcodes.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/send_queue.hpp"

namespace vf::engine {

using namespace vf::wire;

void Completer::post_send_cqe(Qp& qp, const SendWqe& s, ibv_wc_status status) {
  vhca_cqe cqe;
  std::memset(&cqe, 0, sizeof(cqe));
  cqe.wr_id = s.w.wr_id;
  cqe.status = status;
  const vhca_wr_op* op = vhca_wr_op_info(s.w.opcode);
  cqe.opcode = op ? op->wc_opcode : uint32_t(IBV_WC_SEND);
  cqe.byte_len = status == IBV_WC_SUCCESS ? uint32_t(s.length) : 0;
  cqe.qp_num = qp.qpn;
  if (!eng_.cq_post(*qp.scq, cqe, false)) eng_.qp_to_error(qp, true);
}

void Completer::ack_progress(Qp& qp, uint32_t new_una) {
  // A READ/atomic before new_una whose responses did not all arrive: the
  // acknowledgement stops there (its data is still missing) and the READ
  // goes out again for the missing part (as rxe does; IBA 9.7 lets a
  // responder answer a re-issued READ).
  bool missing = false;
  for (uint32_t i = qp.sq_cons; i != qp.sq_started; ++i) {
    const SendWqe& s = sq_wqe(qp, i);
    if (!s.ranged || psn_diff(s.first_psn, new_una) >= 0) break;
    if (wr_is_rd_atomic(s.w.opcode) && s.state == SendWqe::kStarted) {
      new_una = psn_diff(qp.snd_una, s.first_psn) > 0 ? qp.snd_una : s.first_psn;
      missing = true;
      break;
    }
  }
  if (psn_diff(new_una, qp.snd_una) > 0) {
    qp.snd_una = new_una;
    qp.retry_left = qp.attr.retry_cnt;
    qp.rnr_retry_left = qp.attr.rnr_retry;
    complete_acked(qp, (new_una - 1) & kPsnMask);
    arm_retrans(qp);
  }
  if (missing && qp.state != IBV_QPS_ERR) read_retry(qp);
}

void Completer::complete_acked(Qp& qp, uint32_t acked) {
  while (qp.sq_cons != qp.sq_started) {
    SendWqe& s = sq_wqe(qp, qp.sq_cons);
    if (s.state != SendWqe::kStarted || psn_diff(s.last_psn, acked) > 0) break;
    retire_sq_slot(qp);
    if (s.signaled) post_send_cqe(qp, s, IBV_WC_SUCCESS);
  }
  // The requester may have been rewound behind what is now acknowledged.
  if (psn_diff(qp.psn, qp.snd_una) < 0 || int32_t(qp.sq_next - qp.sq_cons) < 0) sq_seek(qp, qp.snd_una);
  complete_error_head(qp);
}

void Completer::retire_local_heads(Qp& qp) {
  while (qp.sq_cons != qp.sq_started) {
    const SendWqe& s = sq_wqe(qp, qp.sq_cons);
    if (s.state != SendWqe::kStarted || !wr_is_local(s.w.opcode) ||
        psn_diff(s.last_psn, (qp.snd_una - 1) & kPsnMask) > 0)
      return;
    retire_sq_slot(qp);
    if (s.signaled) post_send_cqe(qp, s, IBV_WC_SUCCESS);
  }
}

bool Completer::complete_error_head(Qp& qp) {
  if (qp.state == IBV_QPS_ERR || qp.sq_cons == qp.sq_fetched) return false;
  SendWqe& s = sq_wqe(qp, qp.sq_cons);
  if (s.state != SendWqe::kError) return false;
  retire_sq_slot(qp);
  post_send_cqe(qp, s, ibv_wc_status(s.status));
  eng_.qp_to_error(qp, false);
  return true;
}

void Completer::fail_head(Qp& qp, ibv_wc_status status) {
  if (qp.sq_cons != qp.sq_fetched) {
    SendWqe& s = sq_wqe(qp, qp.sq_cons);
    retire_sq_slot(qp);
    post_send_cqe(qp, s, status);
    eng_.qp_to_error(qp, false);
  } else {
    eng_.qp_to_error(qp, true);
  }
}

void Completer::arm_retrans(Qp& qp) {
  if (qp.snd_una == qp.psn_hi || qp.timeout_ns == 0)
    eng_.sched.disarm(qp.retrans_timer);
  else
    eng_.sched.arm_after(qp.retrans_timer, qp.timeout_ns);
}

void Completer::check_sq_drained(Qp& qp) {
  if (qp.state != IBV_QPS_SQD || qp.sq_drained_reported) return;
  if (qp.snd_una != qp.psn_hi || qp.next_offset != 0 || qp.sq_next != qp.sq_started) return;
  qp.sq_drained_reported = true;
  if (qp.attr.en_sqd_async_notify) eng_.async_qp_event(qp, IBV_EVENT_SQ_DRAINED);
}

void Completer::on_ack(Qp& qp, const Pkt& p) {
  if (qp.state != IBV_QPS_RTS && qp.state != IBV_QPS_SQD) {
    ++eng_.ctr.rx_dropped;
    return;
  }
  if (opcode_op(p.opcode) != kAck || !p.aeth) {
    ++eng_.ctr.rx_dropped;  // READ responses / atomic ACKs go to on_rd_atomic_response
    return;
  }
  const uint32_t q = p.psn;
  // Only PSNs this requester actually sent can be acknowledged.
  if (psn_diff(q, qp.psn_hi) >= 0 || psn_diff(q, qp.snd_una) < -1 - int32_t(kMaxInflightPsn)) {
    ++eng_.ctr.rx_dropped;
    return;
  }
  const uint8_t syn = aeth_syndrome(p.aeth);
  const int32_t d = psn_diff(q, qp.snd_una);  // >= 0: acknowledges something new
  auto progress = [&](uint32_t new_una) { ack_progress(qp, new_una & kPsnMask); };
  switch (syndrome_type(syn)) {
    case AckType::kAck:
      ++eng_.ctr.acks_rcvd;
      if (d < 0) return;  // duplicate or stale ACK
      progress(q + 1);
      check_sq_drained(qp);
      return;
    case AckType::kRnrNak: {
      ++eng_.ctr.rnr_naks_rcvd;
      if (d < 0 || (qp.rnr_wait && q == qp.psn)) return;  // stale or duplicated NAK
      if (d > 0) progress(q);
      if (qp.state == IBV_QPS_ERR) return;
      if (qp.rnr_retry_left == 0) {
        fail_head(qp, IBV_WC_RNR_RETRY_EXC_ERR);
        return;
      }
      if (qp.attr.rnr_retry != 7) --qp.rnr_retry_left;  // 7 = retry forever
      sq_seek(qp, q);
      qp.rnr_wait = true;
      eng_.sched.disarm(qp.retrans_timer);
      eng_.sched.arm_after(qp.rnr_timer, rnr_timer_ns(syndrome_value(syn)));
      return;
    }
    case AckType::kNak: {
      const uint8_t code = syndrome_value(syn);
      if (code == kNakPsnSeqError)
        ++eng_.ctr.seq_naks_rcvd;
      else
        ++eng_.ctr.other_naks_rcvd;
      if (d < 0) return;
      if (d > 0) progress(q);
      if (qp.state == IBV_QPS_ERR) return;
      if (code != kNakPsnSeqError) {
        fail_head(qp, nak_status(code));
        return;
      }
      if (qp.retry_left == 0) {
        fail_head(qp, IBV_WC_RETRY_EXC_ERR);
        return;
      }
      --qp.retry_left;
      sq_seek(qp, q);  // go back N from the PSN the responder expects
      arm_retrans(qp);
      return;
    }
    default:
      ++eng_.ctr.rx_dropped;
      return;
  }
}

void Completer::retrans_timer_fired(vf::Timer& t, Nanos) {
  Qp& qp = *static_cast<QpTimer&>(t).qp;
  Completer& c = *qp.completer;
  c.eng_.wake();
  c.place_.flush();  // what arrived before the timeout is placed before it acts
  if (qp.state != IBV_QPS_RTS && qp.state != IBV_QPS_SQD) return;
  if (qp.snd_una == qp.psn_hi || qp.rnr_wait) return;
  ++c.eng_.ctr.retransmit_timeouts;
  if (qp.retry_left == 0) {
    c.fail_head(qp, IBV_WC_RETRY_EXC_ERR);
    return;
  }
  --qp.retry_left;
  sq_seek(qp, qp.snd_una);  // the next poll() resends from the oldest unacked PSN
}

void Completer::rnr_timer_fired(vf::Timer& t, Nanos) {
  Qp& qp = *static_cast<QpTimer&>(t).qp;
  qp.rnr_wait = false;  // the next poll() resends from the RNR-NAKed PSN
  if (qp.completer) qp.completer->eng_.wake();
}

void Completer::pace_timer_fired(vf::Timer& t, Nanos) {
  const Qp& qp = *static_cast<QpTimer&>(t).qp;
  if (qp.completer) qp.completer->eng_.wake();
}

unsigned Completer::flush_sq(Qp& qp, unsigned budget) {
  unsigned n = 0;
  // Send queue: WQEs already copied out, then whatever else the app posted.
  while (n < budget && qp.sq_cons != qp.sq_fetched) {
    SendWqe& s = sq_wqe(qp, qp.sq_cons);
    retire_sq_slot(qp);
    post_send_cqe(qp, s, IBV_WC_WR_FLUSH_ERR);
    ++n;
  }
  if (qp.sq_cons == qp.sq_fetched && !qp.sq_broken) {
    const uint32_t prod = qp.sq.load_producer();
    if (prod - qp.sq_cons > qp.sq.entries()) {
      qp.sq_broken = true;
      ++eng_.ctr.hostile_ring_events;
    } else {
      while (n < budget && qp.sq_cons != prod) {
        SendWqe& s = sq_wqe(qp, qp.sq_cons);
        std::memcpy(&s.w, qp.sq.slot(qp.sq_cons), sizeof(s.w));
        s.length = 0;
        retire_sq_slot(qp);
        post_send_cqe(qp, s, IBV_WC_WR_FLUSH_ERR);
        ++n;
      }
    }
    qp.sq_fetched = qp.sq_cons;
  }
  qp.sq_next = qp.sq_started = qp.sq_fetched;
  return n;
}

}  // namespace vf::engine
