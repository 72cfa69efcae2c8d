// Hca::Impl: the transport over the engine's objects, split over one file per
// concern like rxe. Data: object_tables.hpp (PD, MR, CQ, QP, SRQ, AH tables,
// uverbs teardown order), placement.hpp (the receive placement queue and the
// transmit burst), pacing.hpp (a QP's eligible-at time). Code: hca.cpp
// (clients, device/port queries, PDs, poll and receive dispatch), mr.cpp,
// cq.cpp, qp.cpp (create/query/destroy), qp_state.cpp (modify_qp, error and
// flush), requester.cpp, completer.cpp, responder.cpp, placement.cpp; RDMA:
// write_request.cpp (responder WRITE), rd_atomic_request.cpp (READ/atomic
// request packets), rd_atomic_responder.cpp (responder resources, READ
// responses, atomic execution), read_response.cpp (requester side of READ
// responses / atomic ACKs), request_reject.cpp (refused requests, RC vs UC);
// receive queues: srq.cpp, recv_queue.cpp (RQ or SRQ as a responder's WQE
// source); UD: ah.cpp, ud_send.cpp, ud_receive.cpp. Packet layouts come from
// dataplane/wire/opcode.hpp, work-request rules from device/abi/vhca_wr_ops.h.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "device/engine/hca.hpp"
#include "device/engine/object_tables.hpp"
#include "device/engine/packet.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/qp.hpp"

namespace vf::engine {

// Transport tuning (see the report in hca.cpp's header comment).
inline constexpr uint32_t kMaxInflightPsn = 1024;  // unacked packets per QP
inline constexpr uint32_t kAckReqEvery = 16;       // AckReq at least every N packets
inline constexpr unsigned kAckCoalesceMax = 16;    // owed ACKs before one is forced out
inline constexpr unsigned kQpQuantum = 16;         // packets per QP per poll round
inline constexpr uint32_t kMaxQps = 65535;         // QPN = gen << 16 | slot
inline constexpr uint32_t kMaxMrs = 65535;         // key = tag << 16 | slot

class Hca::Impl {
 public:
  Impl(const HcaConfig&, vf::Scheduler&, dp::HostPort&);
  ~Impl();

  // ---- slow path (hca.cpp, mr.cpp, cq.cpp, qp.cpp, qp_state.cpp)
  int open_client(ClientId, pid_t, int mem_fd, vhca_open_context_rsp&);
  void close_client(ClientId);
  int query_device(ClientId, vhca_query_device_rsp&);
  int query_port(ClientId, const vhca_query_port_req&, vhca_query_port_rsp&);
  int alloc_pd(ClientId, vhca_alloc_pd_rsp&);
  int dealloc_pd(ClientId, const vhca_handle_req&);
  int reg_mr(ClientId, const vhca_reg_mr_req&, vhca_reg_mr_rsp&);
  int dereg_mr(ClientId, const vhca_handle_req&);
  int create_cq(ClientId, const vhca_create_cq_req&, vhca_create_cq_rsp&, Fd&);
  int destroy_cq(ClientId, const vhca_handle_req&);
  int create_qp(ClientId, const vhca_create_qp_req&, vhca_create_qp_rsp&, Fd&, Fd&);
  int modify_qp(ClientId, const vhca_modify_qp_req&);
  int query_qp(ClientId, const vhca_query_qp_req&, vhca_query_qp_rsp&);
  int destroy_qp(ClientId, const vhca_handle_req&, vhca_destroy_qp_rsp&);
  // srq.cpp, ah.cpp
  int create_srq(ClientId, const vhca_create_srq_req&, vhca_create_srq_rsp&, Fd&);
  int modify_srq(ClientId, const vhca_modify_srq_req&);
  int query_srq(ClientId, const vhca_handle_req&, vhca_query_srq_rsp&);
  int destroy_srq(ClientId, const vhca_handle_req&, vhca_destroy_qp_rsp&);
  int create_ah(ClientId, const vhca_create_ah_req&, vhca_create_ah_rsp&);
  int destroy_ah(ClientId, const vhca_handle_req&);

  // ---- fast path (hca.cpp)
  bool poll(unsigned budget);
  void receive(rte_mbuf*, const RxMeta&);
  Hca::ObjectCounts counts() const;

  // ---- lookups
  Client* client(ClientId id) const { return objs_.client(id); }
  // The object `h` of type T if client `id` owns it: how every verb on an
  // existing object starts (another client's handle never resolves).
  template <class T>
  T* owned(ClientId id, uint32_t h) const {
    return objs_.owned<T>(client(id), h);
  }
  Qp* qp_by_qpn(uint32_t qpn) const {
    Qp* q = objs_.of<Qp>().get(qpn & 0xFFFF);
    return q && q->qpn == qpn ? q : nullptr;
  }
  Mr* mr_by_lkey(uint32_t key) const {
    Mr* m = objs_.of<Mr>().get(key & 0xFFFF);
    return m && m->lkey == key ? m : nullptr;
  }
  Mr* mr_by_rkey(uint32_t key) const {
    Mr* m = objs_.of<Mr>().get(key & 0xFFFF);
    return m && m->rkey == key ? m : nullptr;
  }

