// The device engine's public face: one virtual HCA (vHCA). The daemon calls the
// slow-path verbs from the device socket (on the lcore), runs poll() in its
// loop, and the port hands it received packets. Everything runs on one lcore:
// no locks, no threads, no sleeps; timers live on the shared vf::Scheduler.
//
// Threading contract: every method is called on the lcore thread only.
// Re-entrancy contract: HostPort::transmit() must never call back into any
// Hca synchronously (the port queues; delivery happens later from its own
// poll or timer), so loopback to the same vHCA is fine.
#pragma once

#include <infiniband/verbs.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/scheduler.hpp"
#include "device/engine/dcqcn.hpp"
#include "device/engine/gsi.hpp"
#include "device/engine/smi.hpp"
#include "device/engine/mcast.hpp"
#include "device/abi/vhca_abi.h"
#include "core/counter_def.hpp"
#include "dataplane/fabric/host_port.hpp"

struct rte_mbuf;

namespace vf::engine {

using wire::RxMeta;

using ClientId = uint32_t;  // one per provider context (socket); the daemon assigns

// An fd for the app, passed with SCM_RIGHTS. The caller owns it (closes it after
// sending). Left at -1 whenever the verb fails.
struct Fd {
  int fd = -1;
};

// What query_device reports, and what the engine enforces.
struct DeviceLimits {
  uint32_t max_qp = 4096;     // at most 65536 (QPN layout)
  uint32_t max_qp_wr = 4096;  // per SQ / RQ
  uint32_t max_cq = 4096;
  // ConnectX's (2^22 - 1): ofi_rxm sizes a CQ for 256 peers (~200k entries).
  // Ring entries are a power of two, so cqe+1 fits; the ring is sparse memory.
  uint32_t max_cqe = (1u << 22) - 1;
  uint32_t max_mr = 65535;   // at most 65535 (key layout)
  uint32_t max_mw = 65535;   // at most 65535 (key layout)
  uint32_t max_pd = 4096;
  uint64_t max_mr_size = 1ull << 40;
  uint32_t max_msg_sz = 1u << 31;
  uint8_t max_qp_rd_atom = 16;       // responder resources (max_dest_rd_atomic ceiling)
  uint8_t max_qp_init_rd_atom = 16;  // initiator depth (max_rd_atomic ceiling)
  uint32_t max_srq = 1024;
  uint32_t max_srq_wr = 32768;  // like mlx5; the ring is a power of two >= max_wr
  uint32_t max_srq_sge = VHCA_MAX_SGE;
  uint32_t max_ah = 65535;
  // UD multicast: rxe's limits (mcast.hpp), what query_device reports.
  uint32_t max_mcast_grp = kMaxMcastGroups;
  uint32_t max_mcast_qp_attach = kMaxMcastQpAttach;
  uint32_t max_total_mcast_qp_attach = kMaxTotalMcastAttach;
};

inline constexpr uint32_t kVendorId = 0xFFFFFF;
inline constexpr uint32_t kVendorPartId = 0x5646;  // "VF"
inline constexpr uint32_t kHwVer = 1;

struct HcaConfig {
  std::string name = "vhca0";
  uint64_t node_guid = 0;       // host order
  uint64_t sys_image_guid = 0;  // 0 = node_guid
  std::string fw_ver = "0.1.0";
  // Device identity, as ibv_query_device reports it. Soft-RoCE's choice: the
  // IBTA's 0xFFFFFF for "no registered vendor" (never a real vendor's OUI);
  // the part is "VF" and this is hardware revision 1 (sysfs hw_rev agrees).
  uint32_t vendor_id = kVendorId;
  uint32_t vendor_part_id = kVendorPartId;
  uint32_t hw_ver = kHwVer;
  DeviceLimits limits;
  // RoCE congestion control (dcqcn.hpp); off unless the daemon turns it on.
  DcqcnConfig dcqcn;
  // Port 1's attributes are not here: they are the port's PortInfo
  // (HostPort::info()), which query_port reports as it is at that moment.
};

// Notifications the daemon forwards to apps (completion channel sockets and the
// context's async-event stream). Called on the lcore, from poll(), receive(), a
// timer or a slow-path verb (which first completes queued placements); must not
// call back into the Hca.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // A CQ armed by the app (ring hdr `arm`/`arm_sn`) got a qualifying CQE.
  virtual void cq_event(ClientId, uint32_t cq_handle) = 0;
  // Affiliated async event; `handle` is the QP, CQ or SRQ handle it concerns
  // (the event type says which): IBV_EVENT_COMM_EST, IBV_EVENT_SQ_DRAINED,
  // IBV_EVENT_QP_FATAL, IBV_EVENT_QP_REQ_ERR, IBV_EVENT_QP_ACCESS_ERR,
  // IBV_EVENT_QP_LAST_WQE_REACHED (QP), IBV_EVENT_CQ_ERR (CQ),
  // IBV_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_SRQ_ERR (SRQ).
  virtual void async_event(ClientId, ibv_event_type, uint32_t handle) = 0;
};

