// Receive completions: the fields every one carries, whatever the transport
// (the RC/UC responder and the UD receiver add what is theirs).
#pragma once

#include <cstring>

#include "device/engine/qp.hpp"

namespace vf::engine {

inline vhca_cqe recv_cqe(const Qp& qp, uint64_t wr_id, ibv_wc_status status, uint32_t byte_len,
                         uint16_t slid, uint8_t sl) {
  vhca_cqe cqe;
  std::memset(&cqe, 0, sizeof(cqe));
  cqe.wr_id = wr_id;
  cqe.status = status;
  cqe.opcode = IBV_WC_RECV;
  cqe.byte_len = byte_len;
  cqe.qp_num = qp.qpn;
  cqe.pkey_index = uint16_t(qp.attr.pkey_index);  // only a matching P_Key gets this far
  cqe.slid = slid;
  cqe.sl = sl;
  return cqe;
}

}  // namespace vf::engine
