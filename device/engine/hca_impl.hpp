// Hca::Impl: the verbs front end and the poll loop over the transport's
// stages (engine.hpp has the map). Slow path, one file per object: hca.cpp
// (clients, device/port queries, PDs, poll and receive dispatch), mr.cpp, mw.cpp,
// cq.cpp, qp.cpp (create/query/destroy), qp_state.cpp (modify_qp and the
// IBA state machine), srq.cpp, ah.cpp. Object storage: object_tables.hpp.
// Packet layouts come from dataplane/wire/opcode.hpp, work-request rules from
// device/abi/vhca_wr_ops.h.
#pragma once

#include <cstdint>
#include <vector>

#include "device/engine/completer.hpp"
#include "device/engine/engine.hpp"
#include "device/engine/gsi.hpp"
#include "device/engine/smi.hpp"
#include "device/engine/placement.hpp"
#include "device/engine/requester.hpp"
#include "device/engine/responder.hpp"

namespace vf::engine {

class Hca::Impl {
 public:
  Impl(const HcaConfig&, vf::Scheduler&, dp::HostPort&);
  ~Impl();

  // ---- slow path (hca.cpp, mr.cpp, cq.cpp, qp.cpp, qp_state.cpp, srq.cpp, ah.cpp)
  int open_client(ClientId, pid_t, int mem_fd, vhca_open_context_rsp&);
  void close_client(ClientId);
  int query_device(ClientId, vhca_query_device_rsp&);
  int query_port(ClientId, const vhca_query_port_req&, vhca_query_port_rsp&);
  int query_clock(ClientId, vhca_query_clock_rsp&);
  int alloc_pd(ClientId, vhca_alloc_pd_rsp&);
  int dealloc_pd(ClientId, const vhca_handle_req&);
  int reg_mr(ClientId, const vhca_reg_mr_req&, vhca_reg_mr_rsp&);
  int dereg_mr(ClientId, const vhca_handle_req&);
  int alloc_mw(ClientId, const vhca_alloc_mw_req&, vhca_alloc_mw_rsp&);  // mw.cpp
  int dealloc_mw(ClientId, const vhca_handle_req&);
  int create_cq(ClientId, const vhca_create_cq_req&, vhca_create_cq_rsp&, Fd&);
  int rereg_mr(ClientId, const vhca_rereg_mr_req&, vhca_rereg_mr_rsp&);
  int destroy_cq(ClientId, const vhca_handle_req&);
  int resize_cq(ClientId, const vhca_resize_cq_req&, vhca_resize_cq_rsp&, Fd&);
  int create_qp(ClientId, const vhca_create_qp_req&, vhca_create_qp_rsp&, Fd&, Fd&);
  int modify_qp(ClientId, const vhca_modify_qp_req&);
  int query_qp(ClientId, const vhca_query_qp_req&, vhca_query_qp_rsp&);
  int destroy_qp(ClientId, const vhca_handle_req&, vhca_destroy_qp_rsp&);
  int create_srq(ClientId, const vhca_create_srq_req&, vhca_create_srq_rsp&, Fd&);
  int modify_srq(ClientId, const vhca_modify_srq_req&);
  int query_srq(ClientId, const vhca_handle_req&, vhca_query_srq_rsp&);
  int destroy_srq(ClientId, const vhca_handle_req&, vhca_destroy_qp_rsp&);
  int create_ah(ClientId, const vhca_create_ah_req&, vhca_create_ah_rsp&);
  int destroy_ah(ClientId, const vhca_handle_req&);
  int attach_mcast(ClientId, const vhca_mcast_req&);  // mcast.cpp
  int detach_mcast(ClientId, const vhca_mcast_req&);

  // ---- fast path (hca.cpp)
  bool poll(unsigned budget);
  void receive(rte_mbuf*, const RxMeta&);
  void drop_unprocessed(rte_mbuf*, uint32_t dqpn, const Qp* qp);
  Hca::ObjectCounts counts() const { return eng_.objs.counts(); }

  Engine eng_;
  GsiFn gsi_;             // QP1's hook (gsi.cpp)
  uint32_t gsi_psn_ = 0;  // PSNs of QP1's datagrams
  SmiFn smi_;             // QP0's hook (smi.cpp)
  uint32_t smi_psn_ = 0;
  // gsi.cpp: one MAD from QP0 or QP1 as a UD datagram to the same QP at `r`.
  bool send_mad(const uint8_t* mad, const dp::Route& r, uint32_t qpn, uint32_t qkey, uint32_t& psn);

 private:
  // Destroys an object whatever uses it (its client is going): a QP leaves
  // the transport first, the rest only drop their references.
  template <class T>
  void destroy_obj(T& o) { eng_.objs.release(o); }
  void destroy_obj(Qp&);
  // dealloc_pd / destroy_cq: refused while anything uses the object (EBUSY,
  // as uverbs does).
  template <class T>
  int destroy_unused(ClientId id, uint32_t h) {
    T* o = eng_.owned<T>(id, h);
    if (!o) return ENOENT;  // uverbs: no such object of this context
    if (o->users) return EBUSY;
    eng_.objs.release(*o);
    return 0;
  }
  template <class... T>
  void destroy_all(const Client* c, TypeList<T...>) {
    (destroy_all_of<T>(c), ...);
  }
  template <class T>
  void destroy_all_of(const Client* c) {
    for (uint32_t h : eng_.objs.handles_of<T>(c)) destroy_obj(*eng_.objs.of<T>().get(h));
  }
  void qp_reset_state(Qp&);
  // A QP going away takes its type 2 windows' bindings with it (mw.cpp).
  void invalidate_windows_of(Qp&);
  // A QP in ERR: every posted WQE completes flushed, at most `budget`.
  unsigned flush(Qp& qp, unsigned budget) {
    const unsigned n = comp_.flush_sq(qp, budget);
    return n + resp_.flush_rq(qp, budget - n);
  }
  uint32_t random32();
  // mcast.cpp: a datagram to DestQP 0xFFFFFF, fanned out to the group's QPs.
  void mcast_receive(const Pkt& p, const RxMeta& meta, rte_mbuf* m);
  // gsi.cpp: a datagram to QP1, for the daemon's CM agent.
  void gsi_receive(const Pkt& p, const RxMeta& meta, rte_mbuf* m);
  // smi.cpp: a datagram to QP0, for the daemon's subnet management agent.
  void smi_receive(const Pkt& p, const RxMeta& meta, rte_mbuf* m);
  bool sent_by_this_port(const RxMeta& meta) const;

  // The stages; each only takes the others' addresses when constructed.
  Placement place_{eng_, comp_, resp_};
  Completer comp_{eng_, place_};
  Responder resp_{eng_, place_};
  Requester req_{eng_, comp_, place_};

  std::vector<uint32_t> mr_last_tags_;  // per MR slot: rkey tag << 16 | lkey tag
  std::vector<uint32_t> mw_last_keys_;  // per MW slot: the last R_Key it had
  std::vector<uint8_t> qp_gen_;  // per QP slot: QPN generation (1..254)
  std::vector<Qp*> active_;      // every QP, for the poll scan
  size_t rr_ = 0;                // round-robin cursor into active_
  uint64_t rng_;
};

}  // namespace vf::engine
