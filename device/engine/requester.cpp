// Requester: SQ ring -> request packets. Copies each WQE out of the ring
// once (the app may rewrite the slot at any time), validates it, assigns its
// PSN range when it starts, segments it to the path MTU, DMA-reads the
// payload straight into the mbufs -- a burst of up to kTxBurst packets of one
// WQE with a single process_vm_readv -- and sets AckReq on the last packet of
// a message and at least every kAckReqEvery packets. Retransmission (timeout,
// PSN-sequence NAK) and RNR retry only move the send position back (seek);
// this loop then simply sends from there again (go-back-N), re-reading the
// payload the same way.
#include <cstring>

#include "device/engine/completer.hpp"
#include "device/engine/congestion.hpp"
#include "device/engine/opcodes.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/requester.hpp"
#include "device/engine/send_queue.hpp"

namespace vf::engine {

using namespace vf::wire;

namespace {
constexpr uint32_t kKnownSendFlags =
    IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE;
}

bool Requester::fetch_send_wqe(Qp& qp) {
  if (qp.sq_broken) return false;
  const uint32_t prod = qp.sq.load_producer();
  if (prod == qp.sq_fetched) return false;
  // More than a ring's worth outstanding, or a producer that moved backwards.
  if (prod - qp.sq_cons > qp.sq.entries() || prod - qp.sq_fetched > prod - qp.sq_cons) {
    ++eng_.ctr.hostile_ring_events;
    qp.sq_broken = true;
    eng_.qp_to_error(qp, true);
    return false;
  }
  SendWqe& s = sq_wqe(qp, qp.sq_fetched);
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
    if (hostile) ++eng_.ctr.hostile_ring_events;
    return true;
  };
  // Known verbs opcodes the device lacks (memory windows, TSO) are refused,
  // not hostile; so are opcodes the QP's type cannot carry (UC: no READ or
  // atomics, UD: SENDs only; IBA table 38 -- mlx5 refuses them at post time).
  const vhca_wr_op* op = vhca_wr_op_for(qp.type, s.w.opcode);
  if (!op) return fail(IBV_WC_LOC_QP_OP_ERR, s.w.opcode > IBV_WR_TSO);
  if (s.w.send_flags & ~kKnownSendFlags) return fail(IBV_WC_LOC_QP_OP_ERR, true);
  if (op->local) return true;  // checked when executed, in SQ order (execute_local)
  if (op->rd_atomic) {
    // An initiator depth of 0 allows none (IBA 9.7: initiator depth).
    if (qp.attr.max_rd_atomic == 0 || (s.w.send_flags & IBV_SEND_INLINE))
      return fail(IBV_WC_LOC_QP_OP_ERR, false);
    if (s.w.opcode != IBV_WR_RDMA_READ) {
      // The original value lands in the first SGE: 8 bytes (mlx5 writes 8 at
      // sg_list[0].addr); a shorter buffer cannot hold it.
      // Its L_Key is checked when the value is placed (read_response.cpp),
      // as mlx5 and rxe do: the atomic executes at the responder first.
      if (s.w.num_sge == 0 || s.w.num_sge > VHCA_MAX_SGE || s.w.sge[0].length < 8)
        return fail(IBV_WC_LOC_LEN_ERR, false);
      s.w.num_sge = 1;
      s.w.sge[0].length = 8;
      s.length = 8;
      return true;
    }
  }
  // A READ's SGEs are where its response lands: their keys are checked as
  // it is placed (read_response.cpp), after the request went on the wire.
  const bool read = s.w.opcode == IBV_WR_RDMA_READ;
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
      const Mr* mr = read ? nullptr : eng_.mr_by_lkey(g.lkey);
      if (!read && (!mr || mr->client != qp.client || mr->pd != qp.pd || !mr->contains(g.addr, g.length)))
        return fail(IBV_WC_LOC_PROT_ERR, false);
      s.length += g.length;
    }
  }
  if (s.length > eng_.cfg.limits.max_msg_sz) return fail(IBV_WC_LOC_LEN_ERR, false);
  if (s.w.opcode == IBV_WR_RDMA_READ && (s.length + qp.mtu - 1) / qp.mtu > kMaxReadPackets)
    return fail(IBV_WC_LOC_LEN_ERR, false);
  return true;
}

