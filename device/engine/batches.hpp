// The engine's two preallocated batches: the receive placement queue
// (payloads accepted in order, placed with one DMA write per app by the
// Placement stage, placement.hpp) and the transmit burst (packets of one WQE
// filled with one DMA read; requester.cpp, rd_atomic_responder.cpp). Fixed
// arrays: nothing is allocated per packet.
#pragma once

#include <sys/uio.h>

#include <array>
#include <cstdint>

#include "device/engine/dma.hpp"
#include "device/engine/packet.hpp"
#include "device/engine/qp.hpp"

namespace vf::engine {

inline constexpr unsigned kTxBurst = 32;  // packets of one WQE filled by one DMA read
inline constexpr unsigned kRxBatch = 64;  // received packets queued for one DMA write
// A full queue's remote pieces fit one system call.
static_assert(kRxBatch * VHCA_MAX_SGE <= ProcessMem::kIovMax);

// A packet accepted in PSN order whose payload is not in the app yet: a
// request (SEND / RDMA WRITE: its receive completion and ACK wait with it) or,
// on the requester side, a READ response or atomic ACK (its send completion
// waits with it; e.p.flags has kIsResponse). See placement.cpp.
struct RxPlacement {
  enum State : uint8_t { kWaiting, kPlaced, kFailed, kSkipped };
  Qp* qp;
  rte_mbuf* m;        // owns the payload until the flush
  Pkt p;              // points into m
  uint64_t wr_id;     // the receive WQE it lands in,
  uint32_t rq_index;  // and that WQE's RQ index
  uint32_t byte_len;  // message bytes up to and including this packet
  uint16_t slid;
  uint8_t sl;
  uint8_t niov;
  bool has_wqe;  // a receive WQE is behind it (SEND; last packet of WRITE with immediate)
  State state;
  // UD (ud_receive.cpp): p.payload/p.paylen then cover the 40-byte GRH area
  // and the payload; the headers they overwrote were copied here first.
  bool ud = false;
  bool ud_grh;  // IBV_WC_GRH
  bool ud_imm;
  uint32_t ud_imm_data;  // network order
  uint32_t ud_src_qp;
  iovec iov[VHCA_MAX_SGE];  // where the payload goes in the app
};

// What a stage's accept path returns for a received packet.
enum class Rx {
  kQueued,     // the packet (and its mbuf) is in the placement queue
  kDone,       // handled: the caller frees the mbuf
  kUnordered,  // only when offered !ordered: nothing observable was done; the
               // queue must be placed first and the packet offered again
};

struct RxPlacementQueue {
  // The slot the next accepted packet fills (the caller checked !full()).
  RxPlacement& next() { return q[n]; }
  bool full() const { return n == kRxBatch; }
  // next() is filled in: it joins the queue; `due` -- it carries a
  // completion or an ACK request -- makes the next poll() place the queue.
  void commit(bool is_due) {
    ++q[n++].qp->rx_pending;
    due |= is_due;
  }

  std::array<RxPlacement, kRxBatch> q;
  unsigned n = 0;
  bool due = false;  // some entry carries a completion or an ACK request
  uint64_t gen = 0;  // flushes so far (tags QPs that fail in one)
  std::array<iovec, kRxBatch> local;
  std::array<iovec, kRxBatch * VHCA_MAX_SGE> remote;
  std::array<unsigned, kRxBatch> batch;
};

// Without merging a packet needs at most VHCA_MAX_SGE remote pieces, so a
// burst always fits.
struct TxBurst {
  std::array<rte_mbuf*, kTxBurst> m;
  std::array<uint8_t*, kTxBurst> bth;
  std::array<iovec, kTxBurst> local;
  std::array<iovec, kTxBurst * VHCA_MAX_SGE> remote;
};

}  // namespace vf::engine
