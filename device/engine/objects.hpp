// Engine objects other than QPs: clients (one per provider context), protection
// domains, memory regions and windows, completion queues, SRQs and address
// handles. The
// tables that hold them are in object_tables.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "device/engine/dma.hpp"
#include "device/engine/hca.hpp"
#include "device/engine/ring.hpp"
#include "device/engine/route.hpp"

namespace vf::engine {

struct Client {
  ClientId id = 0;
  ProcessMem mem;
  // May give a QP a controlled Q_Key (the high bit set: IBA 10.2.5, such as
  // QP1's 0x80010000). uverbs lets only CAP_NET_RAW do that; anyone else
  // could forge the CM's and the SA's datagrams.
  bool controlled_qkeys = false;
};

struct Pd {
  Client* client = nullptr;
  uint32_t handle = 0;
  uint32_t users = 0;  // MRs, MWs, QPs, SRQs and AHs
};

// An address handle: the validated ibv_ah_attr a UD send WQE names by handle.
struct Ah {
  Client* client = nullptr;
  Pd* pd = nullptr;
  uint32_t handle = 0;
  ibv_ah_attr attr{};
  dp::Route route;  // attr, as the port takes it
};

// A shared receive queue (recv_queue.hpp says how QPs take WQEs from it).
struct Srq {
  Client* client = nullptr;
  Pd* pd = nullptr;
  uint32_t handle = 0;
  SharedRing ring;
  // WQEs copied out (published as the ring's consumer): a WQE belongs to the
  // QP that took it from then on, so the slot goes back to the app at once.
  uint32_t cons = 0;
  uint32_t max_wr = 0;   // granted (== ring entries)
  uint32_t max_sge = 0;  // granted
  uint32_t limit = 0;    // srq_limit; the event fires when armed and fewer remain
  bool armed = false;
  bool error = false;  // hostile producer index: never read again
  uint32_t users = 0;  // QPs
  uint32_t events_reported = 0;  // SRQ_LIMIT_REACHED / SRQ_ERR raised
};

struct Mr {
  Client* client = nullptr;
  Pd* pd = nullptr;
  uint32_t handle = 0;  // == slot index == low 16 bits of both keys
  uint32_t lkey = 0, rkey = 0;
  uint32_t access = 0;
  uint64_t addr = 0, length = 0;  // where the memory is in the app
  // The address keys name it by (ibv_reg_mr_iova; 0 when ZERO_BASED; else
  // addr): SGEs and remote requests speak IOVA, DMA goes to host().
  uint64_t iova = 0;

  // [a, a+len) of IOVA space inside the region (overflow-safe).
  bool contains(uint64_t a, uint64_t len) const {
    return a >= iova && len <= length && a - iova <= length - len;
  }
  // The app's address of IOVA `a`; only for an `a` contains() accepted.
  uint64_t host(uint64_t a) const { return a - iova + addr; }
  uint32_t windows = 0;  // MWs bound to it: dereg_mr is EBUSY meanwhile
};

struct Qp;

// A memory window (IBA 10.6.7; mw.cpp): a remote key onto part of an MR,
// bound and unbound by work requests in SQ order. Type 1 windows belong to
// their PD; a type 2 window is also tied to the QP that bound it (2B).
struct Mw {
  Client* client = nullptr;
  Pd* pd = nullptr;
  uint32_t handle = 0;  // == slot index == bits 8..23 of the R_Key
  uint32_t rkey = 0;    // 1 << 31 | tag << 24 | handle << 8 | key byte
  uint8_t type = IBV_MW_TYPE_1;
  // Bound (type 1: with a length; type 2: valid) -- what a remote access needs.
  Mr* mr = nullptr;
  Qp* qp = nullptr;  // type 2: the QP it was bound on
  uint32_t access = 0;
  uint64_t va = 0, length = 0;  // window space: 0-based when ZERO_BASED
  uint64_t mr_iova = 0;         // the MR's IOVA of window address va

  bool contains(uint64_t a, uint64_t len) const {
    return a >= va && len <= length && a - va <= length - len;
  }
  // The MR's IOVA of window address `a`; only for an `a` contains() accepted.
  uint64_t mr_addr(uint64_t a) const { return a - va + mr_iova; }
};

struct Cq {
  Client* client = nullptr;
  uint32_t handle = 0;
  SharedRing ring;
  uint32_t producer = 0;     // ours; the ring's copy is only ever written
  uint32_t arm_sn_seen = 0;  // last arm sequence an event was raised for
  bool error = false;        // overrun or hostile consumer index: writes stopped
  uint32_t users = 0;        // QPs
  SharedRing resized;        // prepared by RESIZE_CQ, not yet committed
};

}  // namespace vf::engine
