// Native IB framing on real mbufs: layout against the spec and a known-answer
// packet, round trips, and every way a received frame can be wrong.
#include <gtest/gtest.h>

#include <cstring>

#include "crc_reference.hpp"
#include "dataplane/wire/framing.hpp"
#include "dataplane/wire/grh.hpp"
#include "dataplane/wire/icrc.hpp"
#include "dataplane/wire/lrh.hpp"
#include "dataplane/wire/transport.hpp"
#include "framing_test_util.hpp"
#include "sample_frames.hpp"
#include "tests/support/eal_env.hpp"

namespace vf::wire {
namespace {

using test::Bytes;
using test::flip_bit;
using vf::wire::RxMeta;

// The route that reproduces samples::kIbGlobal.
IbRoute global_route() {
  IbRoute r;
  r.slid = 7;
  r.dlid = 5;
  r.sl = 2;
  r.vl = 3;
  r.grh = true;
  const uint8_t sgid[16] = {0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xC9, 0x03, 0, 0, 0xAB, 0xCD};
  const uint8_t dgid[16] = {0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xC9, 0x03, 0, 0, 0xDC, 0xBA};
  std::memcpy(r.sgid, sgid, 16);
  std::memcpy(r.dgid, dgid, 16);
  r.traffic_class = 0xB8;
  r.flow_label = 7;
  r.hop_limit = 5;
  return r;
}

IbRoute local_route() {
  IbRoute r;
  r.slid = 0x17D2;
  r.dlid = 0x375C;
  r.sl = 1;
  r.vl = 7;
  return r;
}

const Bytes kTransport = test::samples::transport_of(test::samples::kIbGlobal, 48);  // 28 bytes

// A transport packet with `payload` bytes of payload (plus pad to 4).
Bytes transport_packet(size_t payload) {
  Bytes t(kBthLen + payload + (4 - payload % 4) % 4);
  bth_set_opcode(t.data(), 0x04);
  bth_set_padcnt(t.data(), unsigned((4 - payload % 4) % 4));
  bth_set_pkey(t.data(), 0xFFFF);
  bth_set_dqpn(t.data(), 0x1234);
  bth_set_psn(t.data(), 77);
  for (size_t i = 0; i < payload; ++i) t[kBthLen + i] = uint8_t(i * 7 + 1);
  return t;
}

Bytes encap(const Bytes& transport, const IbRoute& r) {
  rte_mbuf* m = test::mbuf_from(transport);
  EXPECT_TRUE(ib_encapsulate(m, r));
  Bytes f = test::mbuf_bytes(m);
  rte_pktmbuf_free(m);
  return f;
}

RxError decap(const Bytes& frame, RxMeta* meta = nullptr, Bytes* out = nullptr) {
  rte_mbuf* m = test::guarded_mbuf(frame);
  const RxError e = ib_decapsulate(m, meta);
  if (out) *out = test::mbuf_bytes(m);
  if (e != RxError::kOk) {
    EXPECT_EQ(test::mbuf_bytes(m), frame) << "a refused frame was modified";
  }
  rte_pktmbuf_free(m);
  return e;
}

// Recomputes the VCRC after a deliberate change, as a switch would.
void fix_vcrc(Bytes& f) {
  const size_t n = f.size() - kVcrcLen;
  vcrc_store(f.data() + n, test::reference_vcrc(f.data(), n));
}

TEST(IbFraming, GlobalKnownAnswer) {
  // samples::kIbGlobal, then its ICRC and VCRC, least significant byte first.
  Bytes expected = test::samples::kIbGlobal;
  expected.insert(expected.end(), {0x32, 0x51, 0x5A, 0x3B, 0x64, 0x75});
  Bytes transport = kTransport;
  EXPECT_EQ(encap(transport, global_route()), expected);
}

TEST(IbFraming, LocalLayout) {
  const Bytes f = encap(kTransport, local_route());
  ASSERT_EQ(f.size(), 8 + 28 + 4 + 2u);
  // VL 7 LVer 0 | SL 1 LNH 2 | DLID | PktLen (8+28+4)/4 = 10 | SLID
  const Bytes lrh = {0x70, 0x12, 0x37, 0x5C, 0x00, 0x0A, 0x17, 0xD2};
  EXPECT_EQ(Bytes(f.begin(), f.begin() + 8), lrh);
  EXPECT_EQ(Bytes(f.begin() + 8, f.begin() + 36), kTransport);
  // ICRC over the packet with VL and BTH byte 4 masked, by the reference.
  Bytes masked(f.begin(), f.begin() + 36);
  masked[0] |= 0xF0;
  masked[8 + 4] = 0xFF;
  const uint32_t icrc = test::reference_crc32(masked.data(), masked.size());
  EXPECT_EQ(f[36], uint8_t(icrc));
  EXPECT_EQ(f[37], uint8_t(icrc >> 8));
  EXPECT_EQ(f[38], uint8_t(icrc >> 16));
  EXPECT_EQ(f[39], uint8_t(icrc >> 24));
  const uint16_t v = test::reference_vcrc(f.data(), 40);
  EXPECT_EQ(f[40], uint8_t(v));
  EXPECT_EQ(f[41], uint8_t(v >> 8));
}

TEST(IbFraming, RoundTrips) {
  for (bool grh : {false, true}) {
    for (size_t payload : {0u, 1u, 13u, 256u, 4096u}) {
      SCOPED_TRACE(testing::Message() << "grh " << grh << " payload " << payload);
      IbRoute r = grh ? global_route() : local_route();
      const Bytes t = transport_packet(payload);
      rte_mbuf* m = test::mbuf_from(t);
      ASSERT_TRUE(ib_encapsulate(m, r));
      EXPECT_EQ(rte_pktmbuf_data_len(m), t.size() + (grh ? 48 : 8) + 6);
      EXPECT_EQ(lrh_pktlen(rte_pktmbuf_mtod(m, uint8_t*)) * 4u, rte_pktmbuf_data_len(m) - 2u);
      RxMeta meta;
      meta.slid = 0xDEAD;
      uint8_t sent_grh[40] = {};  // the GRH as it went out: what a UD receive gets
      if (grh) std::memcpy(sent_grh, rte_pktmbuf_mtod(m, uint8_t*) + 8, 40);
      ASSERT_EQ(ib_decapsulate(m, &meta), RxError::kOk);
      EXPECT_EQ(std::memcmp(meta.grh, sent_grh, 40), 0);
      if (grh) {
        EXPECT_EQ(meta.grh[0] >> 4, 6);
        EXPECT_EQ(meta.grh[6], 0x1B);
      }
      EXPECT_EQ(test::mbuf_bytes(m), t);
      EXPECT_EQ(meta.slid, r.slid);
      EXPECT_EQ(meta.dlid, r.dlid);
      EXPECT_EQ(meta.sl, r.sl);
      EXPECT_EQ(meta.has_grh, grh);
      if (grh) {
        EXPECT_EQ(std::memcmp(meta.sgid, r.sgid, 16), 0);
        EXPECT_EQ(std::memcmp(meta.dgid, r.dgid, 16), 0);
        EXPECT_EQ(meta.traffic_class, r.traffic_class);
      } else {
        EXPECT_EQ(meta.traffic_class, 0);
      }
      rte_pktmbuf_free(m);
    }
  }
}

TEST(IbFraming, EncapsulateRefusesWithoutSideEffects) {
  const Bytes t = transport_packet(16);
  auto refused = [](rte_mbuf* m, const IbRoute& r) {
    const uint16_t off = m->data_off, len = rte_pktmbuf_data_len(m);
    EXPECT_FALSE(ib_encapsulate(m, r));
    EXPECT_EQ(m->data_off, off);
    EXPECT_EQ(rte_pktmbuf_data_len(m), len);
    rte_pktmbuf_free(m);
  };
  refused(test::mbuf_from(t, 7), local_route());    // headroom < 8
  refused(test::mbuf_from(t, 47), global_route());  // headroom < 48
  {
    rte_mbuf* m = test::mbuf_from(t);
    m->data_off = uint16_t(m->buf_len - t.size() - 5);  // tailroom 5 < 6
    refused(m, local_route());
  }
  refused(test::chained_mbuf(t, 12), local_route());
  refused(test::mbuf_from(Bytes(t.begin(), t.end() - 1)), local_route());  // not whole words
  refused(test::mbuf_from(Bytes(8, 0)), local_route());                    // shorter than a BTH

  // PktLen has 11 bits: LRH + transport + ICRC may not exceed 2047 words.
  static uint8_t big[9000];
  static rte_mbuf_ext_shared_info shinfo;
  shinfo.free_cb = [](void*, void*) {};
  for (size_t tlen : {8176u, 8180u}) {
    rte_mbuf_ext_refcnt_set(&shinfo, 1);
    rte_mbuf* m = rte_pktmbuf_alloc(test::test_mbuf_pool());
    rte_pktmbuf_attach_extbuf(m, big, 0, sizeof big, &shinfo);
    m->data_off = 128;
    rte_pktmbuf_append(m, uint16_t(tlen));
    if (tlen == 8176) {  // 8 + 8176 + 4 = 8188 bytes = 2047 words
      EXPECT_TRUE(ib_encapsulate(m, local_route()));
      EXPECT_EQ(lrh_pktlen(rte_pktmbuf_mtod(m, uint8_t*)), 2047);
      rte_pktmbuf_free(m);
    } else {
      refused(m, local_route());
    }
  }
}

TEST(IbFraming, EveryTruncationIsRefusedWithoutOverreading) {
  for (bool grh : {false, true}) {
    const Bytes f = encap(transport_packet(grh ? 200 : 13), grh ? global_route() : local_route());
    for (size_t len = 0; len < f.size(); ++len) {
      ASSERT_EQ(decap(Bytes(f.begin(), f.begin() + long(len))), RxError::kTruncated) << len;
    }
    EXPECT_EQ(decap(f), RxError::kOk);
    Bytes longer = f;
    longer.push_back(0);
    EXPECT_EQ(decap(longer), RxError::kBadLength);
  }
}

TEST(IbFraming, EveryFlippedBitIsCaught) {
  for (bool grh : {false, true}) {
    const Bytes f = encap(transport_packet(21), grh ? global_route() : local_route());
    for (size_t bit = 0; bit < f.size() * 8; ++bit) {
      Bytes g = f;
      flip_bit(g, bit);
      const RxError e = decap(g);
      const bool pktlen_bit = bit >= 37 && bit < 48;
      if (pktlen_bit) {
        EXPECT_NE(e, RxError::kOk) << bit;
      } else {
        EXPECT_EQ(e, RxError::kBadVcrc) << bit;
      }
    }
  }
}

TEST(IbFraming, IcrcCatchesWhatTheVcrcCannot) {
  // A switch that corrupts the payload and then computes a fresh VCRC.
  for (bool grh : {false, true}) {
    const Bytes f = encap(transport_packet(21), grh ? global_route() : local_route());
    const size_t first = grh ? 48 : 8, icrc_end = f.size() - 2;
    for (size_t bit = first * 8; bit < icrc_end * 8; bit += 5) {
      Bytes g = f;
      flip_bit(g, bit);
      fix_vcrc(g);
      const bool resv8a = bit / 8 == first + 4;  // FECN/BECN/resv6: variant
      EXPECT_EQ(decap(g), resv8a ? RxError::kOk : RxError::kBadIcrc) << bit;
    }
  }
}

TEST(IbFraming, VariantFieldsMayChangeInFlight) {
  {
    Bytes f = encap(kTransport, local_route());
    lrh_set_vl(f.data(), 2);
    bth_set_fecn(f.data() + 8, true);
    bth_set_becn(f.data() + 8, true);
    fix_vcrc(f);
    EXPECT_EQ(decap(f), RxError::kOk);
    lrh_set_sl(f.data(), 9);  // SL is covered in local packets
    fix_vcrc(f);
    EXPECT_EQ(decap(f), RxError::kBadIcrc);
  }
  {
    // Routers rebuild the LRH of global packets and touch these GRH fields.
    Bytes f = encap(kTransport, global_route());
    lrh_set_slid(f.data(), 99);
    lrh_set_dlid(f.data(), 98);
    lrh_set_sl(f.data(), 15);
    uint8_t* g = f.data() + 8;
    grh_set_tclass(g, 0x11);
    grh_set_flow_label(g, 0xABCDE);
    grh_set_hoplmt(g, 1);
    fix_vcrc(f);
    RxMeta meta;
    EXPECT_EQ(decap(f, &meta), RxError::kOk);
    EXPECT_EQ(meta.slid, 99);
    EXPECT_EQ(meta.sl, 15);
    EXPECT_EQ(meta.traffic_class, 0x11);
    grh_set_sgid(g, local_route().sgid);  // GIDs are not variant
    fix_vcrc(f);
    EXPECT_EQ(decap(f), RxError::kBadIcrc);
  }
}

TEST(IbFraming, HeaderErrors) {
  const Bytes local = encap(kTransport, local_route());
  const Bytes global = encap(kTransport, global_route());
  auto with = [](Bytes f, auto change) {
    change(f.data());
    fix_vcrc(f);
    return decap(f);
  };
  EXPECT_EQ(with(local, [](uint8_t* f) { lrh_set_lver(f, 1); }), RxError::kBadVersion);
  EXPECT_EQ(with(local, [](uint8_t* f) { lrh_set_lnh(f, kLnhRaw); }), RxError::kBadLnh);
  EXPECT_EQ(with(local, [](uint8_t* f) { lrh_set_lnh(f, kLnhIpNonIba); }), RxError::kBadLnh);
  // Claims a GRH it does not have room for (8 + 28 + 4 < 8 + 40 + 12 + 4).
  EXPECT_EQ(with(local, [](uint8_t* f) { lrh_set_lnh(f, kLnhIbaGlobal); }), RxError::kBadLength);
  EXPECT_EQ(with(global, [](uint8_t* f) { lrh_set_lnh(f, kLnhIbaLocal); }), RxError::kBadIcrc);
  EXPECT_EQ(with(global, [](uint8_t* f) { grh_set_ipver(f + 8, 4); }), RxError::kBadVersion);
  EXPECT_EQ(with(global, [](uint8_t* f) { grh_set_nxthdr(f + 8, 17); }), RxError::kBadNextHeader);
  EXPECT_EQ(with(global, [](uint8_t* f) { grh_set_paylen(f + 8, 36); }), RxError::kBadLength);

  // PktLen too small for LRH + BTH + ICRC, with a frame that matches it.
  Bytes tiny(4 * 4 + 2, 0);
  lrh_set_lnh(tiny.data(), kLnhIbaLocal);
  lrh_set_pktlen(tiny.data(), 4);
  fix_vcrc(tiny);
  EXPECT_EQ(decap(tiny), RxError::kBadLength);

  rte_mbuf* chained = test::chained_mbuf(local, 20);
  EXPECT_EQ(ib_decapsulate(chained, nullptr), RxError::kNonContiguous);
  rte_pktmbuf_free(chained);
}

TEST(IbFraming, RefusedFrameLeavesMetaAlone) {
  Bytes f = encap(kTransport, local_route());
  f[20] ^= 1;
  RxMeta meta;
  meta.slid = 0xBEEF;
  meta.sl = 9;
  EXPECT_EQ(decap(f, &meta), RxError::kBadVcrc);
  EXPECT_EQ(meta.slid, 0xBEEF);
  EXPECT_EQ(meta.sl, 9);
}

TEST(IbFraming, SwitchRewritesVl) {
  const Bytes f = encap(kTransport, global_route());
  rte_mbuf* m = test::mbuf_from(f);
  EXPECT_EQ(ib_frame_set_vl(m, 5), RxError::kOk);
  EXPECT_EQ(ib_frame_vl(m), 5);
  Bytes g = test::mbuf_bytes(m);
  EXPECT_EQ(vcrc_load(g.data() + g.size() - 2), test::reference_vcrc(g.data(), g.size() - 2));
  EXPECT_EQ(ib_decapsulate(m, nullptr), RxError::kOk);
  rte_pktmbuf_free(m);

  Bytes bad = f;
  bad[30] ^= 0x10;
  m = test::mbuf_from(bad);
  EXPECT_EQ(ib_frame_set_vl(m, 5), RxError::kBadVcrc);
  EXPECT_EQ(test::mbuf_bytes(m), bad);
  rte_pktmbuf_free(m);

  for (size_t len = 0; len < f.size(); ++len) {
    m = test::guarded_mbuf(Bytes(f.begin(), f.begin() + long(len)));
    EXPECT_EQ(ib_frame_set_vl(m, 1), RxError::kTruncated) << len;
    rte_pktmbuf_free(m);
  }
}

}  // namespace
}  // namespace vf::wire
