#include "dataplane/wire/ib_framing.hpp"

#include <cstring>

#include "dataplane/wire/grh.hpp"
#include "dataplane/wire/icrc.hpp"
#include "dataplane/wire/lrh.hpp"
#include "dataplane/wire/transport.hpp"

namespace vf::wire {

bool ib_encapsulate(rte_mbuf* m, const IbRoute& r) {
  if (!rte_pktmbuf_is_contiguous(m)) return false;
  const size_t tlen = rte_pktmbuf_data_len(m);
  if (tlen < kBthLen || tlen % 4 != 0) return false;
  const size_t hlen = kLrhLen + (r.grh ? kGrhLen : 0);
  const size_t pkt_bytes = hlen + tlen + kIcrcLen;  // what PktLen counts
  if (pkt_bytes / 4 > kLrhPktLenMax) return false;
  if (rte_pktmbuf_headroom(m) < hlen || rte_pktmbuf_tailroom(m) < kIcrcLen + kVcrcLen) return false;

  uint8_t* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, uint16_t(hlen)));
  rte_pktmbuf_append(m, kIcrcLen + kVcrcLen);

  std::memset(f, 0, hlen);  // reserved bits and LVer are zero
  lrh_set_vl(f, r.vl);
  lrh_set_sl(f, r.sl);
  lrh_set_lnh(f, r.grh ? kLnhIbaGlobal : kLnhIbaLocal);
  lrh_set_dlid(f, r.dlid);
  lrh_set_pktlen(f, uint16_t(pkt_bytes / 4));
  lrh_set_slid(f, r.slid);
  if (r.grh) {
    uint8_t* g = f + kLrhLen;
    grh_set_ipver(g, kGrhIpVer);
    grh_set_tclass(g, r.traffic_class);
    grh_set_flow_label(g, r.flow_label);
    grh_set_paylen(g, uint16_t(tlen + kIcrcLen));
    grh_set_nxthdr(g, kGrhNxtHdrIba);
    grh_set_hoplmt(g, r.hop_limit);
    grh_set_sgid(g, r.sgid);
    grh_set_dgid(g, r.dgid);
  }
  const size_t covered = hlen + tlen;
  icrc_store(f + covered, icrc_ib(f, covered));
  vcrc_store(f + pkt_bytes, vcrc(f, pkt_bytes));
  return true;
}

RxError ib_decapsulate(rte_mbuf* m, RxMeta* meta) {
  if (!rte_pktmbuf_is_contiguous(m) || rte_pktmbuf_pkt_len(m) != rte_pktmbuf_data_len(m))
    return RxError::kNonContiguous;
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  const size_t len = rte_pktmbuf_data_len(m);
  if (len < kLrhLen) return RxError::kTruncated;

  // The frame must be exactly PktLen words plus the VCRC.
  const size_t pkt_bytes = size_t(lrh_pktlen(f)) * 4;
  if (len < pkt_bytes + kVcrcLen) return RxError::kTruncated;
  if (len > pkt_bytes + kVcrcLen) return RxError::kBadLength;
  if (pkt_bytes < kLrhLen + kBthLen + kIcrcLen) return RxError::kBadLength;

  // Link-level integrity first, as a port checks it before looking inside.
  if (vcrc(f, pkt_bytes) != vcrc_load(f + pkt_bytes)) return RxError::kBadVcrc;
  if (lrh_lver(f) != 0) return RxError::kBadVersion;
  const uint8_t lnh = lrh_lnh(f);
  if (lnh != kLnhIbaLocal && lnh != kLnhIbaGlobal) return RxError::kBadLnh;

  const bool global = lnh == kLnhIbaGlobal;
  const size_t hlen = kLrhLen + (global ? kGrhLen : 0);
  if (pkt_bytes < hlen + kBthLen + kIcrcLen) return RxError::kBadLength;
  const uint8_t* g = f + kLrhLen;
  if (global) {
    if (grh_ipver(g) != kGrhIpVer) return RxError::kBadVersion;
    if (grh_nxthdr(g) != kGrhNxtHdrIba) return RxError::kBadNextHeader;
    if (grh_paylen(g) != pkt_bytes - hlen) return RxError::kBadLength;
  }

  const size_t covered = pkt_bytes - kIcrcLen;
  if (icrc_ib(f, covered) != icrc_load(f + covered)) return RxError::kBadIcrc;

  if (meta) {
    *meta = RxMeta{};
    meta->slid = lrh_slid(f);
    meta->dlid = lrh_dlid(f);
    meta->sl = lrh_sl(f);
    meta->vl = lrh_vl(f);
    if (global) {
      meta->has_grh = true;
      std::memcpy(meta->sgid, grh_sgid(g), kGidLen);
      std::memcpy(meta->dgid, grh_dgid(g), kGidLen);
      meta->traffic_class = grh_tclass(g);
      std::memcpy(meta->grh, g, kGrhLen);  // what a UD receive buffer gets
    }
  }
  rte_pktmbuf_adj(m, uint16_t(hlen));
  rte_pktmbuf_trim(m, kIcrcLen + kVcrcLen);
  return RxError::kOk;
}

RxError ib_frame_set_vl(rte_mbuf* m, uint8_t vl) {
  if (!rte_pktmbuf_is_contiguous(m)) return RxError::kNonContiguous;
  uint8_t* f = rte_pktmbuf_mtod(m, uint8_t*);
  const size_t len = rte_pktmbuf_data_len(m);
  if (len < kLrhLen) return RxError::kTruncated;
  const size_t pkt_bytes = size_t(lrh_pktlen(f)) * 4;
  if (len < pkt_bytes + kVcrcLen) return RxError::kTruncated;
  if (len > pkt_bytes + kVcrcLen || pkt_bytes < kLrhLen) return RxError::kBadLength;
  if (vcrc(f, pkt_bytes) != vcrc_load(f + pkt_bytes)) return RxError::kBadVcrc;
  if (lrh_vl(f) != (vl & 0xF)) {
    lrh_set_vl(f, vl);
    vcrc_store(f + pkt_bytes, vcrc(f, pkt_bytes));
  }
  return RxError::kOk;
}

}  // namespace vf::wire
