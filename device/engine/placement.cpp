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
#include "device/engine/completer.hpp"
#include "device/engine/opcodes.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/responder.hpp"

namespace vf::engine {

using namespace vf::wire;

// Writes every waiting entry of the client of eng_.rxq.q[first] (all after
// `first` too), as few system calls as IOV_MAX allows; marks each kPlaced,
// kFailed (the first of its QP the kernel did not finish) or kSkipped (its
// QP failed earlier).
void Placement::place_client(unsigned first) {
  Client* c = eng_.rxq.q[first].qp->client;
  for (;;) {
    unsigned nb = 0;
    IoList remote(eng_.rxq.remote.data(), ProcessMem::kIovMax);
    for (unsigned i = first; i < eng_.rxq.n; ++i) {
      RxPlacement& e = eng_.rxq.q[i];
      if (e.state != RxPlacement::kWaiting || e.qp->client != c) continue;
      if (e.qp->rx_fail_gen == eng_.rxq.gen) {
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
      eng_.rxq.local[nb] = iovec{e.p.payload, e.p.paylen};
      eng_.rxq.batch[nb++] = i;
    }
    if (nb == 0) return;
    const size_t got = c->mem.writev(eng_.rxq.local.data(), nb, remote.iov, remote.n, eng_.sched.now(),
                                     eng_.ctr.dma_calls);
    size_t whole = 0;
    bool short_write = false;
    for (unsigned k = 0; k < nb; ++k) {
      RxPlacement& e = eng_.rxq.q[eng_.rxq.batch[k]];
      if (e.qp->rx_fail_gen == eng_.rxq.gen) {
        e.state = RxPlacement::kSkipped;  // behind its QP's failure: never placed
      } else if (!short_write && whole + e.p.paylen <= got) {
        whole += e.p.paylen;
        e.state = RxPlacement::kPlaced;
      } else if (!short_write) {
        short_write = true;
        e.state = RxPlacement::kFailed;
        e.qp->rx_fail_gen = eng_.rxq.gen;
      }
      // else: another QP's packet behind the failure stays kWaiting: written
      // again by the next call.
    }
  }
}

bool Placement::flush() {
  RxPlacementQueue& rxq = eng_.rxq;
  if (rxq.n == 0) return false;
  ++rxq.gen;
  for (unsigned i = 0; i < rxq.n; ++i)
    if (rxq.q[i].state == RxPlacement::kWaiting) place_client(i);

  for (unsigned i = 0; i < rxq.n; ++i) {
    RxPlacement& e = rxq.q[i];
    Qp& qp = *e.qp;
    --qp.rx_pending;
    // Arrived after its QP failed (earlier in this flush or before): what
    // was done on arrival to a QP in error.
    const bool dead = qp.rx_dead_gen == rxq.gen || qp.state == IBV_QPS_ERR;
    if (e.p.flags & kIsResponse)
      comp_.response_placed(e, dead);
    else if (e.ud)
      resp_.ud_placed(e, dead);
    else
      resp_.request_placed(e, dead);
    rte_pktmbuf_free(e.m);
    e.ud = false;  // the slot's next user may be RC, which leaves it alone
  }
  rxq.n = 0;
  rxq.due = false;
  return true;
}

void Placement::drop() {
  for (unsigned i = 0; i < eng_.rxq.n; ++i) {
    --eng_.rxq.q[i].qp->rx_pending;
    rte_pktmbuf_free(eng_.rxq.q[i].m);
    eng_.rxq.q[i].ud = false;
  }
  eng_.rxq.n = 0;
  eng_.rxq.due = false;
}

}  // namespace vf::engine
