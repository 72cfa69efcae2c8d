// UD requester: each SQ WQE is one datagram -- BTH (SEND Only / SEND Only
// with Immediate, P_Key default, no AckReq) + DETH (Q_Key, source QPN)
// [+ ImmDt] + payload -- sent with the AV of the address handle it names.
// No ACK comes back: the WQE completes once the packet is handed to the port.
//
// Checks at fetch, each failing the WQE (which completes in error and moves
// the QP to SQE, IBA 10.3.1 / 11.6.2: UD send errors leave the receive side
// running; the app returns it to RTS with modify_qp):
//   opcode other than SEND / SEND_WITH_IMM    -> IBV_WC_LOC_QP_OP_ERR
//   AH handle unknown or of another client    -> IBV_WC_LOC_QP_OP_ERR (as rxe)
//   AH of another PD of the same client       -> IBV_WC_LOC_PROT_ERR (IBA's PD check)
//   message longer than the port's MTU        -> IBV_WC_LOC_LEN_ERR (one packet per message)
// The Q_Key: the WR's, unless its high-order bit is set -- then the QP's own
// (IBA 10.2.5, "controlled Q_Keys").
#include <cstring>

#include "core/multicast.hpp"

#include "device/engine/completer.hpp"
#include "device/engine/opcodes.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/requester.hpp"
#include "device/engine/send_queue.hpp"

namespace vf::engine {

using namespace vf::wire;

namespace {

void fail_wqe(SendWqe& s, ibv_wc_status st) {
  s.state = SendWqe::kError;
  s.status = uint8_t(st);
}

}  // namespace

unsigned Requester::run_ud(Qp& qp, unsigned budget) {
  unsigned done = 0;
  const Nanos now = eng_.sched.now();
  while (done < budget && (qp.state == IBV_QPS_RTS || qp.state == IBV_QPS_SQD)) {
    if (qp.sq_next == qp.sq_fetched && !fetch_send_wqe(qp)) break;
    SendWqe& s = sq_wqe(qp, qp.sq_next);
    const Ah* ah = nullptr;
    if (s.state == SendWqe::kPending) {
      if (qp.state == IBV_QPS_SQD) break;  // draining: start nothing new
      ah = eng_.objs.owned<Ah>(qp.client, s.w.ah_handle);
      // fetch_send_wqe let only SENDs through (vhca_wr_op_for).
      if (!ah)
        fail_wqe(s, IBV_WC_LOC_QP_OP_ERR);
      else if (ah->pd != qp.pd)
        fail_wqe(s, IBV_WC_LOC_PROT_ERR);
      else if (s.length > eng_.port_mtu())
        fail_wqe(s, IBV_WC_LOC_LEN_ERR);
    }
    if (s.state == SendWqe::kError) {
      ++qp.sq_next;
      qp.sq_started = qp.sq_next;
      retire_sq_slot(qp);
      comp_.post_send_cqe(qp, s, ibv_wc_status(s.status));
      if (qp.state != IBV_QPS_ERR) qp.state = IBV_QPS_SQE;  // the rest is flushed by poll()
      return done + 1;
    }
    if (!eng_.io.can_transmit(ah->route)) {
      ++eng_.ctr.tx_stalls;
      break;
    }
    if (qp.eligible_at > now) {  // paced by an earlier AH's static rate
      eng_.sched.arm(qp.pace_timer, qp.eligible_at);
      break;
    }
    rte_mbuf* m = eng_.io.alloc();
    if (!m) {
      ++eng_.ctr.tx_stalls;
      break;
    }
    const uint8_t opc =
        opcode(Transport::kUD, s.w.opcode == IBV_WR_SEND_WITH_IMM ? kSendOnlyImm : kSendOnly);
    const HdrLayout& at = layout(opc);
    const uint32_t len = uint32_t(s.length);
    const unsigned pad = (4 - (len & 3)) & 3;
    const unsigned hdr = kBthLen + at.payload;
    uint8_t* b = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, uint16_t(hdr + len + pad)));
    if (!b) {
      rte_pktmbuf_free(m);
      fail_wqe(s, IBV_WC_GENERAL_ERR);  // the port's mbufs cannot hold an MTU
      continue;
    }
    uint8_t* payload = b + hdr;
    if (s.w.send_flags & IBV_SEND_INLINE) {
      std::memcpy(payload, s.w.inline_data, len);
    } else if (len) {
      iovec remote[VHCA_MAX_SGE];
      IoList iol(remote, VHCA_MAX_SGE);
      iovec local{payload, len};
      if (!gather_send(qp, s, 0, len, iol) ||
          qp.client->mem.readv(&local, 1, iol.iov, iol.n, now, eng_.ctr.dma_calls) < len) {
        if (iol.bytes == len) ++eng_.ctr.dma_errors;
        rte_pktmbuf_free(m);
        fail_wqe(s, IBV_WC_LOC_PROT_ERR);
        continue;
      }
    }
    if (pad) std::memset(payload + len, 0, pad);
    const bool se = s.w.send_flags & IBV_SEND_SOLICITED;
    put_bth(b, opc, se, pad, s.w.remote_qpn & kQpnMask, false, qp.psn, qp.pkey);
    const uint32_t qkey = (s.w.remote_qkey & 0x80000000u) ? qp.attr.qkey : s.w.remote_qkey;
    deth_set(b + kBthLen + at.deth, qkey, qp.qpn);
    if (at.imm != kAbsent)
      std::memcpy(b + kBthLen + at.imm, &s.w.imm_data, kImmDtLen);  // network order
    ++eng_.ctr.tx_packets;
    eng_.ctr.tx_bytes += hdr + len + pad;
    if ((s.w.remote_qpn & kQpnMask) == kMulticastQpn && ah->route.is_global &&
        is_multicast_gid(ah->route.dgid.data())) [[unlikely]] {
      dp::Route r = ah->route;
      r.mcast_loopback = eng_.mcast.loops_back(qp, r.dgid.data());
      eng_.io.transmit(m, r);
    } else {
      eng_.io.transmit(m, ah->route);
    }
    pace(qp, now, hdr + len + pad, static_rate_mbps(ah->attr.static_rate));
    qp.psn = (qp.psn + 1) & kPsnMask;
    qp.snd_una = qp.psn_hi = qp.psn;  // nothing is ever outstanding
    s.state = SendWqe::kStarted;
    ++qp.sq_next;
    qp.sq_started = qp.sq_next;
    retire_sq_slot(qp);
    if (s.signaled) comp_.post_send_cqe(qp, s, IBV_WC_SUCCESS);
    ++done;
  }
  if (qp.state == IBV_QPS_SQD) comp_.check_sq_drained(qp);
  return done;
}

}  // namespace vf::engine
