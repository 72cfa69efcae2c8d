// Responder side of RDMA READ and atomics (IBA 9.4.4, 9.4.5 and the RC
// responder rules of 9.7).
//
// A new READ/atomic request is executed with the placement queue empty (so
// every earlier WRITE/SEND of the QP is in memory first: a READ after a
// WRITE sees its data) and takes a responder resource (Qp::res): its
// responses are sent from poll() -- READ data read with one
// process_vm_readv per burst of response packets, as the requester's
// send_burst does -- and the resource is kept afterwards to answer a
// duplicate. A READ consumes as many PSNs as it has response packets; its
// responses carry them (First/Middle/Last or Only, AETH on First/Last/Only).
//
// Responder resources (max_dest_rd_atomic): a request that arrives while
// that many READ/atomics still have responses to send is one too many --
// IBA 9.7 (responder resources): NAK Invalid Request -- what mlx5 gives
// (REM_INV_REQ_ERR) when a peer's initiator depth exceeds them.
//
// Atomics: the read-modify-write is process_vm_readv + process_vm_writev of
// the 8 bytes, done here on the lcore. It is atomic against every other
// atomic of every vHCA because one lcore thread runs all engines and nothing
// else writes through them in between (so IBV_ATOMIC_HCA holds); it is not
// atomic against the app's own CPU stores to the word -- which IBA does not
// require for ATOMIC_HCA (only ATOMIC_GLOB would). A duplicate atomic is
// answered with the saved original value and never executed again
// (IBA ch. 9.7, duplicate atomics).
//
// ACK ordering: an ACK/NAK for a later PSN waits until the READ/atomic
// responses before it are out (response_blocked), so the requester sees
// responses in PSN order.
#include <cstring>

#include "device/engine/opcodes.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/responder.hpp"

