// UD responder: one packet is one message. DQPN -> QP (receive() checked type
// and state), Q_Key against the QP's (mismatch: dropped and counted, IBA
// 10.2.5), a receive WQE from the RQ or the SRQ (none: dropped and counted --
// UD has no RNR), then the payload joins the placement queue like an RC
// packet so a burst is written with one process_vm_writev per app.
//
// The first 40 bytes of the receive buffer are the GRH area (IBA 11.4.1.2).
// With a GRH (IB with GRH, always RoCEv2) the port's copy of the network
// header (RxMeta::grh) is written there and the CQE says IBV_WC_GRH; without
// one the area is left untouched. byte_len counts the 40 bytes either way.
// The 40 bytes are written from the mbuf itself: they replace the BTH/DETH
// in front of the payload (and the headroom the stripped L2/L3 headers
// left), so GRH and payload go out as one local piece.
//
// A buffer shorter than 40 + payload: the WQE completes IBV_WC_LOC_LEN_ERR
// and the QP stays usable (our choice: IBA leaves the QP state to the
// implementation for UD receive length errors; the datagram is lost either
// way and nothing is wrong with the QP). A bad L_Key or unreachable memory:
// IBV_WC_LOC_PROT_ERR and the QP goes to ERR, as for RC.
#include <cstring>

#include "device/engine/cqe.hpp"
#include "device/engine/opcodes.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/recv_queue.hpp"
#include "device/engine/responder.hpp"

