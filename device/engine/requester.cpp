// Requester: SQ ring -> request packets. Copies each WQE out of the ring
// once (the app may rewrite the slot at any time), validates it, assigns its
// PSN range when it starts, segments it to the path MTU, DMA-reads each
// packet's payload straight into the mbuf, and sets AckReq on the last packet
// of a message and at least every kAckReqEvery packets. Retransmission
// (timeout, PSN-sequence NAK) and RNR retry only move the send position back
// (seek); this loop then simply sends from there again (go-back-N).
#include <cstring>

#include "device/engine/hca_impl.hpp"
#include "device/engine/opcodes.hpp"

namespace vf::engine {

using namespace vf::wire;

namespace {
constexpr uint32_t kKnownSendFlags =
    IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE;
}

bool Hca::Impl::fetch_send_wqe(Qp& qp) {
  if (qp.sq_broken) return false;
  const uint32_t prod = qp.sq.load_producer();
  if (prod == qp.sq_fetched) return false;
  // More than a ring's worth outstanding, or a producer that moved backwards.
  if (prod - qp.sq_cons > qp.sq.entries() || prod - qp.sq_fetched > prod - qp.sq_cons) {
    ++ctr_.hostile_ring_events;
    qp.sq_broken = true;
    qp_to_error(qp, true);
    return false;
  }
  SendWqe& s = qp.swqe[qp.sq_fetched & qp.sq.mask()];
  std::memcpy(&s.w, qp.sq.slot(qp.sq_fetched), sizeof(s.w));
  ++qp.sq_fetched;
  // Only the private copy is examined from here on.
  s.state = SendWqe::kPending;
  s.status = IBV_WC_SUCCESS;
  s.ranged = false;
  s.length = 0;
  s.signaled = qp.sq_sig_all || (s.w.send_flags & IBV_SEND_SIGNALED);
  auto fail = [&](ibv_wc_status st, bool hostile) {
    s.state = SendWqe::kError;
    s.status = uint8_t(st);
    if (hostile) ++ctr_.hostile_ring_events;
    return true;
  };
  const WrOpInfo* op = wr_op_info(s.w.opcode);
  if (!op || !op->supported) return fail(IBV_WC_LOC_QP_OP_ERR, !op);
  if (s.w.send_flags & ~kKnownSendFlags) return fail(IBV_WC_LOC_QP_OP_ERR, true);
  if (s.w.send_flags & IBV_SEND_INLINE) {
    if (s.w.inline_len > qp.cap.max_inline_data || s.w.inline_len > VHCA_MAX_INLINE)
      return fail(IBV_WC_LOC_QP_OP_ERR, true);
    s.length = s.w.inline_len;
  } else {
    if (s.w.num_sge > qp.cap.max_send_sge || s.w.num_sge > VHCA_MAX_SGE)
      return fail(IBV_WC_LOC_QP_OP_ERR, true);
    for (unsigned i = 0; i < s.w.num_sge; ++i) {
      const vhca_sge& g = s.w.sge[i];
      if (g.length == 0) continue;
      const Mr* mr = mr_by_lkey(g.lkey);
      if (!mr || mr->client != qp.client || mr->pd != qp.pd || !mr->contains(g.addr, g.length))
        return fail(IBV_WC_LOC_PROT_ERR, false);
      s.length += g.length;
    }
  }
  if (s.length > cfg_.limits.max_msg_sz) return fail(IBV_WC_LOC_LEN_ERR, false);
  return true;
}

bool Hca::Impl::gather_send(Qp& qp, const SendWqe& s, uint64_t off, uint32_t len, IoList& iol) {
  uint64_t pos = 0;  // start of SGE i within the message
  for (unsigned i = 0; i < s.w.num_sge && len; ++i) {
    const vhca_sge& g = s.w.sge[i];
    if (off >= pos + g.length) {
      pos += g.length;
      continue;
    }
    // Re-resolve the key per packet: the MR may have been deregistered.
    const Mr* mr = mr_by_lkey(g.lkey);
    if (!mr || mr->client != qp.client || mr->pd != qp.pd || !mr->contains(g.addr, g.length))
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

void Hca::Impl::seek(Qp& qp, uint32_t p) {
  for (uint32_t i = qp.sq_cons; i != qp.sq_started; ++i) {
    const SendWqe& s = qp.swqe[i & qp.sq.mask()];
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

unsigned Hca::Impl::requester_run(Qp& qp, unsigned budget) {
  unsigned done = 0;
  if (complete_error_head(qp)) return 1;
  const Nanos now = sched_.now();
  while (done < budget) {
    if ((qp.state != IBV_QPS_RTS && qp.state != IBV_QPS_SQD) || qp.rnr_wait) break;
    if (qp.sq_next == qp.sq_fetched && !fetch_send_wqe(qp)) break;
    SendWqe& s = qp.swqe[qp.sq_next & qp.sq.mask()];
    if (s.state == SendWqe::kError) {
      if (complete_error_head(qp)) ++done;
      break;
    }
    if (psn_diff(qp.psn, qp.snd_una) >= int32_t(kMaxInflightPsn)) break;
    if (s.state == SendWqe::kPending) {
      if (qp.state == IBV_QPS_SQD) break;  // draining: start nothing new
      s.pmtu = qp.mtu;
      const uint64_t npkts = s.length ? (s.length + s.pmtu - 1) / s.pmtu : 1;
      s.first_psn = qp.psn;
      s.last_psn = uint32_t(qp.psn + npkts - 1) & kPsnMask;
      s.state = SendWqe::kStarted;
      s.ranged = true;
      qp.next_offset = 0;
      qp.sq_started = qp.sq_next + 1;
    }
    if (!io_.can_transmit()) {
      ++ctr_.tx_stalls;
      break;
    }
    rte_mbuf* m = io_.alloc();
    if (!m) {
      ++ctr_.tx_stalls;
      break;
    }
    const WrOpInfo* op = wr_op_info(s.w.opcode);
    const uint64_t remaining = s.length - qp.next_offset;
    const uint32_t len = uint32_t(remaining < s.pmtu ? remaining : s.pmtu);
    const bool first = qp.next_offset == 0;
    const bool last = remaining <= s.pmtu;
    const uint8_t low = first && last ? op->only : first ? op->first : last ? op->last : op->middle;
    const unsigned ext = last && op->has_imm ? kImmDtLen : 0;
    const unsigned pad = (4 - (len & 3)) & 3;
    const unsigned total = kBthLen + ext + len + pad;
    uint8_t* b = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, uint16_t(total)));
    if (!b || total > UINT16_MAX) {
      // The port's mbufs cannot hold a full MTU packet: a configuration error.
      rte_pktmbuf_free(m);
      s.state = SendWqe::kError;
      s.status = IBV_WC_GENERAL_ERR;
      continue;
    }
    uint8_t* payload = b + kBthLen + ext;
    if (s.w.send_flags & IBV_SEND_INLINE) {
      std::memcpy(payload, s.w.inline_data + qp.next_offset, len);
    } else if (len) {
      IoList iol;
      bool ok = gather_send(qp, s, qp.next_offset, len, iol);
      if (ok && !qp.client->mem.read(iol.iov, iol.n, payload, len, now)) {
        ++ctr_.dma_errors;
        ok = false;
      }
      if (!ok) {
        rte_pktmbuf_free(m);
        s.state = SendWqe::kError;
        s.status = IBV_WC_LOC_PROT_ERR;
        continue;  // completes once everything before it has
      }
    }
    if (pad) std::memset(payload + len, 0, pad);
    bool ackreq = last || ++qp.pkts_since_ackreq >= kAckReqEvery ||
                  psn_diff(qp.psn + 1, qp.snd_una) >= int32_t(kMaxInflightPsn);
    if (ackreq) qp.pkts_since_ackreq = 0;
    const bool se = last && (s.w.send_flags & IBV_SEND_SOLICITED);
    put_bth(b, opcode(Transport::kRC, Op(low)), se, pad, qp.attr.dest_qp_num, ackreq, qp.psn);
    if (ext) std::memcpy(b + kBthLen, &s.w.imm_data, kImmDtLen);  // already network order
    if (psn_diff(qp.psn, qp.psn_hi) < 0) ++ctr_.retransmitted_packets;
    ++ctr_.tx_packets;
    ctr_.tx_bytes += total;
    io_.transmit(m, qp.attr.ah_attr);
    qp.psn = (qp.psn + 1) & kPsnMask;
    if (psn_diff(qp.psn, qp.psn_hi) > 0) qp.psn_hi = qp.psn;
    qp.next_offset += len;
    if (last) {
      ++qp.sq_next;
      qp.next_offset = 0;
    }
    if (qp.timeout_ns && !qp.retrans_timer.armed()) sched_.arm_after(qp.retrans_timer, qp.timeout_ns);
    ++done;
  }
  if (qp.state == IBV_QPS_SQD) check_sq_drained(qp);
  return done;
}

}  // namespace vf::engine
