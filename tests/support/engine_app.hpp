// The engine tests' names for the in-process app (sim/host_app.hpp), plus
// what only tests need: a connect() that asserts each step, and the
// stand-in port records of the engine tests' test wire.
#pragma once

#include <gtest/gtest.h>

#include "sim/host_app.hpp"
#include "sim/virtual_run.hpp"

namespace vf::engine::test {

using sim::App;
using sim::AppCq;
using sim::AppQp;
using sim::ConnParams;
using sim::init_attr;
using sim::inline_wqe;
using sim::kInitMask;
using sim::kRtrMask;
using sim::kRtsMask;
using sim::MappedRing;
using sim::QpCaps;
using sim::recv_wqe;
using sim::rtr_attr;
using sim::rts_attr;
using sim::run_virtual;
using sim::self_mem_fd;
using sim::send_wqe;
using sim::sge;

inline void connect(App& a, AppQp& qa, uint16_t lid_a, App& b, AppQp& qb, uint16_t lid_b,
                    const ConnParams& p = {}) {
  ASSERT_EQ(a.modify(qa, init_attr(p.access, p.pkey_index_a), kInitMask), 0);
  ASSERT_EQ(b.modify(qb, init_attr(p.access, p.pkey_index_b), kInitMask), 0);
  ASSERT_EQ(a.modify(qa, rtr_attr(qb.qpn, lid_b, p.psn_b, p), kRtrMask), 0);
  ASSERT_EQ(b.modify(qb, rtr_attr(qa.qpn, lid_a, p.psn_a, p), kRtrMask), 0);
  ASSERT_EQ(a.modify(qa, rts_attr(p.psn_a, p), kRtsMask), 0);
  ASSERT_EQ(b.modify(qb, rts_attr(p.psn_b, p), kRtsMask), 0);
}

inline HcaConfig hca_config(const char* name, uint64_t guid) {
  HcaConfig c;
  c.name = name;
  c.node_guid = guid;
  return c;
}

inline ibv_gid gid_of(uint64_t guid) {
  ibv_gid g{};
  g.global.subnet_prefix = htobe64(0xfe80000000000000ull);
  g.global.interface_id = htobe64(guid);
  return g;
}

inline Gid to_gid(const ibv_gid& g) {
  Gid out;
  std::memcpy(out.data(), g.raw, 16);
  return out;
}

// An active IB port with one GID: what the engine tests' ports report.
inline PortInfo ib_port_info(uint16_t lid, const ibv_gid& gid) {
  PortInfo p;
  p.lid = lid;
  p.sm_lid = 1;
  p.mtu = 4096;
  p.gids = {to_gid(gid)};
  return p;
}

inline void fill_pattern(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) p[i] = uint8_t((i * 131 + seed * 7 + (i >> 8)) & 0xFF);
}

}  // namespace vf::engine::test