struct Counters {
  uint64_t tx_packets = 0, tx_bytes = 0;  // transport bytes (BTH .. pad)
  uint64_t rx_packets = 0, rx_bytes = 0;
  uint64_t rx_dropped = 0;        // malformed, unknown QP, wrong state, bad source/P_Key
  uint64_t tx_stalls = 0;         // can_transmit() false or alloc() failed
  uint64_t retransmit_timeouts = 0;
  uint64_t retransmitted_packets = 0;
  uint64_t seq_naks_sent = 0, seq_naks_rcvd = 0;
  uint64_t rnr_naks_sent = 0, rnr_naks_rcvd = 0;
  uint64_t other_naks_sent = 0, other_naks_rcvd = 0;
  uint64_t acks_sent = 0, acks_rcvd = 0;
  uint64_t duplicate_requests = 0;
  uint64_t dma_errors = 0;        // process_vm_* short or failed
  uint64_t dma_calls = 0;         // process_vm_* system calls made (the lcore's main cost)
  uint64_t hostile_ring_events = 0;  // bad index / WQE from an app
  uint64_t cq_overruns = 0;
  uint64_t cqes = 0;
  // UD receive drops (also counted in rx_dropped): Q_Key mismatch (reported
  // as the port's qkey_viol_cntr) and no receive WQE posted (UD has no RNR).
  uint64_t qkey_violations = 0;
  uint64_t pkey_violations = 0;
  uint64_t ud_no_wqe_drops = 0;
  // UD multicast (mcast.cpp): datagrams to a group with a member here (each
  // then received once per member QP), to a group without one (also in
  // rx_dropped), and member copies lost for want of an mbuf.
  uint64_t mcast_rx_packets = 0;
  uint64_t mcast_rx_no_member = 0;
  uint64_t mcast_copy_failures = 0;
  // RC responder: request packets that arrived ahead of the expected PSN (a
  // packet before them was lost), each one, as mlx5's out_of_sequence.
  uint64_t out_of_sequence = 0;
  // DCQCN (dcqcn.hpp), mlx5's names: CE-marked RoCE packets received and the
  // CNPs sent for them; CNPs received and acted on, or ignored.
  uint64_t np_ecn_marked_roce_packets = 0;
  uint64_t np_cnp_sent = 0;
  uint64_t rp_cnp_handled = 0;
  uint64_t rp_cnp_ignored = 0;
  // RC/UC/UD packets for a QP that cannot take them, by why (each also in
  // rx_dropped): no QP ever had that number here; its QP was destroyed while
  // the packet was in flight (a peer tearing down mid-transfer); its QP is in
  // RESET, INIT or ERR; or it is not from the connected QP's peer, or not of
  // the QP's transport.
  uint64_t rx_qp_unknown = 0;
  uint64_t rx_qp_destroyed = 0;
  uint64_t rx_qp_not_ready = 0;
  uint64_t rx_qp_mismatch = 0;
};

// Every field of Counters with its name, unit and meaning (counters.cpp);
// the sysfs names follow rxe's hw_counters where rxe has the same counter.
extern const CounterTable kEngineCounters;

class Hca {
 public:
  Hca(const HcaConfig&, vf::Scheduler&, dp::HostPort&);
  ~Hca();
  Hca(const Hca&) = delete;
  Hca& operator=(const Hca&) = delete;

  void set_event_sink(EventSink*);  // optional; events are dropped without one
  // Optional: `fn(ctx)` runs whenever work arrives that the next poll() will
  // do -- a received frame, egress space, a QP timer -- but not for doorbells
  // (the app's owner knows when it posts). Lets a virtual-time fabric poll
  // only the engines that have work instead of all of them every pass.
  void set_wake(void (*fn)(void*), void* ctx);
  const HcaConfig& config() const;
  // DCQCN's parameters from now on (the link's rate changed, an operator
  // retuned them). QPs already limited keep their rates and converge under
  // the new ones; a rate above a lower line is cut at the next update.
  void set_dcqcn(const DcqcnConfig& c);