// BIND_MW and LOCAL_INV: the window changes now, after every WR before it
// was sent and before any after it is; the WR takes an empty PSN range where
// it stands, so it completes once everything before it has (IBA 10.8.3.3).
bool Requester::execute_local(Qp& qp, SendWqe& s) {
  ibv_wc_status st = IBV_WC_SUCCESS;
  if (s.w.opcode == IBV_WR_BIND_MW)
    st = eng_.bind_mw(qp, s.w);
  else if (!eng_.invalidate(qp, s.w.imm_data, false))
    st = IBV_WC_LOC_QP_OP_ERR;  // as rxe: not a bound type 2 window of this PD
  if (st != IBV_WC_SUCCESS) {
    s.state = SendWqe::kError;
    s.status = uint8_t(st);
    return false;
  }
  s.pmtu = qp.mtu;
  s.first_psn = qp.psn;
  s.last_psn = (qp.psn - 1) & kPsnMask;
  s.state = SendWqe::kStarted;
  s.ranged = true;
  qp.next_offset = 0;
  qp.sq_started = qp.sq_next + 1;
  comp_.retire_local_heads(qp);  // nothing before it awaits an acknowledgement: done now
  return true;
}

bool Requester::gather_send(Qp& qp, const SendWqe& s, uint64_t off, uint32_t len, IoList& iol) {
  return eng_.collect_sges(s.w.sge, s.w.num_sge, qp.client, qp.pd, 0, off, len, iol);
}

unsigned Requester::run(Qp& qp, unsigned budget) {
  unsigned done = 0;
  // About to transmit or complete for a QP whose received payloads wait in
  // the placement queue: place them first, as packet-at-a-time placement
  // would have (a failure there puts the QP in ERR before it sends more).
  if (qp.rx_pending && (qp.state == IBV_QPS_SQD || qp.sq_next != qp.sq_fetched ||
                        qp.sq.load_producer() != qp.sq_fetched)) {
    if (place_.flush()) ++done;
    if (qp.state != IBV_QPS_RTS && qp.state != IBV_QPS_SQD) return done;
  }
  if (comp_.complete_error_head(qp)) return done + 1;
  const Nanos now = eng_.sched.now();
  // The path's static rate (validated at modify_qp: never kBadRate); 0 = unpaced.
  // A DCQCN-limited QP goes no faster than its current rate either.
  uint32_t mbps = static_rate_mbps(qp.attr.ah_attr.static_rate);
  if (const uint32_t cc = congestion_rate(eng_, qp); cc && (!mbps || cc < mbps)) mbps = cc;
  while (done < budget) {
    if ((qp.state != IBV_QPS_RTS && qp.state != IBV_QPS_SQD) || qp.rnr_wait) break;
    if (qp.sq_next == qp.sq_fetched && !fetch_send_wqe(qp)) break;
    SendWqe& s = sq_wqe(qp, qp.sq_next);
    if (s.state == SendWqe::kError) {
      if (comp_.complete_error_head(qp)) ++done;
      break;
    }
    const int32_t inflight = psn_diff(qp.psn, qp.snd_una);
    if (inflight >= int32_t(kMaxInflightPsn)) break;
    if (s.state == SendWqe::kPending) {
      if (qp.state == IBV_QPS_SQD) break;  // draining: start nothing new
      // IBA 10.8 (fence): a fenced WQE starts once every earlier READ/atomic has
      // completed; at most max_rd_atomic READ/atomics are outstanding (9.5).
      const bool rda = wr_is_rd_atomic(s.w.opcode);
      if (qp.rd_outstanding && ((s.w.send_flags & IBV_SEND_FENCE) ||
                                (rda && qp.rd_outstanding >= qp.attr.max_rd_atomic)))
        break;
      if (wr_is_local(s.w.opcode)) {
        if (!execute_local(qp, s)) continue;  // failed: completes in error once it is the head
        ++qp.sq_next;
        ++done;
        continue;
      }
      if (rda) ++qp.rd_outstanding;
      s.pmtu = qp.mtu;
      const uint64_t npkts = s.length ? (s.length + s.pmtu - 1) / s.pmtu : 1;
      s.first_psn = qp.psn;
      s.last_psn = uint32_t(qp.psn + npkts - 1) & kPsnMask;
      s.state = SendWqe::kStarted;
      s.ranged = true;
      qp.next_offset = 0;
      qp.sq_started = qp.sq_next + 1;
    }
    if (wr_is_local(s.w.opcode)) {  // executed already: go-back-N steps over it
      ++qp.sq_next;
      continue;
    }
    if (!eng_.io.can_transmit(qp.route)) {
      ++eng_.ctr.tx_stalls;
      break;
    }
    if (qp.eligible_at > now) {  // paced: the pace timer brings the poll back
      eng_.sched.arm(qp.pace_timer, qp.eligible_at);
      break;
    }
    const uint64_t bytes_before = eng_.ctr.tx_bytes;
    if (wr_is_rd_atomic(s.w.opcode)) {
      // One request packet; a READ of N packets occupies N PSNs.
      const uint64_t left = s.length - qp.next_offset;
      const uint32_t span = uint32_t(left ? (left + s.pmtu - 1) / s.pmtu : 1);
      if (uint32_t(inflight > 0 ? inflight : 0) + span > kMaxInflightPsn && inflight > 0) break;
      const unsigned sent = send_rd_atomic_request(qp, s, now);
      done += sent;
      if (!sent) break;
      pace(qp, now, eng_.ctr.tx_bytes - bytes_before, mbps);
      congestion_rate(eng_, qp, eng_.ctr.tx_bytes - bytes_before);
      continue;
    }
    // As many packets of this WQE as the budget, the window and the burst
    // allow; the port is asked again before each one goes out.
    const uint64_t left = s.length - qp.next_offset;
    uint64_t want = left ? (left + s.pmtu - 1) / s.pmtu : 1;
    if (want > budget - done) want = budget - done;
    if (want > kTxBurst) want = kTxBurst;
    const uint32_t room = kMaxInflightPsn - uint32_t(inflight > 0 ? inflight : 0);
    if (want > room) want = room;
    if (mbps) want = 1;  // each packet waits for its own time
    const unsigned sent = send_burst(qp, s, unsigned(want), now);
    done += sent;
    pace(qp, now, eng_.ctr.tx_bytes - bytes_before, mbps);
    congestion_rate(eng_, qp, eng_.ctr.tx_bytes - bytes_before);
    if (s.state == SendWqe::kError) continue;  // completes once everything before it has
    if (sent < want) break;                    // the port or the mbuf pool ran dry
  }
  if (qp.state == IBV_QPS_SQD) comp_.check_sq_drained(qp);
  return done;
}

