// Test rig for the device engine: vHCAs joined by a test double of the port
// (delivers each packet through the Scheduler after a fixed delay, and can
// drop, duplicate or delay chosen packets), driven by the app of
// tests/support/engine_app.hpp. For real ports, links and switches under the
// engines use tests/support/fabric_lab.hpp.
#pragma once

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "core/scheduler.hpp"
#include "dataplane/wire/opcode.hpp"
#include "dataplane/wire/transport.hpp"
#include "device/abi/vhca_abi.h"
#include "device/engine/hca.hpp"
#include "tests/support/eal_env.hpp"
#include "tests/support/engine_app.hpp"

namespace vf::engine::test {

using vf::Nanos;

// What one transmitted packet looked like (for timing and protocol asserts).
struct Sent {
  Nanos t;
  uint16_t from_lid;
  uint8_t opcode;
  uint32_t psn;
  uint32_t dqpn;
  bool ackreq;
  uint8_t syndrome;  // ACKs only
  uint32_t len;
  bool is_ack() const { return (opcode & 0x1F) == vf::wire::kAck; }
};

struct Verdict {
  enum Kind { kDeliver, kDrop, kDuplicate } kind = kDeliver;
  Nanos extra_delay = 0;
};

class TestNet;

class TestPort : public vf::dp::HostPort {
 public:
  TestPort(TestNet& net, uint16_t lid, const ibv_gid& gid)
      : port(ib_port_info(lid, gid)), net_(net), lid_(lid), gid_(gid) {}
  rte_mbuf* alloc() override { return rte_pktmbuf_alloc(vf::test::test_mbuf_pool()); }
  bool can_transmit(const dp::Route& r) const override { return !blocked && !(blocked_sls >> (r.sl & 0xF) & 1); }
  void transmit(rte_mbuf* m, const vf::dp::Route& r) override;
  const PortInfo& info() const override { return port; }
  PortInfo port;  // what query_port reports; tests edit it
  uint16_t lid() const { return lid_; }
  const ibv_gid& gid() const { return gid_; }
  bool blocked = false;
  uint16_t blocked_sls = 0;  // bit n: SL n has no transmit space

 private:
  TestNet& net_;
  uint16_t lid_;
  ibv_gid gid_;
};

class TestNet {
 public:
  explicit TestNet(Scheduler& s, Nanos delay = 1000) : sched_(s), delay_(delay) {
    timer_.net = this;
  }
  ~TestNet() {
    sched_.disarm(timer_);
    for (auto& p : q_) rte_pktmbuf_free(p.m);
  }
  void attach(uint16_t lid, Hca* hca) { by_lid_[lid] = hca; }
  void detach(uint16_t lid) { by_lid_.erase(lid); }
  // RoCE: packets whose AV has no LID go by destination GID.
  void attach_gid(const ibv_gid& g, Hca* hca) { by_gid_[key(g.raw)] = hca; }
  // What the port would put in RxMeta::grh: an IB GRH (IPv6 layout, next
  // header 0x1B) by default, or for RoCEv2 over IPv4 zeros then the IPv4
  // header (set this when the GIDs are IPv4-mapped).
  bool roce_ipv4 = false;

  // Decides the fate of every packet; default delivers everything.
  std::function<Verdict(const Sent&)> filter;
  std::vector<Sent> log;
  size_t delivered = 0;

  void send(uint16_t from, const ibv_gid& sgid, rte_mbuf* m, const vf::dp::Route& av) {
    const uint8_t* b = rte_pktmbuf_mtod(m, const uint8_t*);
    Sent s{sched_.now(), from, vf::wire::bth_opcode(b), vf::wire::bth_psn(b), vf::wire::bth_dqpn(b),
           vf::wire::bth_ackreq(b), 0, rte_pktmbuf_pkt_len(m)};
    if (s.is_ack()) s.syndrome = b[vf::wire::kBthLen];
    log.push_back(s);
    Verdict v = filter ? filter(s) : Verdict{};
    if (v.kind == Verdict::kDrop) {
      rte_pktmbuf_free(m);
      return;
    }
    RxMeta meta;
    meta.slid = from;
    meta.dlid = av.dlid;
    meta.sl = av.sl;
    meta.has_grh = av.is_global;
    std::memcpy(meta.sgid, sgid.raw, 16);
    std::memcpy(meta.dgid, av.dgid.data(), 16);
    if (av.is_global) fill_grh(meta, av, rte_pktmbuf_pkt_len(m));
    const Nanos at = sched_.now() + delay_ + v.extra_delay;
    if (v.kind == Verdict::kDuplicate) {
      rte_mbuf* c = rte_pktmbuf_copy(m, vf::test::test_mbuf_pool(), 0, UINT32_MAX);
      if (c) enqueue({at, c, meta, av.dlid});
    }
    enqueue({at, m, meta, av.dlid});
  }

