// QP0 of a vHCA port (smi.hpp): SMPs in for the daemon's hook, SMPs out on VL15.
#include "device/engine/smi.hpp"

#include <cstring>

#include "device/engine/hca_impl.hpp"
#include "device/engine/opcodes.hpp"
#include "dataplane/wire/lrh.hpp"
#include "device/engine/packet.hpp"

namespace vf::engine {

using namespace vf::wire;

void Hca::Impl::smi_receive(const Pkt& p, const RxMeta& meta, rte_mbuf* m) {
  // IBA 13.5.3.1: QP0 takes VL15 only; an SMP is one whole MAD.
  const bool ok = smi_ && meta.vl == vf::wire::kVl15 && opcode_op(p.opcode) == kSendOnly && p.paylen >= kMadLen;
  if (!ok) {
    ++eng_.ctr.rx_dropped;
    rte_pktmbuf_free(m);
    return;
  }
  smi_(p.payload, SmiSource{meta.slid, meta.dlid});
  rte_pktmbuf_free(m);
}

void Hca::on_smi(SmiFn fn) { impl_->smi_ = std::move(fn); }

bool Hca::send_smi(const uint8_t* mad, uint16_t dlid) {
  dp::Route r;
  r.dlid = dlid;
  r.vl15 = true;
  return impl_->send_mad(mad, r, kSmiQpn, 0, impl_->smi_psn_);  // QP0 ignores the Q_Key
}

}  // namespace vf::engine
