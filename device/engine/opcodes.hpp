// Tables that drive the transport: which wire opcodes a work request becomes,
// the IBA RNR timer encoding, and NAK codes -> completion status.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "core/port_info.hpp"
#include "core/scheduler.hpp"
#include "device/abi/vhca_wr_ops.h"
#include "dataplane/wire/opcode.hpp"
#include "dataplane/wire/transport.hpp"

namespace vf::engine {

// Per ibv_wr_opcode the device supports (device/abi/vhca_wr_ops.h says which,
// for which QP types, and how they complete): the RC/UC opcodes of its
// packets (the low 5 bits are the same for both; UD sends only SEND Only).
struct WrOpInfo {
  uint8_t first, middle, last, only;  // low 5 bits (wire::Op)
};

inline const WrOpInfo* wr_op_info(uint8_t op) {
  using namespace vf::wire;
  static constexpr WrOpInfo kTable[] = {
      /* IBV_WR_RDMA_WRITE */ {kWriteFirst, kWriteMiddle, kWriteLast, kWriteOnly},
      /* IBV_WR_RDMA_WRITE_WITH_IMM */ {kWriteFirst, kWriteMiddle, kWriteLastImm, kWriteOnlyImm},
      /* IBV_WR_SEND */ {kSendFirst, kSendMiddle, kSendLast, kSendOnly},
      /* IBV_WR_SEND_WITH_IMM */ {kSendFirst, kSendMiddle, kSendLastImm, kSendOnlyImm},
      /* IBV_WR_RDMA_READ */ {kReadRequest, kReadRequest, kReadRequest, kReadRequest},
      /* IBV_WR_ATOMIC_CMP_AND_SWP */ {kCompareSwap, kCompareSwap, kCompareSwap, kCompareSwap},
      /* IBV_WR_ATOMIC_FETCH_AND_ADD */ {kFetchAdd, kFetchAdd, kFetchAdd, kFetchAdd},
      /* IBV_WR_LOCAL_INV: no packet */ {0, 0, 0, 0},
      /* IBV_WR_BIND_MW: no packet */ {0, 0, 0, 0},
      /* IBV_WR_SEND_WITH_INV */ {kSendFirst, kSendMiddle, kSendLastInv, kSendOnlyInv},
  };
  return op < sizeof(kTable) / sizeof(kTable[0]) ? &kTable[op] : nullptr;
}

// IBA Vol. 1 table 45: RNR NAK timer field -> minimum wait.
inline Nanos rnr_timer_ns(uint8_t code) {
  static constexpr uint32_t kUsec[32] = {
      655360, 10,   20,   30,   40,   60,    80,    120,   160,   240,   320,
      480,    640,  960,  1280, 1920, 2560,  3840,  5120,  7680,  10240, 15360,
      20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};
  return Nanos(kUsec[code & 31]) * 1000;
}

// Local ACK timeout: 4.096 us * 2^timeout; 0 means infinite.
inline Nanos ack_timeout_ns(uint8_t timeout) {
  return timeout == 0 ? 0 : Nanos(4096) << (timeout & 31);
}

inline ibv_wc_status nak_status(uint8_t code) {
  switch (code) {
    case vf::wire::kNakInvalidRequest: return IBV_WC_REM_INV_REQ_ERR;
    case vf::wire::kNakRemoteAccessError: return IBV_WC_REM_ACCESS_ERR;
    case vf::wire::kNakRemoteOperationalError: return IBV_WC_REM_OP_ERR;
    case vf::wire::kNakInvalidRdRequest: return IBV_WC_REM_INV_RD_REQ_ERR;
    default: return IBV_WC_REM_OP_ERR;
  }
}

inline uint32_t mtu_bytes(uint32_t mtu_enum) { return mtu_from_code(mtu_enum); }

}  // namespace vf::engine
