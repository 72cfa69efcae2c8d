// The receive placement queue: payloads of accepted requests (responder.cpp)
// wait here, mbuf and all, and are written into the apps in one go -- one
// process_vm_writev per app for the whole queue -- because on a VM the system
// call, not the copy, is the cost (4-8 us each).
//
// When: poll() flushes once an entry carries a receive completion or an ACK
// request (so every message is placed, completed and acknowledged in the
// poll after its last packet arrives); anything that could observe the
// queue's state flushes first: a response packet (its completions), a request
// that needs a response or completion, the retransmit timer, the requester
// about to send or complete on a QP with queued payloads, and the slow-path
// verbs (dereg_mr above all: no write may land after the memory is gone).
// Middle packets of a message may thus stay queued across polls -- nothing
// depends on them until the message's last packet, a gap or a verb.
//
// Then, in arrival order, what packet-at-a-time placement did: message done
// -> receive CQE and RQ consumer; AckReq -> ACK owed. If the kernel stopped
// short, the packet whose bytes did not all arrive fails like before (NAK
// Remote Operational Error for its PSN, its WQE completes LOC_PROT_ERR, the
// QP goes to ERR); the QP's later packets are dropped as they would have
// been on arrival, and other QPs' packets behind it are written again.
// One difference remains, in an error case: if the receive CQ overruns in
// the middle of a burst, later packets of that burst may already be in their
// (now flushed) receive buffers -- IBA leaves the buffer of a WQE completed
// in error undefined.
#include "device/engine/hca_impl.hpp"
#include "device/engine/opcodes.hpp"

