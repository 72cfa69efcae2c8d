// Where DCQCN (dcqcn.hpp) meets the engine's packets: the notification point
// on the receive path, the CNP itself, and the reaction point's rate for the
// requester. RoCE only: an IB port has no ECN field and no CNPs here.
#pragma once

#include <rte_mbuf.h>

#include "dataplane/wire/rx_meta.hpp"
#include "device/engine/engine.hpp"
#include "device/engine/packet.hpp"

namespace vf::engine {

inline constexpr uint8_t kOpcodeCnp = 0x81;  // RoCEv2 CNP (IBA Annex A17)
inline constexpr unsigned kCnpReservedLen = 16;

// A received CNP: applied to its QP's reaction point (or counted as
// ignored) and freed. False, m untouched, when m is not a CNP.
bool take_cnp(Engine& eng, rte_mbuf* m);

// A request packet for `qp` arrived; if it carries CE, count it and send the
// QP's sender a CNP unless one went within min_time_between_cnps.
void note_congestion(Engine& eng, Qp& qp, const wire::RxMeta& meta);

// The rate the requester may send `qp` at now (Mb/s; 0 = not limited), with
// `bytes_sent` more bytes counted towards the byte counter.
inline uint32_t congestion_rate(Engine& eng, Qp& qp, uint64_t bytes_sent = 0) {
  if (!eng.cfg.dcqcn.rp_enabled || !qp.rp.limited) return 0;
  return dcqcn_advance(qp.rp, eng.cfg.dcqcn, eng.sched.now(), bytes_sent);
}

}  // namespace vf::engine
