// Requester side of RDMA READ and atomics: the request packet. A READ of N
// response packets occupies N PSNs (IBA 9.7: the responder numbers its
// responses from the request's PSN), so after it the next request's PSN is
// N further on. Go-back-N (a timeout, a NAK, a gap in the responses) moves the
// send position into the READ's range (seek); the request sent then asks only
// for the part not yet received, from that PSN -- what rxe does and what IBA
// ch. 9.7 (a duplicate READ may start at a later PSN) lets the responder serve.
#include "device/engine/completer.hpp"
#include "device/engine/opcodes.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/requester.hpp"
#include "device/engine/send_queue.hpp"

namespace vf::engine {

using namespace vf::wire;

unsigned Requester::send_rd_atomic_request(Qp& qp, SendWqe& s, Nanos now) {
  (void)now;
  const bool read = s.w.opcode == IBV_WR_RDMA_READ;
  rte_mbuf* m = eng_.io.alloc();
  if (!m) {
    ++eng_.ctr.tx_stalls;
    return 0;
  }
  const uint8_t low = read ? kReadRequest
                           : s.w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? kCompareSwap : kFetchAdd;
  const uint8_t opc = opcode(Transport::kRC, Op(low));
  const HdrLayout& at = layout(opc);
  const unsigned total = kBthLen + at.payload;
  uint8_t* b = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, uint16_t(total)));
  if (!b) {
    rte_pktmbuf_free(m);
    s.state = SendWqe::kError;
    s.status = IBV_WC_GENERAL_ERR;
    return 0;
  }
  put_bth(b, opc, false, 0, qp.attr.dest_qp_num, true, qp.psn, qp.pkey);
  uint32_t span = 1;
  if (read) {
    const uint64_t off = qp.next_offset;
    const uint64_t left = s.length - off;
    span = uint32_t(left ? (left + s.pmtu - 1) / s.pmtu : 1);
    reth_set(b + kBthLen + at.reth, s.w.remote_addr + off, s.w.rkey, uint32_t(left));
  } else if (low == kCompareSwap) {
    atmeth_set(b + kBthLen + at.atomic_eth, s.w.remote_addr, s.w.rkey, s.w.swap, s.w.compare_add);
  } else {
    atmeth_set(b + kBthLen + at.atomic_eth, s.w.remote_addr, s.w.rkey, s.w.compare_add, 0);
  }
  if (psn_diff(qp.psn, qp.psn_hi) < 0) ++eng_.ctr.retransmitted_packets;
  ++eng_.ctr.tx_packets;
  eng_.ctr.tx_bytes += total;
  eng_.io.transmit(m, qp.route);
  qp.pkts_since_ackreq = 0;
  qp.psn = (qp.psn + span) & kPsnMask;
  if (psn_diff(qp.psn, qp.psn_hi) > 0) qp.psn_hi = qp.psn;
  ++qp.sq_next;
  qp.next_offset = 0;
  if (qp.timeout_ns && !qp.retrans_timer.armed()) eng_.sched.arm_after(qp.retrans_timer, qp.timeout_ns);
  return 1;
}

}  // namespace vf::engine
