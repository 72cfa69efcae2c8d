// Hca::Impl: the object tables and the transport, split over one file per
// concern like rxe: hca.cpp (clients, device/port queries, PDs, poll and
// receive dispatch), mr.cpp, cq.cpp, qp.cpp (create/query/destroy),
// qp_state.cpp (modify_qp, error and flush), requester.cpp, completer.cpp,
// responder.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "device/engine/hca.hpp"
#include "device/engine/objects.hpp"
#include "device/engine/packet.hpp"
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
  Impl(const HcaConfig&, vf::Scheduler&, PacketIo&);
  ~Impl();

  // ---- slow path (hca.cpp, mr.cpp, cq.cpp, qp.cpp, qp_state.cpp)
  int open_client(ClientId, pid_t, vhca_open_context_rsp&);
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

  // ---- fast path (hca.cpp)
  bool poll(unsigned budget);
  void receive(rte_mbuf*, const RxMeta&);
  Hca::ObjectCounts counts() const;

  // ---- lookups
  Client* client(ClientId id) const {
    auto it = clients_.find(id);
    return it == clients_.end() ? nullptr : it->second.get();
  }
  Pd* pd_of(Client* c, uint32_t h) const {
    Pd* p = pds_.get(h);
    return p && p->client == c ? p : nullptr;
  }
  Cq* cq_of(Client* c, uint32_t h) const {
    Cq* q = cqs_.get(h);
    return q && q->client == c ? q : nullptr;
  }
  Mr* mr_of(Client* c, uint32_t h) const {
    Mr* m = mrs_.get(h);
    return m && m->client == c ? m : nullptr;
  }
  Qp* qp_of(Client* c, uint32_t h) const {
    Qp* q = qps_.get(h);
    return q && q->client == c ? q : nullptr;
  }
  Qp* qp_by_qpn(uint32_t qpn) const {
    Qp* q = qps_.get(qpn & 0xFFFF);
    return q && q->qpn == qpn ? q : nullptr;
  }
  Mr* mr_by_lkey(uint32_t key) const {
    Mr* m = mrs_.get(key & 0xFFFF);
    return m && m->lkey == key ? m : nullptr;
  }
  Mr* mr_by_rkey(uint32_t key) const {
    Mr* m = mrs_.get(key & 0xFFFF);
    return m && m->rkey == key ? m : nullptr;
  }

  // ---- cq.cpp
  // Writes a CQE; false (and the CQ in error) on overrun or a hostile index.
  bool cq_post(Cq&, const vhca_cqe&, bool solicited);

  // ---- qp.cpp / qp_state.cpp
  void destroy_qp_obj(Qp&);
  void qp_reset_state(Qp&);
  // Moves a QP to ERR: timers off, flush in poll(). `fatal_event` raises
  // IBV_EVENT_QP_FATAL (errors that no completion reports).
  void qp_to_error(Qp&, bool fatal_event);
  unsigned flush(Qp&, unsigned budget);
  void async_event(Client*, ibv_event_type, uint32_t handle);
  void async_qp_event(Qp&, ibv_event_type);

  // ---- requester.cpp
  unsigned requester_run(Qp&, unsigned budget);
  bool fetch_send_wqe(Qp&);  // copies and validates one more SQ WQE
  void seek(Qp&, uint32_t psn);  // position the requester at `psn`
  // Collects the remote pieces [off, off+len) of a WQE's SGE list, checking
  // every key; false -> the WQE fails with LOC_PROT_ERR.
  bool gather_send(Qp&, const SendWqe&, uint64_t off, uint32_t len, IoList&);

  // ---- completer.cpp
  void on_response(Qp&, const Pkt&);
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

  // ---- responder.cpp
  void on_request(Qp&, const Pkt&, const RxMeta&);
  void owe_response(Qp&, uint8_t syndrome, uint32_t psn, bool fatal);
  bool send_response(Qp&);
  // Copies the RQ WQE at rq_cons: 1 ok, 0 RQ empty, -1 failed (QP in error).
  int recv_fetch(Qp&, uint32_t psn);
  void post_recv_cqe(Qp&, ibv_wc_status, uint32_t byte_len, const Pkt*, const RxMeta*);

  // ---- data
  HcaConfig cfg_;
  vf::Scheduler& sched_;
  PacketIo& io_;
  EventSink* sink_ = nullptr;
  Counters ctr_;
  uint32_t port_mtu_ = 4096;  // active MTU in bytes

  std::unordered_map<ClientId, std::unique_ptr<Client>> clients_;
  SlotTable<Pd> pds_;
  SlotTable<Mr> mrs_;
  SlotTable<Cq> cqs_;
  SlotTable<Qp> qps_;
  std::vector<uint32_t> mr_last_tags_;  // per MR slot: rkey tag << 16 | lkey tag
  std::vector<uint8_t> qp_gen_;  // per QP slot: QPN generation (1..254)
  std::vector<Qp*> active_;      // every QP, for the poll scan
  size_t rr_ = 0;                // round-robin cursor into active_
  std::vector<Qp*> resp_list_;   // QPs owing a response
  uint64_t rng_;
  uint32_t random32();
};

}  // namespace vf::engine
