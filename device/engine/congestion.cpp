#include "device/engine/congestion.hpp"

#include <cstring>

#include "dataplane/wire/ipv4.hpp"
#include "dataplane/wire/transport.hpp"

namespace vf::engine {

bool take_cnp(Engine& eng, rte_mbuf* m) {
  if (rte_pktmbuf_data_len(m) < wire::kBthLen) return false;
  const uint8_t* b = rte_pktmbuf_mtod(m, const uint8_t*);
  if (wire::bth_opcode(b) != kOpcodeCnp) return false;
  Qp* qp = eng.qp_by_qpn(wire::bth_dqpn(b));
  const bool rc_uc = qp && (qp->type == IBV_QPT_RC || qp->type == IBV_QPT_UC);
  if (eng.cfg.dcqcn.rp_enabled && rc_uc && qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_ERR) {
    ++eng.ctr.rp_cnp_handled;
    dcqcn_on_cnp(qp->rp, eng.cfg.dcqcn, eng.sched.now());
  } else {
    ++eng.ctr.rp_cnp_ignored;
  }
  rte_pktmbuf_free(m);
  return true;
}

void note_congestion(Engine& eng, Qp& qp, const wire::RxMeta& meta) {
  if (!meta.has_grh || (meta.traffic_class & 0x3) != wire::kEcnCe) return;
  if (eng.io.info().link_layer != LinkLayer::kEthernet) return;
  ++eng.ctr.np_ecn_marked_roce_packets;
  const DcqcnConfig& c = eng.cfg.dcqcn;
  const Nanos now = eng.sched.now();
  if (!c.np_enabled || (qp.np_cnp_sent && now - qp.np_last_cnp < c.min_time_between_cnps_ns)) return;
  dp::Route r = qp.route;
  r.traffic_class = uint8_t(c.cnp_dscp << 2);  // not ECN-capable: a CNP is never marked
  // No room on the CNP's priority or no mbuf: this CE goes unanswered (the
  // next one gets a CNP), counted like a requester that found no room.
  if (!eng.io.can_transmit(r)) {
    ++eng.ctr.tx_stalls;
    return;
  }
  rte_mbuf* m = eng.io.alloc();
  uint8_t* b = m ? reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, wire::kBthLen + kCnpReservedLen)) : nullptr;
  if (!b) {
    if (m) rte_pktmbuf_free(m);
    ++eng.ctr.tx_stalls;
    return;
  }
  put_bth(b, kOpcodeCnp, false, 0, qp.attr.dest_qp_num, false, 0, qp.pkey);
  std::memset(b + wire::kBthLen, 0, kCnpReservedLen);
  qp.np_last_cnp = now;
  qp.np_cnp_sent = true;
  ++eng.ctr.np_cnp_sent;
  ++eng.ctr.tx_packets;
  eng.ctr.tx_bytes += wire::kBthLen + kCnpReservedLen;
  eng.io.transmit(m, r);
}

}  // namespace vf::engine
