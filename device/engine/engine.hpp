// The context every stage of the transport shares, as rxe's stages share
// struct rxe_dev: the device's configuration, its port, counters, object
// tables and the two preallocated batches, plus the few services all of them
// call (lookups, the SGE walk, posting a CQE, async events, moving a QP to
// ERR). The stages are structs over it, one per concern:
//   Requester (requester.hpp)  SQ -> request packets, READ/atomic requests, UD sends
//   Completer (completer.hpp)  ACK/NAK, READ responses, atomic ACKs -> send completions
//   Responder (responder.hpp)  requests -> RQ/SRQ, ACK/NAK and READ/atomic responses
//   Placement (placement.hpp)  the receive placement queue -> apps, then the stage hooks
// and Hca::Impl (hca_impl.hpp) is the verbs front end and the poll loop.
// Single-threaded on the lcore: no member here is ever shared across threads.
#pragma once

#include <cstdint>

#include "device/engine/hca.hpp"
#include "device/engine/object_tables.hpp"
#include "device/engine/batches.hpp"
#include "device/engine/mcast.hpp"
#include "device/engine/qp.hpp"

namespace vf::engine {

// Transport tuning (see the report in hca.cpp's header comment).
inline constexpr uint32_t kMaxInflightPsn = 1024;  // unacked packets per QP
inline constexpr uint32_t kAckReqEvery = 16;       // AckReq at least every N packets
inline constexpr unsigned kAckCoalesceMax = 16;    // owed ACKs before one is forced out
inline constexpr unsigned kQpQuantum = 16;         // packets per QP per poll round
inline constexpr uint32_t kMaxQps = 65535;         // QPN = gen << 16 | slot
inline constexpr uint32_t kMaxMrs = 65535;         // key = tag << 16 | slot, tag < 0x8000
inline constexpr uint32_t kMaxMws = 65535;         // key = 1 << 31 | tag << 24 | slot << 8 | byte

struct Engine {
  // Takes the configuration with its limits clamped to what the engine's
  // handle, key and ring layouts can represent.
  Engine(const HcaConfig&, vf::Scheduler&, dp::HostPort&);

  HcaConfig cfg;
  vf::Scheduler& sched;
  dp::HostPort& io;
  EventSink* sink = nullptr;
  // Told when work arrives that only poll() will do (a frame, egress space,
  // a QP timer): a virtual-time owner polls just the engines that have work.
  void (*on_wake)(void*) = nullptr;
  void* wake_ctx = nullptr;
  void wake() const {
    if (on_wake) on_wake(wake_ctx);
  }
  Counters ctr;
  ObjectTables objs;
  RxPlacementQueue rxq;  // batches.hpp
  TxBurst txb;           // batches.hpp
  McastTable mcast;      // mcast.hpp: UD multicast groups

  // Active MTU in bytes, as the port has it now (the SM may change it).
  uint32_t port_mtu() const { return io.info().mtu; }

  // ---- lookups (a handle or key of another client never resolves)
  Client* client(ClientId id) const { return objs.client(id); }
  template <class T>
  T* owned(ClientId id, uint32_t h) const {
    return objs.owned<T>(client(id), h);
  }
  Qp* qp_by_qpn(uint32_t qpn) const {
    Qp* q = objs.of<Qp>().get(qpn & 0xFFFF);
    return q && q->qpn == qpn ? q : nullptr;
  }
  Mr* mr_by_lkey(uint32_t key) const {
    Mr* m = objs.of<Mr>().get(key & 0xFFFF);
    return m && m->lkey == key ? m : nullptr;
  }
  Mr* mr_by_rkey(uint32_t key) const {
    Mr* m = objs.of<Mr>().get(key & 0xFFFF);
    return m && m->rkey == key ? m : nullptr;
  }
  // Whether an R_Key names a window (bit 31) rather than a region.
  static bool is_mw_key(uint32_t key) { return key >> 31; }
  Mw* mw_by_rkey(uint32_t key) const {
    if (!is_mw_key(key)) return nullptr;
    Mw* w = objs.of<Mw>().get((key >> 8) & 0xFFFF);
    return w && w->rkey == key ? w : nullptr;
  }

  // ---- mw.cpp
  // What a remote request's R_Key lets it reach, with the IBA's checks for
  // an MR (IBA 10.6.3.4) or a bound window (10.6.7.3): of the QP's PD, a
  // type 2 window bound on this QP, `access` granted, [va, va+len) inside.
  struct RemoteMem {
    Client* client = nullptr;
    uint64_t host = 0;  // the app's address of va
    explicit operator bool() const { return client != nullptr; }
  };
  RemoteMem remote_mem(const Qp& qp, uint32_t rkey, uint64_t va, uint64_t len, uint32_t access) const;
  // A BIND_MW work request reached by `qp`'s requester: the window bound as
  // it asks, or IBV_WC_MW_BIND_ERR and the window as it was.
  ibv_wc_status bind_mw(Qp& qp, const vhca_send_wqe& wqe);
  // LOCAL_INV (`remote` false) or a SEND with Invalidate received on `qp`:
  // the type 2 window `rkey` unbound; false when the key names no window
  // that may be invalidated there.
  bool invalidate(Qp& qp, uint32_t rkey, bool remote);

  // ---- sge_walk.cpp
  // The pieces [off, off+len) of an SGE list, each SGE's lkey checked: of
  // client `c` and PD `pd`, with `need_access`, inside its region. False ->
  // the caller's IBA protection error.
  bool collect_sges(const vhca_sge* sge, unsigned num_sge, const Client* c, const Pd* pd,
                    uint32_t need_access, uint64_t off, uint32_t len, IoList& iol) const;

  // ---- cq.cpp
  // Writes a CQE; false (and the CQ in error) on overrun or a hostile index.
  bool cq_post(Cq&, const vhca_cqe&, bool solicited);

  // ---- engine.cpp
  void async_event(Client*, ibv_event_type, uint32_t handle);
  void async_qp_event(Qp&, ibv_event_type);
  // Moves a QP to ERR: timers off, the flush happens in poll(). `fatal_event`
  // raises IBV_EVENT_QP_FATAL (errors that no completion reports).
  void qp_to_error(Qp&, bool fatal_event);
};

}  // namespace vf::engine