  void fill_grh(RxMeta& meta, const vf::dp::Route& av, uint32_t transport_len) const {
    uint8_t* g = meta.grh;
    std::memset(g, 0, 40);
    meta.traffic_class = av.traffic_class;
    if (roce_ipv4) {
      uint8_t* ip = g + 20;
      const uint16_t total = uint16_t(20 + 8 + transport_len + 4);  // + UDP + ICRC
      ip[0] = 0x45;
      ip[1] = av.traffic_class;
      ip[2] = uint8_t(total >> 8);
      ip[3] = uint8_t(total);
      ip[6] = 0x40;  // DF
      ip[8] = av.hop_limit;
      ip[9] = 17;  // UDP
      std::memcpy(ip + 12, meta.sgid + 12, 4);
      std::memcpy(ip + 16, meta.dgid + 12, 4);
      uint32_t sum = 0;
      for (int i = 0; i < 20; i += 2) sum += uint32_t(ip[i]) << 8 | ip[i + 1];
      while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
      const uint16_t c = uint16_t(~sum);
      ip[10] = uint8_t(c >> 8);
      ip[11] = uint8_t(c);
      return;
    }
    const uint32_t vtf = 6u << 28 | uint32_t(av.traffic_class) << 20 | (av.flow_label & 0xFFFFF);
    g[0] = uint8_t(vtf >> 24);
    g[1] = uint8_t(vtf >> 16);
    g[2] = uint8_t(vtf >> 8);
    g[3] = uint8_t(vtf);
    const uint16_t paylen = uint16_t(transport_len + 4);  // + ICRC
    g[4] = uint8_t(paylen >> 8);
    g[5] = uint8_t(paylen);
    g[6] = 0x1B;  // next header: IBA
    g[7] = av.hop_limit;
    std::memcpy(g + 8, meta.sgid, 16);
    std::memcpy(g + 24, meta.dgid, 16);
  }

 private:
  struct Pending {
    Nanos at;
    rte_mbuf* m;
    RxMeta meta;
    uint16_t dlid;
  };
  using GidKey = std::array<uint8_t, 16>;
  static GidKey key(const uint8_t* raw) {
    GidKey k;
    std::memcpy(k.data(), raw, 16);
    return k;
  }
  struct DeliveryTimer : vf::Timer {
    DeliveryTimer() : vf::Timer(&fired) {}
    TestNet* net = nullptr;
    static void fired(vf::Timer& t, Nanos now) { static_cast<DeliveryTimer&>(t).net->deliver(now); }
  };

  void enqueue(Pending p) {
    auto it = q_.end();
    while (it != q_.begin() && std::prev(it)->at > p.at) --it;  // stable for equal times
    q_.insert(it, p);
    sched_.arm(timer_, q_.front().at);
  }
  void deliver(Nanos now) {
    while (!q_.empty() && q_.front().at <= now) {
      Pending p = q_.front();
      q_.pop_front();
      Hca* to = nullptr;
      if (auto it = by_lid_.find(p.dlid); it != by_lid_.end()) to = it->second;
      if (!to && p.dlid == 0 && p.meta.has_grh)
        if (auto it = by_gid_.find(key(p.meta.dgid)); it != by_gid_.end()) to = it->second;
      if (!to) {
        rte_pktmbuf_free(p.m);
        continue;
      }
      ++delivered;
      to->receive(p.m, p.meta);
    }
    if (!q_.empty()) sched_.arm(timer_, q_.front().at);
  }

  Scheduler& sched_;
  Nanos delay_;
  std::deque<Pending> q_;
  std::map<uint16_t, Hca*> by_lid_;
  std::map<GidKey, Hca*> by_gid_;
  DeliveryTimer timer_;
};

inline void TestPort::transmit(rte_mbuf* m, const vf::dp::Route& r) { net_.send(lid_, gid_, m, r); }

// Records engine events.
struct Events : EventSink {
  struct Ev {
    ClientId client;
    int type;  // -1 = CQ completion event
    uint32_t handle;
  };
  std::vector<Ev> list;
  void cq_event(ClientId c, uint32_t h) override { list.push_back({c, -1, h}); }
  void async_event(ClientId c, ibv_event_type t, uint32_t h) override {
    list.push_back({c, int(t), h});
  }
  size_t count(int type, uint32_t handle) const {
    size_t n = 0;
    for (auto& e : list) n += e.type == type && e.handle == handle;
    return n;
  }
};

// Two vHCAs (LIDs 1 and 2) on a test wire with a 1 us one-way delay, one app
// (client) on each, one RC QP pair connected.
class Pair : public ::testing::Test {
 protected:
  static constexpr uint16_t kLidA = 1, kLidB = 2;
  static constexpr Nanos kDelay = 1000;

  Pair()
      : net(sched, kDelay),
        port_a(net, kLidA, gid_of(0xA)),
        port_b(net, kLidB, gid_of(0xB)),
        hca_a(hca_config("vhca_a", 0xA), sched, port_a),
        hca_b(hca_config("vhca_b", 0xB), sched, port_b) {
    net.attach(kLidA, &hca_a);
    net.attach(kLidB, &hca_b);
    hca_a.set_event_sink(&ev_a);
    hca_b.set_event_sink(&ev_b);
  }