  // ---- cq.cpp
  // Writes a CQE; false (and the CQ in error) on overrun or a hostile index.
  bool cq_post(Cq&, const vhca_cqe&, bool solicited);

  // ---- qp.cpp / qp_state.cpp
  // Destroys an object whatever uses it (its client is going): a QP leaves
  // the transport first, the rest only drop their references.
  template <class T>
  void destroy_obj(T& o) { objs_.release(o); }
  void destroy_obj(Qp&);
  // dealloc_pd / destroy_cq: refused while anything uses the object (EBUSY,
  // as uverbs does).
  template <class T>
  int destroy_unused(ClientId id, uint32_t h) {
    T* o = owned<T>(id, h);
    if (!o) return EINVAL;
    if (o->users) return EBUSY;
    objs_.release(*o);
    return 0;
  }
  template <class... T>
  void destroy_all(const Client* c, TypeList<T...>) {
    (destroy_all_of<T>(c), ...);
  }
  template <class T>
  void destroy_all_of(const Client* c) {
    for (uint32_t h : objs_.handles_of<T>(c)) destroy_obj(*objs_.of<T>().get(h));
  }
  void qp_reset_state(Qp&);
  // Moves a QP to ERR: timers off, flush in poll(). `fatal_event` raises
  // IBV_EVENT_QP_FATAL (errors that no completion reports).
  void qp_to_error(Qp&, bool fatal_event);
  unsigned flush(Qp&, unsigned budget);
  unsigned flush_sq(Qp&, unsigned budget);  // the SQ part (also SQE: UD)
  unsigned flush_rq(Qp&, unsigned budget);  // the RQ part (not for SRQ QPs)
  void async_event(Client*, ibv_event_type, uint32_t handle);
  void async_qp_event(Qp&, ibv_event_type);

  // ---- requester.cpp
  unsigned requester_run(Qp&, unsigned budget);
  // Builds and sends up to `want` packets of `s`; returns how many went out.
  unsigned send_burst(Qp&, SendWqe& s, unsigned want, Nanos now);
  bool fetch_send_wqe(Qp&);  // copies and validates one more SQ WQE
  void seek(Qp&, uint32_t psn);  // position the requester at `psn`
  // Collects the remote pieces [off, off+len) of a WQE's SGE list, checking
  // every key; false -> the WQE fails with LOC_PROT_ERR.
  bool gather_send(Qp&, const SendWqe&, uint64_t off, uint32_t len, IoList&);
  // ---- sge_walk.cpp
  // The pieces [off, off+len) of an SGE list, each SGE's lkey checked: of
  // client `c` and PD `pd`, with `need_access`, inside its region. False ->
  // the caller's IBA protection error.
  bool collect_sges(const vhca_sge* sge, unsigned num_sge, const Client* c, const Pd* pd,
                    uint32_t need_access, uint64_t off, uint32_t len, IoList& iol) const;

  // ---- completer.cpp
  void on_response(Qp&, const Pkt&);
  // Everything before `new_una` is acknowledged (ACK, NAK or a response's
  // implicit ACK) -- except READ/atomic WQEs, which only their responses
  // complete: the acknowledgement stops at one and re-issues it (its
  // responses were lost).
  void ack_progress(Qp&, uint32_t new_una);
  void complete_acked(Qp&, uint32_t last_acked_psn);
  // Completes the WQE at the head of the SQ with an error and fails the QP.
  void fail_head(Qp&, ibv_wc_status);
  // Completes the head WQE if it is marked kError (the requester stopped there).
  bool complete_error_head(Qp&);
  void post_send_cqe(Qp&, const SendWqe&, ibv_wc_status);
  void arm_retrans(Qp&);
  static void retrans_timer_fired(vf::Timer&, Nanos);
  static void rnr_timer_fired(vf::Timer&, Nanos);
  void check_sq_drained(Qp&);

  // ---- read_response.cpp (requester side of READ / atomics)
  enum class Rx { kQueued, kDone, kUnordered };
  // A READ response or atomic ACK; same contract as on_request.
  Rx on_rd_atomic_response(Qp&, const Pkt&, rte_mbuf*, bool ordered);
  // Its placement finished (from flush_rx): advance, complete the WQE.
  void rd_atomic_response_placed(Qp&, const RxPlacement&);
  // Responses missing before snd_una's packet: go back to it once.
  void read_retry(Qp&);
  // ---- rd_atomic_request.cpp
  unsigned send_rd_atomic_request(Qp&, SendWqe&, Nanos now);