namespace vf::engine {

using namespace vf::wire;

namespace {
constexpr uint32_t kGrhArea = 40;
}

void Responder::post_ud_recv_cqe(Qp& qp, uint64_t wr_id, ibv_wc_status status, uint32_t byte_len,
                                 const RxPlacement* e, uint16_t slid, uint8_t sl) {
  vhca_cqe cqe = recv_cqe(qp, wr_id, status, byte_len, slid, sl);
  bool se = false;
  if (e) {
    cqe.src_qp = e->ud_src_qp;
    if (e->ud_grh) cqe.wc_flags |= IBV_WC_GRH;
    if (e->ud_imm) {
      cqe.wc_flags |= IBV_WC_WITH_IMM;
      cqe.imm_data = e->ud_imm_data;  // network order, as the sender gave it
    }
    se = e->p.se;
  }
  if (!eng_.cq_post(*qp.rcq, cqe, se)) eng_.qp_to_error(qp, true);
}

void Responder::ud_receive(Qp& qp, const Pkt& p, const RxMeta& meta, rte_mbuf* m) {
  auto drop = [&] {
    ++eng_.ctr.rx_dropped;
    rte_pktmbuf_free(m);
  };
  const Op op = opcode_op(p.opcode);
  if ((op != kSendOnly && op != kSendOnlyImm) || p.paylen > eng_.port_mtu()) return drop();
  if (deth_qkey(p.ext) != qp.attr.qkey) {
    ++eng_.ctr.qkey_violations;
    return drop();
  }
  const bool grh = meta.has_grh;
  uint8_t* const area = p.payload - kGrhArea;
  if (grh && area < static_cast<uint8_t*>(m->buf_addr)) return drop();  // no room: never with our ports

  vhca_recv_wqe w;
  switch (recv_peek(qp, w)) {
    case RecvPeek::kEmpty:
      ++eng_.ctr.ud_no_wqe_drops;
      return drop();
    case RecvPeek::kBroken:  // its SRQ failed: the QP cannot receive again
      ++eng_.ctr.ud_no_wqe_drops;
      place_.flush();
      eng_.qp_to_error(qp, false);
      return drop();
    case RecvPeek::kHostile:
      place_.flush();  // the QPs that fail have their earlier datagrams placed first
      recv_hostile(qp);
      eng_.qp_to_error(qp, false);
      return drop();
    case RecvPeek::kOk: break;
  }
  // Whatever completes now rather than in the queue waits for the queue.
  auto complete_now = [&](ibv_wc_status st, bool fail_qp) {
    place_.flush();
    if (qp.state == IBV_QPS_ERR) return drop();
    recv_take(qp);
    const uint32_t idx = qp.rq_spec++;
    retire_rq_slots(qp, idx + 1);
    post_ud_recv_cqe(qp, w.wr_id, st, 0, nullptr, meta.slid, meta.sl);
    if (fail_qp) eng_.qp_to_error(qp, false);
    rte_pktmbuf_free(m);
  };
  if (w.num_sge > recv_max_sge(qp) || w.num_sge > VHCA_MAX_SGE) {
    ++eng_.ctr.hostile_ring_events;
    return complete_now(IBV_WC_LOC_QP_OP_ERR, true);
  }
  uint64_t total = 0;
  for (unsigned i = 0; i < w.num_sge; ++i) total += w.sge[i].length;
  if (total < kGrhArea + p.paylen) return complete_now(IBV_WC_LOC_LEN_ERR, false);

  if (eng_.rxq.n == kRxBatch) {
    place_.flush();
    if (qp.state == IBV_QPS_ERR) return drop();
  }
  RxPlacement& e = eng_.rxq.q[eng_.rxq.n];
  IoList iol(e.iov, VHCA_MAX_SGE);
  const uint32_t skip = grh ? 0 : kGrhArea;
  if (!recv_gather(eng_, qp, w, skip, kGrhArea - skip + p.paylen, iol))
    return complete_now(IBV_WC_LOC_PROT_ERR, true);

  recv_take(qp);
  e.qp = &qp;
  e.m = m;
  e.p = p;
  e.ud = true;
  e.ud_grh = grh;
  e.ud_imm = p.imm && (p.flags & kHasImm);
  e.ud_imm_data = 0;
  if (e.ud_imm) std::memcpy(&e.ud_imm_data, p.imm, 4);
  e.ud_src_qp = deth_sqpn(p.ext);
  if (grh) {
    // Overwrites BTH/DETH/ImmDt (copied above) and headroom.
    std::memcpy(area, meta.grh, kGrhArea);
    e.p.payload = area;
    e.p.paylen = kGrhArea + p.paylen;
  }
  e.p.bth = e.p.ext = e.p.imm = e.p.aeth = nullptr;
  e.wr_id = w.wr_id;
  e.rq_index = qp.rq_spec++;
  e.byte_len = kGrhArea + p.paylen;
  e.slid = meta.slid;
  e.sl = meta.sl;
  e.niov = uint8_t(iol.n);
  e.state = RxPlacement::kWaiting;
  ++eng_.rxq.n;
  ++qp.rx_pending;
  eng_.rxq.due = true;
}

void Responder::ud_placed(RxPlacement& e, bool dead) {
  Qp& qp = *e.qp;
  if (dead) {
    qp.rx_dead_gen = eng_.rxq.gen;
    ++eng_.ctr.rx_dropped;
    // An RQ WQE is still in the ring (the QP's flush completes it); an SRQ one is
    // the QP's and completes here.
    if (qp.srq && int32_t(e.rq_index - qp.rq_cons) >= 0) {
      retire_rq_slots(qp, e.rq_index + 1);
      post_ud_recv_cqe(qp, e.wr_id, IBV_WC_WR_FLUSH_ERR, 0, nullptr, 0, 0);
    }
    return;
  }
  retire_rq_slots(qp, e.rq_index + 1);
  if (e.state != RxPlacement::kPlaced) {
    ++eng_.ctr.dma_errors;
    post_ud_recv_cqe(qp, e.wr_id, IBV_WC_LOC_PROT_ERR, 0, nullptr, e.slid, e.sl);
    eng_.qp_to_error(qp, false);
    qp.rx_dead_gen = eng_.rxq.gen;
    return;
  }
  post_ud_recv_cqe(qp, e.wr_id, IBV_WC_SUCCESS, e.byte_len, &e, e.slid, e.sl);
  if (qp.state == IBV_QPS_ERR) qp.rx_dead_gen = eng_.rxq.gen;
}

}  // namespace vf::engine