namespace vf::engine {

using namespace vf::wire;

// Writes every waiting entry of the client of rxq_.q[first] (all after
// `first` too), as few system calls as IOV_MAX allows; marks each kPlaced,
// kFailed (the first of its QP the kernel did not finish) or kSkipped (its
// QP failed earlier).
void Hca::Impl::place_client(unsigned first) {
  Client* c = rxq_.q[first].qp->client;
  for (;;) {
    unsigned nb = 0;
    IoList remote(rxq_.remote.data(), ProcessMem::kIovMax);
    for (unsigned i = first; i < rxq_.n; ++i) {
      RxPlacement& e = rxq_.q[i];
      if (e.state != RxPlacement::kWaiting || e.qp->client != c) continue;
      if (e.qp->rx_fail_gen == rxq_.gen) {
        e.state = RxPlacement::kSkipped;
        continue;
      }
      if (e.p.paylen == 0) {
        e.state = RxPlacement::kPlaced;
        continue;
      }
      if (remote.n + e.niov > ProcessMem::kIovMax) break;  // the rest in the next call
      for (unsigned k = 0; k < e.niov; ++k)
        remote.add(reinterpret_cast<uint64_t>(e.iov[k].iov_base), e.iov[k].iov_len);
      rxq_.local[nb] = iovec{e.p.payload, e.p.paylen};
      rxq_.batch[nb++] = i;
    }
    if (nb == 0) return;
    const size_t got = c->mem.writev(rxq_.local.data(), nb, remote.iov, remote.n, sched_.now(),
                                     ctr_.dma_calls);
    size_t whole = 0;
    bool short_write = false;
    for (unsigned k = 0; k < nb; ++k) {
      RxPlacement& e = rxq_.q[rxq_.batch[k]];
      if (e.qp->rx_fail_gen == rxq_.gen) {
        e.state = RxPlacement::kSkipped;  // behind its QP's failure: never placed
      } else if (!short_write && whole + e.p.paylen <= got) {
        whole += e.p.paylen;
        e.state = RxPlacement::kPlaced;
      } else if (!short_write) {
        short_write = true;
        e.state = RxPlacement::kFailed;
        e.qp->rx_fail_gen = rxq_.gen;
      }
      // else: another QP's packet behind the failure stays kWaiting: written
      // again by the next call.
    }
  }
}

bool Hca::Impl::flush_rx() {
  if (rxq_.n == 0) return false;
  ++rxq_.gen;
  for (unsigned i = 0; i < rxq_.n; ++i)
    if (rxq_.q[i].state == RxPlacement::kWaiting) place_client(i);

  for (unsigned i = 0; i < rxq_.n; ++i) {
    RxPlacement& e = rxq_.q[i];
    Qp& qp = *e.qp;
    --qp.rx_pending;
    if (e.p.flags & kIsResponse) {
      // READ response / atomic ACK (read_response.cpp): the requester's side.
      --qp.rd_queued;
      if (qp.rx_dead_gen == rxq_.gen || qp.state == IBV_QPS_ERR) {
        qp.rx_dead_gen = rxq_.gen;
        ++ctr_.rx_dropped;
      } else if (e.state != RxPlacement::kPlaced) {
        ++ctr_.dma_errors;
        fail_head(qp, IBV_WC_LOC_PROT_ERR);
        qp.rx_dead_gen = rxq_.gen;
      } else {
        rd_atomic_response_placed(qp, e);
      }
      rte_pktmbuf_free(e.m);
      continue;
    }
    if (e.ud) {
      ud_complete(e, qp.rx_dead_gen == rxq_.gen || qp.state == IBV_QPS_ERR);
    } else if (qp.rx_dead_gen == rxq_.gen || qp.state == IBV_QPS_ERR) {
      qp.rx_dead_gen = rxq_.gen;
      ++ctr_.rx_dropped;  // arrived after its QP failed: dropped on arrival before
      // An SRQ WQE this message took is the QP's: it completes, flushed.
      if (qp.srq && e.has_wqe && (e.p.flags & kIsLast) &&
          int32_t(e.rq_index - qp.rq_cons) >= 0) {
        retire_rq_slots(qp, e.rq_index + 1);
        post_recv_cqe(qp, e.wr_id, IBV_WC_WR_FLUSH_ERR, 0, nullptr, 0, 0);
      }
    } else if (e.state != RxPlacement::kPlaced) {
      ++ctr_.dma_errors;
      fail_receive(qp, e.p.psn, kNakRemoteOperationalError, IBV_WC_LOC_PROT_ERR, e.has_wqe,
                   e.wr_id, e.rq_index);
      qp.rx_dead_gen = rxq_.gen;
    } else {
      if (e.p.flags & kIsLast) qp.msn = (qp.msn + 1) & 0xFFFFFF;
      // A message that consumed a receive WQE (SEND, WRITE with immediate).
      if ((e.p.flags & kIsLast) && e.has_wqe) {
        retire_rq_slots(qp, e.rq_index + 1);
        post_recv_cqe(qp, e.wr_id, IBV_WC_SUCCESS, e.byte_len, &e.p, e.slid, e.sl);
        if (qp.state == IBV_QPS_ERR) {
          // The CQ overran: what was accepted after this WQE never happened.
          // (An SRQ WQE already taken for a later message stays held:
          // flush() completes it.)
          if (!qp.srq) qp.rwqe_valid = false;
          qp.rq_spec = qp.rq_cons;
          qp.rx_dead_gen = rxq_.gen;
        }
      }
      if (e.p.ackreq && qp.rx_dead_gen != rxq_.gen)
        owe_response(qp, make_syndrome(AckType::kAck, kAethCreditsInvalid), e.p.psn, false);
    }
    rte_pktmbuf_free(e.m);
    e.ud = false;  // the slot's next user may be RC, which leaves it alone
  }
  rxq_.n = 0;
  rxq_.due = false;
  return true;
}

void Hca::Impl::drop_rx() {
  for (unsigned i = 0; i < rxq_.n; ++i) {
    --rxq_.q[i].qp->rx_pending;
    rte_pktmbuf_free(rxq_.q[i].m);
    rxq_.q[i].ud = false;
  }
  rxq_.n = 0;
  rxq_.due = false;
}

}  // namespace vf::engine
