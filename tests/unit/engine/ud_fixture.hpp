// Two vHCAs on the test wire with one app each and a UD QP on each side, on
// the IB link layer (LIDs 1 and 2) or RoCEv2 over IPv4 (IPv4-mapped GIDs,
// routed by GID).
#pragma once

#include "tests/unit/engine/srq_ud_support.hpp"

namespace vf::engine::test {

class UdPair : public ::testing::Test {
 protected:
  static constexpr uint16_t kLidA = 1, kLidB = 2;
  static constexpr uint32_t kQkeyA = 0x1111, kQkeyB = 0x2222;

  static ibv_gid v4_gid(uint8_t last) {
    ibv_gid g{};
    g.raw[10] = g.raw[11] = 0xFF;
    g.raw[12] = 10;
    g.raw[15] = last;
    return g;
  }

  // Builds the vHCAs, apps, PDs, CQs, MRs and one UD QP per side (RTS).
  void build(bool roce, ibv_mtu mtu = IBV_MTU_4096, uint32_t srq_b = 0) {
    roce_ = roce;
    gid_a = roce ? v4_gid(1) : gid_of(0xA);
    gid_b = roce ? v4_gid(2) : gid_of(0xB);
    net = std::make_unique<TestNet>(sched, 1000);
    net->roce_ipv4 = roce;
    port_a = std::make_unique<TestPort>(*net, roce ? 0 : kLidA, gid_a);
    port_b = std::make_unique<TestPort>(*net, roce ? 0 : kLidB, gid_b);
    HcaConfig ca = hca_config("vhca_a", 0xA), cb = hca_config("vhca_b", 0xB);
    for (TestPort* p : {port_a.get(), port_b.get()}) {
      p->port.mtu = 128u << mtu;
      if (roce) {
        p->port.link_layer = LinkLayer::kEthernet;
        p->port.lid = 0;
      }
    }
    hca_a = std::make_unique<Hca>(ca, sched, *port_a);
    hca_b = std::make_unique<Hca>(cb, sched, *port_b);
    hca_a->set_event_sink(&ev_a);
    hca_b->set_event_sink(&ev_b);
    if (roce) {
      net->attach_gid(gid_a, hca_a.get());
      net->attach_gid(gid_b, hca_b.get());
    } else {
      net->attach(kLidA, hca_a.get());
      net->attach(kLidB, hca_b.get());
    }
    app_a = std::make_unique<App>(*hca_a, 1);
    app_b = std::make_unique<App>(*hca_b, 2);
    pd_a = app_a->alloc_pd();
    pd_b = app_b->alloc_pd();
    cq_a = app_a->cq();
    cq_b = app_b->cq();
    buf_a.assign(1 << 20, 0);
    buf_b.assign(1 << 20, 0);
    mr_a = app_a->mr(pd_a, buf_a.data(), buf_a.size());
    mr_b = app_b->mr(pd_b, buf_b.data(), buf_b.size());
    qp_a = std::make_unique<AppQp>();
    qp_b = std::make_unique<AppQp>();
    ASSERT_EQ(create_qp_ex(*app_a, pd_a, *cq_a, *cq_a, IBV_QPT_UD, 0, *qp_a), 0);
    ASSERT_EQ(create_qp_ex(*app_b, pd_b, *cq_b, *cq_b, IBV_QPT_UD, srq_b, *qp_b), 0);
    ud_up(*app_a, *qp_a, kQkeyA);
    ud_up(*app_b, *qp_b, kQkeyB);
  }
  ~UdPair() override {
    // Apps and rings first, then the engines, then the wire (it frees what
    // it still carries).
    qp_a.reset();
    qp_b.reset();
    cq_a.reset();
    cq_b.reset();
    hca_a.reset();
    hca_b.reset();
    net.reset();
  }

  // An AH on A towards B (with a GRH when `global` or on RoCE).
  uint32_t ah_to_b(bool global = false, uint8_t sl = 0) {
    ibv_ah_attr a = global || roce_ ? global_ah(roce_ ? 0 : kLidB, gid_b, 33, 0x28, 0x12345)
                                    : ib_ah(kLidB, sl);
    a.sl = sl;
    uint32_t h = 0;
    EXPECT_EQ(create_ah(*app_a, pd_a, a, h), 0);
    return h;
  }

  // A datagram of `len` bytes (pattern `seed`) from qp_a to qp_b.
  void send_ud(uint64_t id, uint32_t len, uint32_t ah, uint32_t qkey = kQkeyB,
               uint8_t opcode = IBV_WR_SEND, uint32_t imm_be = 0, uint32_t dst_qpn = 0) {
    uint8_t* src = buf_a.data() + 8192 * (id % 64);
    fill_pattern(src, len, uint32_t(id));
    app_a->post_send(*qp_a, ud_wqe(id, {sge(src, len, mr_a.lkey)}, ah, dst_qpn ? dst_qpn : qp_b->qpn,
                                   qkey, opcode, imm_be));
  }
  uint8_t* rbuf(uint64_t id) { return buf_b.data() + 8192 * (id % 64); }
  void post_b(uint64_t id, uint32_t len = 8192) {
    std::memset(rbuf(id), 0xEE, len);
    app_b->post_recv(*qp_b, recv_wqe(id, {sge(rbuf(id), len, mr_b.lkey)}));
  }
  bool payload_ok(uint64_t id, uint32_t len) {
    std::vector<uint8_t> want(len);
    fill_pattern(want.data(), len, uint32_t(id));
    return std::memcmp(rbuf(id) + 40, want.data(), len) == 0;
  }

  void settle() {
    for (int i = 0; i < 100000; ++i) {
      bool any = hca_a->poll(64);
      any |= hca_b->poll(64);
      if (!any) return;
    }
    FAIL() << "engines never went idle";
  }
  void run_for(Nanos d) {
    const Nanos end = sched.now() + d;
    settle();
    while (!sched.idle() && sched.next_deadline() <= end) {
      sched.run_next();
      settle();
    }
    sched.advance_to(end);
    settle();
  }

  Scheduler sched;
  bool roce_ = false;
  ibv_gid gid_a{}, gid_b{};
  std::unique_ptr<TestNet> net;
  std::unique_ptr<TestPort> port_a, port_b;
  std::unique_ptr<Hca> hca_a, hca_b;
  Events ev_a, ev_b;
  std::unique_ptr<App> app_a, app_b;
  uint32_t pd_a = 0, pd_b = 0;
  std::unique_ptr<AppCq> cq_a, cq_b;
  std::unique_ptr<AppQp> qp_a, qp_b;
  std::vector<uint8_t> buf_a, buf_b;
  vhca_reg_mr_rsp mr_a{}, mr_b{};
};

}  // namespace vf::engine::test