namespace vf::engine {

using namespace vf::wire;

bool Responder::response_blocked(const Qp& qp, uint32_t psn) const {
  for (const RdAtomicRes& r : qp.res)
    if (r.valid && r.pending && psn_diff(psn, r.next_psn) >= 0) return true;
  return false;
}

Rx Responder::on_rd_atomic_request(Qp& qp, const Pkt& p, bool ordered) {
  if (!ordered) return Rx::kUnordered;
  const bool read = p.flags & kIsRead;
  if (qp.type != IBV_QPT_RC || qp.in_message)
    return reject(qp, p, ordered, kNakInvalidRequest, IBV_WC_REM_INV_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
  if (qp.res_pending >= qp.attr.max_dest_rd_atomic)
    return reject(qp, p, ordered, kNakInvalidRequest, IBV_WC_REM_INV_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
  uint64_t va, len;
  uint32_t rkey;
  if (read) {
    va = reth_va(p.ext);
    rkey = reth_rkey(p.ext);
    len = reth_len(p.ext);
    // (A READ's responses must fit well inside the 24-bit PSN space.)
    if (len > eng_.cfg.limits.max_msg_sz || (len + qp.mtu - 1) / qp.mtu > kMaxReadPackets)
      return reject(qp, p, ordered, kNakInvalidRequest, IBV_WC_REM_INV_REQ_ERR,
                    IBV_EVENT_QP_REQ_ERR);
  } else {
    va = atmeth_va(p.ext);
    rkey = atmeth_rkey(p.ext);
    len = 8;
    // IBA 9.4.5: the address must be naturally aligned, else Invalid Request.
    if (va & 7)
      return reject(qp, p, ordered, kNakInvalidRequest, IBV_WC_REM_INV_REQ_ERR,
                    IBV_EVENT_QP_REQ_ERR);
  }
  const uint32_t access = read ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_ATOMIC;
  // Not enabled on the QP: Invalid Request (as for WRITE, write_request.cpp).
  if (!(qp.attr.qp_access_flags & access))
    return reject(qp, p, ordered, kNakInvalidRequest, IBV_WC_REM_INV_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
  // A zero-length READ names no memory: no R_Key check (IBA 9.4.4).
  const Engine::RemoteMem mem = len ? eng_.remote_mem(qp, rkey, va, len, access) : Engine::RemoteMem{};
  if (len && !mem)
    return reject(qp, p, ordered, kNakRemoteAccessError, IBV_WC_REM_ACCESS_ERR,
                  IBV_EVENT_QP_ACCESS_ERR);
  RdAtomicRes& r = qp.res[qp.res_next++ % kRdAtomicSlots];
  if (r.valid && r.pending) --qp.res_pending;  // an old one re-sent for a duplicate: superseded
  r = RdAtomicRes{};
  r.valid = true;
  r.read = read;
  r.pending = true;
  r.first_psn = r.start_psn = r.next_psn = p.psn;
  r.va = va;
  r.rkey = rkey;
  r.length = len;
  if (read) {
    const uint64_t n = len ? (len + qp.mtu - 1) / qp.mtu : 1;
    r.last_psn = uint32_t(p.psn + n - 1) & kPsnMask;
  } else {
    r.last_psn = p.psn;
    uint64_t old = 0;
    iovec local{&old, 8}, remote{reinterpret_cast<void*>(mem.host), 8};
    Client& c = *mem.client;
    if (c.mem.readv(&local, 1, &remote, 1, eng_.sched.now(), eng_.ctr.dma_calls) != 8) {
      r.valid = r.pending = false;
      ++eng_.ctr.dma_errors;
      return reject(qp, p, ordered, kNakRemoteOperationalError, IBV_WC_REM_OP_ERR, 0);
    }
    const uint64_t add_or_swap = atmeth_swap_add(p.ext);
    uint64_t nv = old;
    if (opcode_op(p.opcode) == kFetchAdd)
      nv = old + add_or_swap;
    else if (old == atmeth_compare(p.ext))
      nv = add_or_swap;
    if (nv != old) {
      iovec src{&nv, 8};
      if (c.mem.writev(&src, 1, &remote, 1, eng_.sched.now(), eng_.ctr.dma_calls) != 8) {
        r.valid = r.pending = false;
        ++eng_.ctr.dma_errors;
        return reject(qp, p, ordered, kNakRemoteOperationalError, IBV_WC_REM_OP_ERR, 0);
      }
    }
    r.orig = old;
  }
  ++qp.res_pending;
  qp.msn = (qp.msn + 1) & 0xFFFFFF;
  qp.epsn = (r.last_psn + 1) & kPsnMask;
  return Rx::kDone;
}

void Responder::on_rd_atomic_duplicate(Qp& qp, const Pkt& p) {
  const bool read = p.flags & kIsRead;
  for (RdAtomicRes& r : qp.res) {
    if (!r.valid || r.read != read || psn_diff(p.psn, r.first_psn) < 0 ||
        psn_diff(p.psn, r.last_psn) > 0)
      continue;
    if (read) {
      // Re-executed from the duplicate's PSN: the requester asks again for
      // what it has not received (RETH = the rest of the original).
      const uint64_t off = uint64_t(uint32_t(p.psn - r.first_psn) & kPsnMask) * qp.mtu;
      if (reth_va(p.ext) != r.va + off || reth_rkey(p.ext) != r.rkey ||
          reth_len(p.ext) != r.length - off)
        break;
      r.offset = off;
      r.start_psn = r.next_psn = p.psn;
    } else if (p.psn != r.first_psn) {
      break;
    } else {
      r.next_psn = r.first_psn;  // the saved result again
    }
    if (!r.pending) {
      r.pending = true;
      ++qp.res_pending;
    }
    return;
  }
  ++eng_.ctr.rx_dropped;  // no resource holds it any more: IBA lets it be dropped
}

unsigned Responder::rd_atomic_respond(Qp& qp, unsigned budget) {
  unsigned sent = 0;
  while (sent < budget && qp.res_pending) {
    // The oldest pending response first (PSN order).
    RdAtomicRes* r = nullptr;
    for (RdAtomicRes& x : qp.res)
      if (x.valid && x.pending && (!r || psn_diff(x.next_psn, r->next_psn) < 0)) r = &x;
    if (!r) {
      qp.res_pending = 0;
      break;
    }
    if (!eng_.io.can_transmit(qp.route)) {
      ++eng_.ctr.tx_stalls;
      break;
    }
    const uint8_t syn = make_syndrome(AckType::kAck, kAethCreditsInvalid);
    if (!r->read) {
      rte_mbuf* m = eng_.io.alloc();
      if (!m) {
        ++eng_.ctr.tx_stalls;
        break;
      }
      constexpr uint8_t opc = opcode(Transport::kRC, kAtomicAck);
      constexpr HdrLayout at = layout(opc);
      const unsigned total = kBthLen + at.payload;
      uint8_t* b = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, total));
      if (!b) {
        rte_pktmbuf_free(m);
        break;
      }
      put_bth(b, opc, false, 0, qp.attr.dest_qp_num, false, r->first_psn, qp.pkey);
      aeth_set(b + kBthLen + at.aeth, syn, qp.msn);
      atmack_set(b + kBthLen + at.atomic_ack_eth, r->orig);
      ++eng_.ctr.tx_packets;
      eng_.ctr.tx_bytes += total;
      eng_.io.transmit(m, qp.route);
      r->pending = false;
      --qp.res_pending;
      ++sent;
      continue;
    }
    // READ: a burst of response packets, the data read with one call.
    const Engine::RemoteMem mem =
        r->length ? eng_.remote_mem(qp, r->rkey, r->va, r->length, IBV_ACCESS_REMOTE_READ)
                  : Engine::RemoteMem{};
    if (r->length && !mem) {
      // Deregistered or unbound since the request: the READ cannot be answered.
      r->pending = false;
      --qp.res_pending;
      owe_response(qp, make_syndrome(AckType::kNak, kNakRemoteAccessError), r->next_psn, true);
      eng_.qp_to_error(qp, false);
      eng_.async_qp_event(qp, IBV_EVENT_QP_ACCESS_ERR);
      break;
    }
    const uint64_t left = r->length - r->offset;
    uint64_t want = left ? (left + qp.mtu - 1) / qp.mtu : 1;
    if (want > budget - sent) want = budget - sent;
    if (want > kTxBurst) want = kTxBurst;
    rte_mbuf** m = eng_.txb.m.data();
    unsigned n = 0;
    while (n < want && (m[n] = eng_.io.alloc()) != nullptr) ++n;
    if (n == 0) {
      ++eng_.ctr.tx_stalls;
      break;
    }
    IoList remote(eng_.txb.remote.data(), unsigned(eng_.txb.remote.size()));
    unsigned built = 0;
    uint64_t off = r->offset;
    uint32_t psn = r->next_psn;
    for (; built < n; ++built) {
      const uint64_t rem = r->length - off;
      const uint32_t len = uint32_t(rem < qp.mtu ? rem : qp.mtu);
      const bool first = psn == r->start_psn, last = rem <= qp.mtu;
      const uint8_t low = first && last ? kReadRespOnly
                          : first       ? kReadRespFirst
                          : last        ? kReadRespLast
                                        : kReadRespMiddle;
      const uint8_t opc = opcode(Transport::kRC, Op(low));
      const HdrLayout& at = layout(opc);
      const unsigned pad = (4 - (len & 3)) & 3;
      const unsigned total = kBthLen + at.payload + len + pad;
      uint8_t* b = total > UINT16_MAX
                       ? nullptr
                       : reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m[built], uint16_t(total)));
      if (!b) break;
      put_bth(b, opc, false, pad, qp.attr.dest_qp_num, false, psn, qp.pkey);
      if (at.aeth != kAbsent) aeth_set(b + kBthLen + at.aeth, syn, qp.msn);
      uint8_t* payload = b + kBthLen + at.payload;
      if (pad) std::memset(payload + len, 0, pad);
      if (mem) remote.add(mem.host + off, len);  // none: a zero-length READ
      eng_.txb.bth[built] = b;
      eng_.txb.local[built] = iovec{payload, len};
      off += len;
      psn = (psn + 1) & kPsnMask;
    }
    unsigned ok = built;
    if (remote.bytes) {
      const size_t got = mem.client->mem.readv(eng_.txb.local.data(), built, remote.iov, remote.n,
                                               eng_.sched.now(), eng_.ctr.dma_calls);
      if (got < remote.bytes) {
        size_t whole = 0;
        ok = 0;
        while (ok < built && whole + eng_.txb.local[ok].iov_len <= got) whole += eng_.txb.local[ok++].iov_len;
      }
    }
    unsigned k = 0;
    for (; k < ok; ++k) {
      if (k && !eng_.io.can_transmit(qp.route)) break;
      const uint32_t len = uint32_t(eng_.txb.local[k].iov_len);
      ++eng_.ctr.tx_packets;
      eng_.ctr.tx_bytes += rte_pktmbuf_data_len(m[k]);
      eng_.io.transmit(m[k], qp.route);
      r->offset += len;
      r->next_psn = (r->next_psn + 1) & kPsnMask;
    }
    for (unsigned i = k; i < n; ++i) rte_pktmbuf_free(m[i]);
    sent += k;
    if (r->offset == r->length && psn_diff(r->next_psn, r->last_psn) > 0) {
      r->pending = false;
      --qp.res_pending;
    }
    if (ok < built) {
      // The app's memory under a registered region is gone: Remote
      // Operational Error for the first packet that could not be read.
      ++eng_.ctr.dma_errors;
      if (r->pending) {
        r->pending = false;
        --qp.res_pending;
      }
      owe_response(qp, make_syndrome(AckType::kNak, kNakRemoteOperationalError), r->next_psn,
                   true);
      eng_.qp_to_error(qp, false);
      break;
    }
    if (k < ok || built < n) break;  // the port filled up
  }
  return sent;
}

}  // namespace vf::engine
