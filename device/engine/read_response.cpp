// Requester side of READ responses and atomic ACKs (the completer's part for
// READ/atomic WQEs). Responses arrive in PSN order for the WQE at the head of
// the SQ; an in-order one is accepted -- its payload (READ data, or the
// atomic's original value) queued in the placement queue with iovecs into the
// WQE's local SGEs, like a request's payload on the responder side -- and
// placement.cpp writes a whole burst with one process_vm_writev, then calls
// response_placed() to move snd_una and complete the WQE. So a
// 64 KiB READ costs one DMA call per receive burst, not one per packet.
//
// The first response of a READ/atomic is also an implicit ACK of every SEND
// and WRITE before it (IBA 9.7, implicit acknowledgement): that completes
// WQEs, so it is handled with the queue placed (ordered). A response PSN
// past the one expected means response packets were lost: the READ is
// re-issued from the first missing PSN (go-back-N, as rxe) -- once per
// position; the retransmit timer covers the rest. Duplicate and stray
// responses are dropped.
#include <endian.h>

#include <cstring>

#include "device/engine/completer.hpp"
#include "device/engine/opcodes.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/send_queue.hpp"

namespace vf::engine {

using namespace vf::wire;

void Completer::read_retry(Qp& qp) {
  if (qp.rd_retry_armed && qp.rd_retry_psn == qp.snd_una) return;  // already re-issued
  qp.rd_retry_armed = true;
  qp.rd_retry_psn = qp.snd_una;
  sq_seek(qp, qp.snd_una);
  arm_retrans(qp);
}

namespace {

// The READ WQE's local pieces for [off, off+len): keys of this client and PD,
// local write access, inside the region.
bool gather_local(const Engine& h, const Qp& qp, const SendWqe& s, uint64_t off, uint32_t len,
                  IoList& iol) {
  return h.collect_sges(s.w.sge, s.w.num_sge, qp.client, qp.pd, IBV_ACCESS_LOCAL_WRITE, off, len,
                        iol);
}

}  // namespace

Rx Completer::on_rd_atomic_response(Qp& qp, const Pkt& p, rte_mbuf* m, bool ordered) {
  if (qp.state != IBV_QPS_RTS && qp.state != IBV_QPS_SQD) {
    ++eng_.ctr.rx_dropped;
    return Rx::kDone;
  }
  const uint32_t q = p.psn;
  const uint32_t expect = (qp.snd_una + qp.rd_queued) & kPsnMask;
  // Only PSNs this requester sent; older ones are duplicates.
  if (psn_diff(q, qp.psn_hi) >= 0 || psn_diff(q, expect) < 0) {
    ++eng_.ctr.rx_dropped;
    return Rx::kDone;
  }
  if (q != expect) {
    if (!ordered) return Rx::kUnordered;  // (ordered: nothing queued, expect == snd_una)
    // Implicit ACK of what precedes q; it stops at an unanswered READ/atomic.
    ack_progress(qp, q);
    if (qp.state != IBV_QPS_RTS && qp.state != IBV_QPS_SQD) return Rx::kDone;
    if (q != qp.snd_una) {
      read_retry(qp);  // responses before q were lost
      ++eng_.ctr.rx_dropped;
      return Rx::kDone;
    }
  }
  // q == the next response PSN: it belongs to the head WQE, or with
  // responses still queued to a READ/atomic right behind the ones they finish.
  uint32_t i = qp.sq_cons;
  for (; i != qp.sq_started; ++i) {
    const SendWqe& w = sq_wqe(qp, i);
    if (w.ranged && psn_diff(q, w.last_psn) <= 0) break;
  }
  if (i == qp.sq_started) {
    ++eng_.ctr.rx_dropped;
    return Rx::kDone;
  }
  SendWqe& s = sq_wqe(qp, i);
  const bool atomic_ack = opcode_op(p.opcode) == kAtomicAck;
  const bool want_read = s.w.opcode == IBV_WR_RDMA_READ;
  if (s.state != SendWqe::kStarted || !wr_is_rd_atomic(s.w.opcode) || atomic_ack == want_read ||
      psn_diff(q, s.first_psn) < 0 || psn_diff(q, s.last_psn) > 0) {
    ++eng_.ctr.rx_dropped;  // not a response to what is outstanding
    return Rx::kDone;
  }
  if (p.aeth && syndrome_type(aeth_syndrome(p.aeth)) != AckType::kAck) {
    ++eng_.ctr.rx_dropped;
    return Rx::kDone;
  }
  const uint64_t off = uint64_t(uint32_t(q - s.first_psn) & kPsnMask) * s.pmtu;
  const bool last = q == s.last_psn;
  uint32_t len;
  uint8_t* data;
  if (want_read) {
    // Last/Only exactly on the READ's last PSN; full MTU packets before it.
    const uint64_t left = s.length - off;
    const bool is_last = p.flags & kIsLast;
    if (is_last != last || (last ? p.paylen != left : p.paylen != s.pmtu)) {
      ++eng_.ctr.rx_dropped;
      return Rx::kDone;
    }
    len = p.paylen;
    data = p.payload;
  } else {
    // The original value, big-endian on the wire, goes to the app in host
    // order: rewritten in place in the mbuf we own.
    uint8_t* ack = p.ext + layout(p.opcode).atomic_ack_eth;
    const uint64_t orig = atmack_orig(ack);
    std::memcpy(ack, &orig, 8);
    len = 8;
    data = ack;
  }
  RxPlacement& e = eng_.rxq.q[eng_.rxq.n];
  IoList iol(e.iov, VHCA_MAX_SGE);
  if (len && !gather_local(eng_, qp, s, off, len, iol)) {
    if (!ordered) return Rx::kUnordered;
    fail_head(qp, IBV_WC_LOC_PROT_ERR);
    return Rx::kDone;
  }
  e.qp = &qp;
  e.m = m;
  e.p = p;
  e.p.payload = data;
  e.p.paylen = len;
  e.wr_id = s.w.wr_id;
  e.rq_index = qp.sq_cons;
  e.byte_len = uint32_t(off + len);
  e.slid = 0;
  e.sl = 0;
  e.niov = uint8_t(iol.n);
  e.has_wqe = false;
  e.state = RxPlacement::kWaiting;
  ++eng_.rxq.n;
  ++qp.rx_pending;
  ++qp.rd_queued;
  if (last) eng_.rxq.due = true;
  return Rx::kQueued;
}

void Completer::response_placed(RxPlacement& e, bool dead) {
  Qp& qp = *e.qp;
  --qp.rd_queued;
  if (dead) {
    qp.rx_dead_gen = eng_.rxq.gen;
    ++eng_.ctr.rx_dropped;
    return;
  }
  if (e.state != RxPlacement::kPlaced) {
    ++eng_.ctr.dma_errors;
    fail_head(qp, IBV_WC_LOC_PROT_ERR);
    qp.rx_dead_gen = eng_.rxq.gen;
    return;
  }
  qp.snd_una = (e.p.psn + 1) & kPsnMask;
  qp.retry_left = qp.attr.retry_cnt;
  qp.rnr_retry_left = qp.attr.rnr_retry;
  qp.rd_retry_armed = false;
  // A local operation executed while an earlier READ/atomic was outstanding
  // stands between it and this one: this response acknowledges it.
  retire_local_heads(qp);
  SendWqe& s = sq_wqe(qp, qp.sq_cons);
  if (e.p.psn == s.last_psn) {
    if (qp.rd_outstanding) --qp.rd_outstanding;
    retire_sq_slot(qp);
    if (s.signaled) post_send_cqe(qp, s, IBV_WC_SUCCESS);
    retire_local_heads(qp);
  }
  if (qp.state == IBV_QPS_ERR) return;
  // The requester may have been rewound behind what is now answered.
  if (psn_diff(qp.psn, qp.snd_una) < 0 || int32_t(qp.sq_next - qp.sq_cons) < 0)
    sq_seek(qp, qp.snd_una);
  arm_retrans(qp);
  check_sq_drained(qp);
}

}  // namespace vf::engine
