// A queue pair: the requester (SQ -> packets, PSNs, retransmission, RNR
// retry), the completer (ACK/NAK -> send completions) and the responder
// (requests -> RQ consumption, placement, ACK/NAK) share this state, each
// touching its own part. Modelled on rxe's split, single-threaded on the lcore.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>

#include "core/scheduler.hpp"
#include "device/abi/vhca_abi.h"
#include "device/abi/vhca_wr_ops.h"
#include "device/engine/dcqcn.hpp"
#include "device/engine/objects.hpp"
#include "device/engine/pacing.hpp"
#include "device/engine/ring.hpp"

namespace vf::engine {

struct Qp;
class Completer;

struct QpTimer : vf::Timer {
  explicit QpTimer(Fire f) : vf::Timer(f) {}
  Qp* qp = nullptr;
};

// The engine's private copy of one send WQE, taken once when it is fetched
// from the ring; retransmissions read this copy, never the ring again.
struct SendWqe {
  enum State : uint8_t { kPending, kStarted, kError };
  vhca_send_wqe w;
  uint64_t length;     // payload bytes
  uint32_t first_psn;  // valid once started
  uint32_t last_psn;
  uint32_t pmtu;  // segment size used for this message
  State state;
  bool ranged;  // has a PSN range (was started), even if it later failed
  uint8_t status;  // ibv_wc_status when kError
  bool signaled;
};

// READ and atomics: the requester waits for response data, never an ACK.
// BIND_MW and LOCAL_INV: executed by the HCA, no packets.
inline bool wr_is_local(uint8_t opcode) {
  const vhca_wr_op* op = vhca_wr_op_info(opcode);
  return op && op->local;
}

inline bool wr_is_rd_atomic(uint8_t opcode) {
  const vhca_wr_op* op = vhca_wr_op_info(opcode);
  return op && op->rd_atomic;
}

// One responder resource (IBA 9.5 "responder resources", ibv max_dest_rd_atomic):
// a READ or atomic that was executed, kept so its responses can be sent as
// the port allows and a duplicate request can be answered again (READ:
// re-read from the duplicate's PSN; atomic: the saved original value, never
// executed twice). See rd_atomic_responder.cpp.
struct RdAtomicRes {
  bool valid;
  bool read;     // else atomic
  bool pending;  // response packets still to send
  uint32_t first_psn, last_psn;  // the PSNs the request consumed
  uint32_t start_psn;  // where the current (re-)execution began: its First/Only
  uint32_t next_psn;   // next response PSN to send
  uint64_t va;
  uint32_t rkey;
  uint64_t length, offset;  // READ: bytes of [va, va+length) sent so far
  uint64_t orig;            // atomic: the value before the operation
};
inline constexpr unsigned kRdAtomicSlots = 16;  // >= DeviceLimits::max_qp_rd_atom
// A READ may span at most this many response packets (PSNs): a quarter of
// the PSN space, so PSN comparisons across it stay unambiguous. 1 GiB at a
// 256-byte MTU; beyond max_msg_sz for larger MTUs.
inline constexpr uint64_t kMaxReadPackets = 1u << 22;

struct RecvWqe {
  vhca_recv_wqe w;
  uint64_t length;  // sum of SGE lengths
};

struct Qp {
  Qp();

  // ---- identity and configuration
  Completer* completer = nullptr;  // its retransmit timer's stage
  Client* client = nullptr;
  uint32_t handle = 0;
  uint32_t qpn = 0;
  Pd* pd = nullptr;
  Cq* scq = nullptr;
  Cq* rcq = nullptr;
  ibv_qp_type type = IBV_QPT_RC;
  bool sq_sig_all = false;
  ibv_qp_cap cap{};
  ibv_qp_state state = IBV_QPS_RESET;
  ibv_qp_attr attr{};    // what modify_qp set (returned by query_qp)
  dp::Route route;       // attr.ah_attr, as the port takes it
  uint32_t mtu = 256;    // effective path MTU in bytes (min of path_mtu and port)
  Nanos timeout_ns = 0;  // local ACK timeout, 0 = infinite
  size_t active_index = SIZE_MAX;  // position in Hca::Impl::active_ (the poll scan)

  // With an SRQ the RQ ring is a 1-entry ring the engine never reads (the
  // daemon always passes two fds); receive WQEs come from `srq`.
  SharedRing sq, rq;
  Srq* srq = nullptr;
  uint32_t windows = 0;  // type 2 MWs bound on it (invalidated when it goes)
  uint32_t mcast_attached = 0;  // multicast attachments (destroy_qp is EBUSY while any)
  bool block_self_mcast_lb = false;  // IBV_QP_CREATE_BLOCK_SELF_MCAST_LB
  uint16_t pkey = 0xFFFF;  // the port's P_Key at attr.pkey_index: sent in, and checked on, every packet
  bool last_wqe_reported = false;  // IBV_EVENT_QP_LAST_WQE_REACHED (SRQ QPs)
  std::unique_ptr<SendWqe[]> swqe;  // shadow, indexed like the SQ ring