  // ---- slow path. Request structs come straight from the app (size already
  // checked == sizeof, header checked by the daemon); every field is validated
  // here. Returns 0 or a positive errno (what the verb returns). Only the body
  // of a response is written; its hdr is the daemon's. The doorbell eventfd and
  // status page of OPEN_CONTEXT belong to the lcore, not to the engine.
  // `mem_fd` is the client's own /proc/<pid>/mem (see dma.hpp), owned by the
  // engine from here on, also on failure. EEXIST, EACCES, ESRCH.
  int open_client(ClientId, pid_t pid, int mem_fd, vhca_open_context_rsp&);
  void close_client(ClientId);  // uverbs-style teardown of every object of the client
  // The client's process holds CAP_NET_RAW: it may set controlled Q_Keys
  // (modify_qp with the high bit; EPERM for everyone else, as uverbs does).
  void allow_controlled_qkeys(ClientId);
  // The client is this process itself (the virtual-time fabric's in-process
  // apps): its memory is copied with memcpy instead of system calls
  // (ProcessMem::copy_in_process). 0, or EINVAL for any other process.
  int copy_in_process(ClientId);
  int query_device(ClientId, vhca_query_device_rsp&);
  int query_port(ClientId, const vhca_query_port_req&, vhca_query_port_rsp&);
  int query_clock(ClientId, vhca_query_clock_rsp&);  // the emulated ns CQEs are stamped with
  int alloc_pd(ClientId, vhca_alloc_pd_rsp&);
  int dealloc_pd(ClientId, const vhca_handle_req&);  // EBUSY while MRs/QPs use it
  int reg_mr(ClientId, const vhca_reg_mr_req&, vhca_reg_mr_rsp&);
  int dereg_mr(ClientId, const vhca_handle_req&);  // EBUSY while windows are bound to it
  // Memory windows: bound and invalidated by work requests (IBV_WR_BIND_MW,
  // LOCAL_INV, SEND_WITH_INV); dealloc_pd is EBUSY while one exists.
  int alloc_mw(ClientId, const vhca_alloc_mw_req&, vhca_alloc_mw_rsp&);
  int dealloc_mw(ClientId, const vhca_handle_req&);
  int create_cq(ClientId, const vhca_create_cq_req&, vhca_create_cq_rsp&, Fd& ring_memfd);
  int rereg_mr(ClientId, const vhca_rereg_mr_req&, vhca_rereg_mr_rsp&);
  int destroy_cq(ClientId, const vhca_handle_req&);  // EBUSY while QPs use it
  // A new ring with the unread CQEs; EINVAL if they would not fit.
  int resize_cq(ClientId, const vhca_resize_cq_req&, vhca_resize_cq_rsp&, Fd& ring_memfd);
  int create_qp(ClientId, const vhca_create_qp_req&, vhca_create_qp_rsp&, Fd& sq_memfd,
                Fd& rq_memfd);
  int modify_qp(ClientId, const vhca_modify_qp_req&);
  int query_qp(ClientId, const vhca_query_qp_req&, vhca_query_qp_rsp&);
  int destroy_qp(ClientId, const vhca_handle_req&, vhca_destroy_qp_rsp&);
  // Shared receive queues: the ring holds vhca_recv_wqe like an RQ; QPs
  // created with srq_handle consume from it. IBV_EVENT_SRQ_LIMIT_REACHED goes
  // to the sink (handle = SRQ handle) once per arming (modify IBV_SRQ_LIMIT).
  int create_srq(ClientId, const vhca_create_srq_req&, vhca_create_srq_rsp&, Fd& ring_memfd);
  int modify_srq(ClientId, const vhca_modify_srq_req&);
  int query_srq(ClientId, const vhca_handle_req&, vhca_query_srq_rsp&);
  int destroy_srq(ClientId, const vhca_handle_req&);  // EBUSY while QPs use it
  // The same, also reporting the async events raised for the SRQ (the
  // DESTROY_SRQ reply's events_reported, as for DESTROY_QP).
  int destroy_srq(ClientId, const vhca_handle_req&, vhca_destroy_qp_rsp&);
  // Address handles for UD sends; an AH is usable only by QPs of its PD.
  int create_ah(ClientId, const vhca_create_ah_req&, vhca_create_ah_rsp&);
  int destroy_ah(ClientId, const vhca_handle_req&);
  // UD multicast (mcast.hpp): EINVAL for a QP that is not UD, a GID that is
  // not multicast or, on InfiniBand, a LID outside 0xC000..0xFFFE; ENOMEM at
  // the limits; detaching a pair that is not attached is EINVAL.
  int attach_mcast(ClientId, const vhca_mcast_req&);
  int detach_mcast(ClientId, const vhca_mcast_req&);
  // Told when the port joins or leaves an MLID (the subnet manager's join).
  void on_mcast_membership(McastMembershipFn);
  // QP1 (gsi.hpp): MADs that arrive for it go to `fn` (none: dropped), and
  // send_gsi sends one 256-byte MAD from it to QP1 at `av`; false when the
  // port has no room or mbuf now (MADs may be lost; their senders retry).
  // Lcore only.
  void on_gsi(GsiFn fn);
  bool send_gsi(const uint8_t* mad, const ibv_ah_attr& av);
  // QP0 (smi.hpp), the same for SMPs: taken on VL15 only, sent on VL15 to
  // `dlid` (0xFFFF for a directed route). Lcore only.
  void on_smi(SmiFn fn);
  bool send_smi(const uint8_t* mad, uint16_t dlid);

