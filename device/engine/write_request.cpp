// Responder side of RDMA WRITE [with immediate], RC and UC (IBA 9.4.3,
// ch. 9.7): the First/Only packet's RETH names the target -- R_Key of an MR
// of the QP's PD with remote write access, the QP itself enabled for remote
// write (qp_access_flags), [VA, VA+len) inside the region -- and every packet
// of the message is placed there at its offset through the placement queue,
// like a SEND's payload is placed into its receive WQE. A zero-length WRITE
// names no memory: its R_Key and VA are not checked (IBA 9.4.3). The payload
// must add up to the RETH's DMA length exactly.
// WRITE with immediate consumes a receive WQE at its Last/Only packet (none
// posted: RNR NAK on RC, the message dropped on UC) and completes it
// IBV_WC_RECV_RDMA_WITH_IMM with byte_len = the WRITE's length (mlx5; IBA
// leaves byte_len for it undefined).
#include "device/engine/opcodes.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/responder.hpp"

namespace vf::engine {

using namespace vf::wire;

Rx Responder::on_write_request(Qp& qp, const Pkt& p, const RxMeta& meta, rte_mbuf* m,
                                          bool ordered) {
  const uint16_t f = p.flags;
  const bool first = f & kIsFirst, last = f & kIsLast;
  if (qp.in_message == first || (!first && !qp.in_write) || (!last && p.paylen != qp.mtu) ||
      p.paylen > qp.mtu)
    return reject(qp, p, ordered, kNakInvalidRequest, IBV_WC_REM_INV_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
  uint64_t va = qp.wr_va, len = qp.wr_len;
  uint32_t rkey = qp.wr_rkey;
  if (first) {
    va = reth_va(p.ext);
    rkey = reth_rkey(p.ext);
    len = reth_len(p.ext);
    // A QP not enabled for remote write does not support the operation:
    // Invalid Request (IBA 9.7; the Mellanox verbs manual lists "qp_access_flags
    // in remote QP wasn't configured" under REM_INV_REQ_ERR; rxe does the
    // same). A key, PD, MR access or bounds failure: Remote Access Error.
    if (!(qp.attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE))
      return reject(qp, p, ordered, kNakInvalidRequest, IBV_WC_REM_INV_REQ_ERR,
                    IBV_EVENT_QP_REQ_ERR);
    if (len && !eng_.remote_mem(qp, rkey, va, len, IBV_ACCESS_REMOTE_WRITE))
      return reject(qp, p, ordered, kNakRemoteAccessError, IBV_WC_REM_ACCESS_ERR,
                    IBV_EVENT_QP_ACCESS_ERR);
  }
  const uint64_t offset = first ? 0 : qp.rcv_offset;
  if (offset + p.paylen > len || (last && offset + p.paylen != len))
    return reject(qp, p, ordered, kNakInvalidRequest, IBV_WC_REM_INV_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
  const bool imm = last && (f & kHasImm);
  Rx early;
  if (imm && !qp.rwqe_valid && !take_recv_wqe(qp, p, ordered, early)) return early;
  RxPlacement& e = eng_.rxq.q[eng_.rxq.n];
  e.niov = 0;
  if (p.paylen) {
    // Looked up again per packet: the MR may have been deregistered or the
    // window unbound since the First packet (dereg_mr places the queue before
    // it frees anything).
    const Engine::RemoteMem mem = eng_.remote_mem(qp, rkey, va + offset, p.paylen, IBV_ACCESS_REMOTE_WRITE);
    if (!mem)
      return reject(qp, p, ordered, kNakRemoteAccessError, IBV_WC_REM_ACCESS_ERR,
                    IBV_EVENT_QP_ACCESS_ERR);
    e.iov[0] = iovec{reinterpret_cast<void*>(mem.host), p.paylen};
    e.niov = 1;
  }
  // Accepted. A WITH_IMM completion and the ACK wait for the placement.
  e.qp = &qp;
  e.m = m;
  e.p = p;
  e.wr_id = imm ? qp.rwqe.w.wr_id : 0;
  e.rq_index = qp.rq_spec;
  e.byte_len = uint32_t(len);
  e.slid = meta.slid;
  e.sl = meta.sl;
  e.has_wqe = imm;
  e.state = RxPlacement::kWaiting;
  ++eng_.rxq.n;
  ++qp.rx_pending;
  if (last || p.ackreq) eng_.rxq.due = true;
  qp.wr_va = va;
  qp.wr_rkey = rkey;
  qp.wr_len = len;
  qp.rcv_offset = offset + p.paylen;
  qp.epsn = (qp.epsn + 1) & kPsnMask;
  qp.in_message = !last;
  qp.in_write = !last;
  if (imm) {
    qp.rwqe_valid = false;
    ++qp.rq_spec;
  }
  return Rx::kQueued;
}

}  // namespace vf::engine
