// QP1 of a vHCA port (gsi.hpp): datagrams in for the daemon's hook, MADs out
// from it.
#include "device/engine/gsi.hpp"

#include <cstring>

#include "device/engine/hca_impl.hpp"
#include "device/engine/opcodes.hpp"
#include "device/engine/packet.hpp"
#include "device/engine/route.hpp"

namespace vf::engine {

using namespace vf::wire;

void Hca::Impl::gsi_receive(const Pkt& p, const RxMeta& meta, rte_mbuf* m) {
  // IBA 13.5.3: QP1 takes GMPs only with the well-known Q_Key; a datagram
  // that is not one whole MAD is not a MAD.
  const bool ok = gsi_ && opcode_op(p.opcode) == kSendOnly && deth_qkey(p.ext) == kGsiQkey && p.paylen >= kMadLen;
  if (!ok) {
    ++eng_.ctr.rx_dropped;
    rte_pktmbuf_free(m);
    return;
  }
  GsiSource from;
  from.slid = meta.slid;
  from.has_grh = meta.has_grh;
  std::memcpy(from.sgid, meta.sgid, sizeof(from.sgid));
  gsi_(p.payload, from);
  rte_pktmbuf_free(m);
}

void Hca::on_gsi(GsiFn fn) { impl_->gsi_ = std::move(fn); }

bool Hca::send_gsi(const uint8_t* mad, const ibv_ah_attr& av) {
  return impl_->send_mad(mad, route_of(av), kGsiQpn, kGsiQkey, impl_->gsi_psn_);
}

// One MAD as a UD SEND Only from QP `qpn` (0 or 1) to the same QP number at
// `r`: QP0 and QP1 frame their datagrams alike.
bool Hca::Impl::send_mad(const uint8_t* mad, const dp::Route& r, uint32_t qpn, uint32_t qkey, uint32_t& psn) {
  Engine& e = eng_;
  if (!e.io.can_transmit(r)) return false;
  rte_mbuf* m = e.io.alloc();
  if (!m) return false;
  const uint8_t opc = opcode(Transport::kUD, kSendOnly);
  const HdrLayout& at = layout(opc);
  const unsigned hdr = kBthLen + at.payload;
  auto* b = static_cast<uint8_t*>(static_cast<void*>(rte_pktmbuf_append(m, uint16_t(hdr + kMadLen))));
  if (!b) {
    rte_pktmbuf_free(m);
    return false;
  }
  std::memcpy(b + hdr, mad, kMadLen);
  put_bth(b, opc, false, 0, qpn, false, psn, 0xFFFF);
  psn = (psn + 1) & kPsnMask;
  deth_set(b + kBthLen + at.deth, qkey, qpn);
  ++e.ctr.tx_packets;
  e.ctr.tx_bytes += hdr + kMadLen;
  e.io.transmit(m, r);
  return true;
}

}  // namespace vf::engine