  // ---- write_request.cpp
  Rx on_write_request(Qp&, const Pkt&, const RxMeta&, rte_mbuf*, bool ordered);
  // ---- rd_atomic_responder.cpp
  Rx on_rd_atomic_request(Qp&, const Pkt&, bool ordered);
  void on_rd_atomic_duplicate(Qp&, const Pkt&);
  // Sends pending READ responses / atomic ACKs; returns packets sent.
  unsigned rd_atomic_respond(Qp&, unsigned budget);
  // Whether an ACK/NAK for `psn` must wait for earlier READ/atomic responses.
  bool response_blocked(const Qp&, uint32_t psn) const;
  // ---- request_reject.cpp
  // A request the responder refuses. RC: NAK `nak_code`, the receive WQE in
  // progress completes with `status`, the QP goes to ERR and raises `event`
  // (0: none). UC: the message is silently dropped (IBA 9.8.4).
  Rx reject(Qp&, const Pkt&, bool ordered, uint8_t nak_code, ibv_wc_status status, int event);

  // ---- responder.cpp
  // kQueued: `m` is kept in the placement queue. kDone: handled, free `m`.
  // kUnordered (only when !ordered): nothing observable was done -- the packet
  // needs a response or completion, so the queue must be placed first and
  // the packet offered again with ordered = true.
  Rx on_request(Qp&, const Pkt&, const RxMeta&, rte_mbuf* m, bool ordered);
  void owe_response(Qp&, uint8_t syndrome, uint32_t psn, bool fatal);
  bool send_response(Qp&);
  // Copies the RQ WQE at rq_spec: 1 ok, 0 RQ empty, -1 failed (QP in error),
  // kFetchUnordered: hostile, and !ordered (nothing done).
  static constexpr int kFetchUnordered = -2;
  int recv_fetch(Qp&, uint32_t psn, bool ordered);
  // The receive WQE a SEND or WRITE_WITH_IMM needs (recv_fetch): true when
  // it is in rwqe; false with `out` what on_request returns (unordered,
  // failed, UC drop, or RNR NAK owed).
  bool take_recv_wqe(Qp&, const Pkt&, bool ordered, Rx& out);
  void post_recv_cqe(Qp&, uint64_t wr_id, ibv_wc_status, uint32_t byte_len, const Pkt*,
                     uint16_t slid, uint8_t sl);
  // The responder fails: NAK, the receive WQE `rq_index` (if `have_wqe`)
  // completes with `status`, the QP goes to ERR.
  void fail_receive(Qp&, uint32_t psn, uint8_t nak_code, ibv_wc_status, bool have_wqe,
                    uint64_t wr_id, uint32_t rq_index);

  // ---- recv_queue.cpp
  // Takes the WQE recv_peek() returned: an SRQ's consumer moves (and its
  // limit event may fire); an RQ's position moves when the message ends.
  void recv_take(Qp&);
  // A hostile producer index: an RQ breaks and its QP fails (QP_FATAL); an
  // SRQ fails (SRQ_ERR) with every QP on it.
  void recv_hostile(Qp&);
  void srq_fail(Srq&);

  // ---- ud_send.cpp / ud_receive.cpp
  unsigned ud_requester_run(Qp&, unsigned budget);
  void ud_receive(Qp&, const Pkt&, const RxMeta&, rte_mbuf*);
  // A placed UD entry (or one that failed / was dropped): its completion.
  void ud_complete(RxPlacement&, bool dead);
  void post_ud_recv_cqe(Qp&, uint64_t wr_id, ibv_wc_status, uint32_t byte_len,
                        const RxPlacement*, uint16_t slid, uint8_t sl);

  // ---- placement.cpp
  // Places every queued payload (one DMA write per client), then runs what
  // waited for it, in arrival order. True if anything was queued.
  bool flush_rx();
  void place_client(unsigned first);
  void drop_rx();  // frees the queue unplaced (engine teardown only)

  // ---- data
  HcaConfig cfg_;
  vf::Scheduler& sched_;
  dp::HostPort& io_;
  // Active MTU in bytes, as the port has it now (the SM may change it).
  uint32_t port_mtu() const { return io_.info().mtu; }
  EventSink* sink_ = nullptr;
  Counters ctr_;

  ObjectTables objs_;
  std::vector<uint32_t> mr_last_tags_;  // per MR slot: rkey tag << 16 | lkey tag
  std::vector<uint8_t> qp_gen_;  // per QP slot: QPN generation (1..254)
  std::vector<Qp*> active_;      // every QP, for the poll scan
  size_t rr_ = 0;                // round-robin cursor into active_
  std::vector<Qp*> resp_list_;   // QPs owing a response

  RxPlacementQueue rxq_;  // placement.hpp
  TxBurst txb_;           // placement.hpp
  uint64_t rng_;
  uint32_t random32();
};

}  // namespace vf::engine