  // ---- requester (all SQ indices are free-running like the ring's)
  uint32_t sq_cons = 0;     // oldest WQE not yet completed (published as ring consumer)
  uint32_t sq_next = 0;     // WQE being (re)transmitted
  uint32_t sq_started = 0;  // one past the last WQE given a PSN range
  uint32_t sq_fetched = 0;  // one past the last WQE copied out of the ring
  uint64_t next_offset = 0; // bytes of sq_next already sent in this pass
  uint32_t psn = 0;         // next PSN to send
  uint32_t snd_una = 0;     // oldest unacknowledged PSN
  uint32_t psn_hi = 0;      // one past the highest PSN ever sent
  uint32_t pkts_since_ackreq = 0;
  uint8_t retry_left = 0;
  uint8_t rnr_retry_left = 0;
  bool rnr_wait = false;
  bool sq_broken = false;  // hostile SQ index: the ring is never read again
  bool rq_broken = false;
  bool sq_drained_reported = false;
  bool retransmitting = false;  // between a rewind and reaching psn_hi again
  QpTimer retrans_timer;
  QpTimer rnr_timer;
  // Pacing (pacing.hpp): when the next packet may go (the rate is
  // attr.ah_attr.static_rate's); the timer only wakes the poll loop then.
  Nanos eligible_at = 0;
  QpTimer pace_timer;
  DcqcnRp rp;              // DCQCN reaction point (dcqcn.hpp)
  Nanos np_last_cnp = 0;   // notification point: when this QP last sent a CNP
  bool np_cnp_sent = false;
  // READ/atomic initiator side (read_response.cpp).
  uint32_t rd_outstanding = 0;  // READ/atomic WQEs started and not completed (max_rd_atomic)
  uint32_t rd_queued = 0;       // READ responses / atomic ACKs accepted, not yet placed
  uint32_t rd_retry_psn = 0;    // snd_una when a READ was last re-issued for a gap
  bool rd_retry_armed = false;

  // ---- responder
  // Accepting a packet (PSN, opcode, RQ WQE, keys: epsn, rcv_offset, rq_spec)
  // runs ahead of placing it (msn, rq_cons, CQEs, ACKs), which waits in the
  // Hca's placement queue; with nothing queued for the QP the two agree.
  uint32_t epsn = 0;  // expected PSN
  uint32_t msn = 0;   // messages completed and placed (24 bits on the wire)
  uint32_t rq_cons = 0;  // RQ WQEs completed (published to the app)
  uint32_t rq_spec = 0;  // RQ WQEs accepted into: `rwqe` is the one at rq_spec
  bool nak_outstanding = false;  // a PSN-sequence or RNR NAK was sent for epsn
  bool in_message = false;       // between a First and a Last packet
  bool rwqe_valid = false;       // `rwqe` holds the RQ WQE at rq_spec
  uint64_t rcv_offset = 0;
  RecvWqe rwqe{};
  bool comm_est_reported = false;
  // RDMA WRITE in progress (write_request.cpp): the RETH of its First packet.
  bool in_write = false;
  uint64_t wr_va = 0;
  uint32_t wr_rkey = 0;
  uint64_t wr_len = 0;
  // UC: the message in progress was broken (gap, error, no WQE): drop until
  // the next First/Only (IBA 9.8.4).
  bool drop_msg = false;
  // Responder resources for READ/atomic (rd_atomic_responder.cpp).
  RdAtomicRes res[kRdAtomicSlots]{};
  unsigned res_next = 0;     // slot the next new request takes (oldest reused)
  unsigned res_pending = 0;  // slots with responses still to send
  unsigned rx_pending = 0;   // accepted packets in the placement queue
  uint64_t rx_fail_gen = 0;  // == the flush that found its memory unreachable
  uint64_t rx_dead_gen = 0;  // == the flush in which the QP went to ERR

  // One response owed to the peer; a newer one supersedes (an ACK covers
  // everything before it, a NAK implies an ACK of everything before it).
  bool resp_pending = false;
  bool resp_fatal = false;  // a fatal NAK: never overwritten
  bool on_resp_list = false;
  uint8_t resp_syndrome = 0;
  uint32_t resp_psn = 0;
  uint32_t resp_msn = 0;
  unsigned acks_owed = 0;  // coalesced ACK requests behind resp_psn

  uint32_t events_reported = 0;
};

// READ/atomic and RDMA WRITE state of both sides back to nothing (RESET).
inline void reset_rd_atomic_state(Qp& qp) {
  qp.rd_outstanding = qp.rd_queued = 0;
  qp.rd_retry_armed = false;
  qp.in_write = qp.drop_msg = false;
  qp.wr_va = qp.wr_len = 0;
  qp.wr_rkey = 0;
  for (RdAtomicRes& r : qp.res) r = RdAtomicRes{};
  qp.res_next = qp.res_pending = 0;
}

// `bytes` just went out at `mbps` (0: unpaced): the next packet may go that
// much later -- from now, if the QP had been idle (no credit for idle time).
inline void pace(Qp& qp, Nanos now, uint64_t bytes, uint32_t mbps) {
  if (!mbps) return;
  qp.eligible_at = (qp.eligible_at > now ? qp.eligible_at : now) + packet_time_ns(bytes, mbps);
}


}  // namespace vf::engine