  // ---- fast path.
  // Scans SQs/RQs for newly posted work, runs requesters (new WQEs,
  // retransmissions, RNR retries), sends coalesced ACKs, flushes QPs in ERR.
  // `budget` bounds packets+completions produced. Returns true if it did
  // anything; false means no work at all is pending right now (only timers on
  // the Scheduler may create more) -- the daemon's sleep test.
  // The daemon must call it after every burst of receive() calls: it places
  // the payloads that burst left queued and sends the ACKs owed.
  bool poll(unsigned budget = 64);
  // Control path, before a command that sets an address vector runs
  // (modify_qp with IBV_QP_AV, create_ah): resolves what its packets need
  // first -- a RoCE next hop's MAC -- and calls `done(0)`, or an errno as
  // the kernel's modify_qp / create_ah would fail (ETIMEDOUT, ENETUNREACH).
  void resolve_route(const ibv_ah_attr& av, std::function<void(int err)> done);
  // A packet for this vHCA: data at the BTH, ICRC removed, pad still present.
  // Takes ownership. ACKs it owes are coalesced and sent by the next poll().
  // An in-order request's payload is queued (the mbuf kept), not written at
  // once: poll() places a burst with one DMA call per app, and always before
  // the receive completion or the ACK that depends on it. Every other packet,
  // timer or verb that could make the queue's state observable places it
  // first, so apps see exactly what packet-at-a-time placement would give.
  void receive(rte_mbuf*, const RxMeta&);
  // The port's egress drained: requesters stalled on can_transmit()/alloc()
  // run again at the next poll().
  void on_transmit_space();
  // The same two as plain callbacks (ctx = the Hca), for a port to call
  // directly: nothing stands between a frame and its engine.
  static void deliver(void* hca, rte_mbuf* m, const RxMeta& meta) {
    static_cast<Hca*>(hca)->receive(m, meta);
  }
  static void transmit_space(void* hca) { static_cast<Hca*>(hca)->on_transmit_space(); }

  // ---- for fabricctl and tests.
  struct ObjectCounts {
    unsigned clients, pds, mrs, cqs, qps, srqs, ahs, mws;
  };
  ObjectCounts counts() const;

  // One QP as an operator sees it (`fabricctl qp list`): plain copies.
  struct QpView {
    uint32_t qpn;
    ibv_qp_type type;
    ibv_qp_state state;
    pid_t pid;            // the process that created it
    uint32_t dest_qpn;    // RC/UC once at RTR
    uint16_t dlid;        // RC/UC: the path's (IB)
    uint32_t sq_psn;      // next PSN the requester sends
    uint32_t snd_una;     // oldest PSN not yet acknowledged (RC)
    uint32_t epsn;        // the PSN the responder expects
    uint32_t outstanding; // send WQEs taken from the SQ and not completed
    uint8_t retry_cnt, retries_left, rnr_retry, rnr_retries_left;
    uint32_t mtu;         // bytes
    Nanos timeout_ns;     // local ACK timeout (0: none)
  };
  std::vector<QpView> qp_views() const;
  const Counters& counters() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace vf::engine