  // Rebuilds both vHCAs with other device and port settings (before setup()).
  void reconfigure(const std::function<void(HcaConfig&, PortInfo&)>& edit) {
    HcaConfig ca = hca_config("vhca_a", 0xA), cb = hca_config("vhca_b", 0xB);
    edit(ca, port_a.port);
    edit(cb, port_b.port);
    hca_a.~Hca();
    new (&hca_a) Hca(ca, sched, port_a);
    hca_b.~Hca();
    new (&hca_b) Hca(cb, sched, port_b);
    hca_a.set_event_sink(&ev_a);
    hca_b.set_event_sink(&ev_b);
  }

  // Another connected RC pair between the two apps (after setup()).
  std::pair<std::unique_ptr<AppQp>, std::unique_ptr<AppQp>> another_pair(const QpCaps& caps = {}) {
    auto qa = app_a->qp(pd_a, *cq_a, *cq_a, caps);
    auto qb = app_b->qp(pd_b, *cq_b, *cq_b, caps);
    connect(*app_a, *qa, kLidA, *app_b, *qb, kLidB, params);
    return {std::move(qa), std::move(qb)};
  }

  // One good SEND over (qa, qb); true when both sides complete successfully.
  bool exchange_ok(AppQp& qa, AppQp& qb, uint64_t id = 4242) {
    fill_pattern(buf_a.data() + 900000, 3000, uint32_t(id));
    app_b->post_recv(qb, recv_wqe(id, {sge(buf_b.data() + 900000, 4096, mr_b.lkey)}));
    app_a->post_send(qa, send_wqe(id, {sge(buf_a.data() + 900000, 3000, mr_a.lkey)}));
    bool ra = false, rb = false;
    run_until([&] {
      vhca_cqe e;
      while (app_a->poll_cq(*cq_a, e))
        if (e.wr_id == id && e.qp_num == qa.qpn) ra = e.status == IBV_WC_SUCCESS;
      while (app_b->poll_cq(*cq_b, e))
        if (e.wr_id == id && e.qp_num == qb.qpn) rb = e.status == IBV_WC_SUCCESS;
      return ra && rb;
    }, sched.now() + 1'000'000'000ull);
    return ra && rb && std::memcmp(buf_a.data() + 900000, buf_b.data() + 900000, 3000) == 0;
  }

  void setup(const ConnParams& p = {}, const QpCaps& caps = {}) {
    params = p;
    app_a = std::make_unique<App>(hca_a, 1);
    app_b = std::make_unique<App>(hca_b, 2);
    pd_a = app_a->alloc_pd();
    pd_b = app_b->alloc_pd();
    cq_a = app_a->cq();
    cq_b = app_b->cq();
    qp_a = app_a->qp(pd_a, *cq_a, *cq_a, caps);
    qp_b = app_b->qp(pd_b, *cq_b, *cq_b, caps);
    buf_a.assign(1 << 20, 0);
    buf_b.assign(1 << 20, 0);
    mr_a = app_a->mr(pd_a, buf_a.data(), buf_a.size());
    mr_b = app_b->mr(pd_b, buf_b.data(), buf_b.size());
    connect(*app_a, *qp_a, kLidA, *app_b, *qp_b, kLidB, p);
  }

  // Polls both engines until neither has anything to do right now.
  void settle() {
    for (int i = 0; i < 100000; ++i) {
      bool any = hca_a.poll(64);
      any |= hca_b.poll(64);
      for (Hca* h : extra_hcas) any |= h->poll(64);
      if (!any) return;
    }
    FAIL() << "engines never went idle";
  }
  // Runs virtual time (timers, then polling) until `done` or `limit`.
  bool run_until(const std::function<bool()>& done, Nanos limit = 10'000'000'000ull) {
    return run_virtual(sched, [this] { settle(); }, done, limit);
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
  // Collects CQEs from `cq` until `n` arrived (or the limit).
  std::vector<vhca_cqe> wait_cqes(App& app, AppCq& cq, size_t n, Nanos limit = 10'000'000'000ull) {
    std::vector<vhca_cqe> got;
    run_until(
        [&] {
          vhca_cqe e;
          while (app.poll_cq(cq, e)) got.push_back(e);
          return got.size() >= n;
        },
        limit);
    return got;
  }
  std::vector<Sent> sent_by(uint16_t lid, bool acks) const {
    std::vector<Sent> v;
    for (auto& s : net.log)
      if (s.from_lid == lid && s.is_ack() == acks) v.push_back(s);
    return v;
  }

  Scheduler sched;
  TestNet net;
  std::vector<Hca*> extra_hcas;  // polled by settle() too
  TestPort port_a, port_b;
  Hca hca_a, hca_b;
  Events ev_a, ev_b;
  ConnParams params;
  std::unique_ptr<App> app_a, app_b;
  uint32_t pd_a = 0, pd_b = 0;
  std::unique_ptr<AppCq> cq_a, cq_b;
  std::unique_ptr<AppQp> qp_a, qp_b;
  std::vector<uint8_t> buf_a, buf_b;
  vhca_reg_mr_rsp mr_a{}, mr_b{};
};


}  // namespace vf::engine::test