// Takes the mbufs first, then fills every payload with one DMA read (local
// pieces: the payload areas; remote: the WQE's SGE pieces for those bytes),
// then finishes headers and transmits in PSN order. The outcome is what a
// packet-at-a-time loop gives -- for each packet in order: port full or no
// mbuf -> stall, mbuf too small -> GENERAL_ERR, a bad key or memory the read
// could not reach -> LOC_PROT_ERR -- and a packet whose payload did not fully
// arrive is never sent. Mbufs built but not sent (the port filled up) are
// freed and read again next time.
unsigned Requester::send_burst(Qp& qp, SendWqe& s, unsigned want, Nanos now) {
  const WrOpInfo* op = wr_op_info(s.w.opcode);
  const bool inl = s.w.send_flags & IBV_SEND_INLINE;
  const bool uc = qp.type == IBV_QPT_UC;
  const Transport tr = uc ? Transport::kUC : Transport::kRC;
  // The wire opcode of the packet that starts at byte `off` of the message;
  // its headers' layout comes from the opcode table.
  auto opcode_at = [&](uint64_t off) {
    const bool first = off == 0, last = s.length - off <= s.pmtu;
    return opcode(tr, Op(first && last ? op->only : first ? op->first : last ? op->last : op->middle));
  };
  rte_mbuf** m = eng_.txb.m.data();
  unsigned n = 0;
  while (n < want && (m[n] = eng_.io.alloc()) != nullptr) ++n;

  // Build: append the packet and collect its remote pieces, up to the first
  // packet that cannot be built (`fail` says why).
  IoList remote(eng_.txb.remote.data(), unsigned(eng_.txb.remote.size()));
  unsigned built = 0;
  ibv_wc_status fail = IBV_WC_SUCCESS;
  bool dma_failed = false;
  for (uint64_t off = qp.next_offset; built < n; ++built) {
    const uint64_t remaining = s.length - off;
    const uint32_t len = uint32_t(remaining < s.pmtu ? remaining : s.pmtu);
    const unsigned ext = layout(opcode_at(off)).payload;
    const unsigned pad = (4 - (len & 3)) & 3;
    const unsigned total = kBthLen + ext + len + pad;
    uint8_t* b = total > UINT16_MAX
                     ? nullptr
                     : reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m[built], uint16_t(total)));
    if (!b) {
      // The port's mbufs cannot hold a full MTU packet: a configuration error.
      fail = IBV_WC_GENERAL_ERR;
      break;
    }
    const unsigned old_n = remote.n;
    const size_t old_bytes = remote.bytes;
    if (!inl && len && !gather_send(qp, s, off, len, remote)) {
      remote.truncate(old_n, old_bytes);
      fail = IBV_WC_LOC_PROT_ERR;
      break;
    }
    eng_.txb.bth[built] = b;
    eng_.txb.local[built] = iovec{b + kBthLen + ext, len};
    off += len;
  }
  unsigned sendable = built;
  if (inl) {
    if (built)  // one packet: inline data is at most VHCA_MAX_INLINE < any MTU
      std::memcpy(eng_.txb.local[0].iov_base, s.w.inline_data + qp.next_offset, eng_.txb.local[0].iov_len);
  } else if (remote.bytes) {
    const size_t got = qp.client->mem.readv(eng_.txb.local.data(), built, remote.iov, remote.n, now,
                                            eng_.ctr.dma_calls);
    if (got < remote.bytes) {
      // Everything before the first unreachable byte arrived: the packets
      // wholly inside it can go; the one it falls in fails the WQE.
      size_t whole = 0;
      sendable = 0;
      while (sendable < built && whole + eng_.txb.local[sendable].iov_len <= got)
        whole += eng_.txb.local[sendable++].iov_len;
      fail = IBV_WC_LOC_PROT_ERR;
      dma_failed = true;
    }
  }

  unsigned sent = 0;
  for (; sent < sendable; ++sent) {
    if (sent && !eng_.io.can_transmit(qp.route)) break;
    rte_mbuf* pkt = m[sent];
    uint8_t* b = eng_.txb.bth[sent];
    const uint32_t len = uint32_t(eng_.txb.local[sent].iov_len);
    const bool last = s.length - qp.next_offset <= s.pmtu;
    const uint8_t opc = opcode_at(qp.next_offset);
    const HdrLayout& at = layout(opc);
    const unsigned ext = at.payload;
    const unsigned pad = (4 - (len & 3)) & 3;
    if (pad) std::memset(static_cast<uint8_t*>(eng_.txb.local[sent].iov_base) + len, 0, pad);
    bool ackreq = last || ++qp.pkts_since_ackreq >= kAckReqEvery ||
                  psn_diff(qp.psn + 1, qp.snd_una) >= int32_t(kMaxInflightPsn);
    if (ackreq) qp.pkts_since_ackreq = 0;
    if (uc) ackreq = false;  // UC has no acknowledgements
    const bool se = last && (s.w.send_flags & IBV_SEND_SOLICITED);
    put_bth(b, opc, se, pad, qp.attr.dest_qp_num, ackreq, qp.psn, qp.pkey);
    if (at.reth != kAbsent)
      reth_set(b + kBthLen + at.reth, s.w.remote_addr, s.w.rkey, uint32_t(s.length));
    if (at.imm != kAbsent) {
      // ImmDt is in network order already; the IETH's R_Key is the app's.
      const uint32_t v = s.w.opcode == IBV_WR_SEND_WITH_INV ? htobe32(s.w.imm_data) : s.w.imm_data;
      std::memcpy(b + kBthLen + at.imm, &v, kImmDtLen);
    }
    if (psn_diff(qp.psn, qp.psn_hi) < 0) ++eng_.ctr.retransmitted_packets;
    ++eng_.ctr.tx_packets;
    eng_.ctr.tx_bytes += kBthLen + ext + len + pad;
    eng_.io.transmit(pkt, qp.route);
    qp.psn = (qp.psn + 1) & kPsnMask;
    if (psn_diff(qp.psn, qp.psn_hi) > 0) qp.psn_hi = qp.psn;
    qp.next_offset += len;
    if (last) {
      ++qp.sq_next;
      qp.next_offset = 0;
    }
    if (uc) {
      // UC: nothing comes back; a WQE is complete once its last packet is
      // out (IBA 9.8), in order, so it is the head.
      qp.snd_una = qp.psn;
      if (last) {
        retire_sq_slot(qp);
        if (s.signaled) comp_.post_send_cqe(qp, s, IBV_WC_SUCCESS);
      }
      continue;
    }
    if (qp.timeout_ns && !qp.retrans_timer.armed()) eng_.sched.arm_after(qp.retrans_timer, qp.timeout_ns);
  }

  // What a packet-at-a-time loop would have met next, in its order of checks.
  if (sent < want) {
    if ((sent && !eng_.io.can_transmit(qp.route)) || sent == n) {
      ++eng_.ctr.tx_stalls;
    } else if (fail != IBV_WC_SUCCESS) {
      if (dma_failed) ++eng_.ctr.dma_errors;
      s.state = SendWqe::kError;
      s.status = uint8_t(fail);
    }
  }
  for (unsigned i = sent; i < n; ++i) rte_pktmbuf_free(m[i]);
  return sent;
}

}  // namespace vf::engine
