// Test rig for the device engine: vHCAs joined by a test double of the port
// (delivers each packet through the Scheduler after a fixed delay, and can
// drop, duplicate or delay chosen packets), and an "app" that drives the
// engine exactly like the provider does: slow-path structs, mapped memfd
// rings, WQEs written into the SQ/RQ and CQEs read from the CQ. The test
// process's own memory is the DMA target.
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

#include "dataplane/scheduler.hpp"
#include "dataplane/wire/opcode.hpp"
#include "dataplane/wire/transport.hpp"
#include "device/abi/vhca_abi.h"
#include "device/engine/hca.hpp"
#include "tests/support/eal_env.hpp"

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

class TestPort : public PacketIo {
 public:
  TestPort(TestNet& net, uint16_t lid, const ibv_gid& gid) : net_(net), lid_(lid), gid_(gid) {}
  rte_mbuf* alloc() override { return rte_pktmbuf_alloc(vf::test::test_mbuf_pool()); }
  bool can_transmit() const override { return !blocked; }
  void transmit(rte_mbuf* m, const ibv_ah_attr& av) override;
  uint16_t lid() const { return lid_; }
  const ibv_gid& gid() const { return gid_; }
  bool blocked = false;

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

  void send(uint16_t from, const ibv_gid& sgid, rte_mbuf* m, const ibv_ah_attr& av) {
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
    std::memcpy(meta.dgid, av.grh.dgid.raw, 16);
    if (av.is_global) fill_grh(meta, av, rte_pktmbuf_pkt_len(m));
    const Nanos at = sched_.now() + delay_ + v.extra_delay;
    if (v.kind == Verdict::kDuplicate) {
      rte_mbuf* c = rte_pktmbuf_copy(m, vf::test::test_mbuf_pool(), 0, UINT32_MAX);
      if (c) enqueue({at, c, meta, av.dlid});
    }
    enqueue({at, m, meta, av.dlid});
  }

  void fill_grh(RxMeta& meta, const ibv_ah_attr& av, uint32_t transport_len) const {
    uint8_t* g = meta.grh;
    std::memset(g, 0, 40);
    meta.traffic_class = av.grh.traffic_class;
    if (roce_ipv4) {
      uint8_t* ip = g + 20;
      const uint16_t total = uint16_t(20 + 8 + transport_len + 4);  // + UDP + ICRC
      ip[0] = 0x45;
      ip[1] = av.grh.traffic_class;
      ip[2] = uint8_t(total >> 8);
      ip[3] = uint8_t(total);
      ip[6] = 0x40;  // DF
      ip[8] = av.grh.hop_limit;
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
    const uint32_t vtf = 6u << 28 | uint32_t(av.grh.traffic_class) << 20 | (av.grh.flow_label & 0xFFFFF);
    g[0] = uint8_t(vtf >> 24);
    g[1] = uint8_t(vtf >> 16);
    g[2] = uint8_t(vtf >> 8);
    g[3] = uint8_t(vtf);
    const uint16_t paylen = uint16_t(transport_len + 4);  // + ICRC
    g[4] = uint8_t(paylen >> 8);
    g[5] = uint8_t(paylen);
    g[6] = 0x1B;  // next header: IBA
    g[7] = av.grh.hop_limit;
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

inline void TestPort::transmit(rte_mbuf* m, const ibv_ah_attr& av) { net_.send(lid_, gid_, m, av); }

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

// ---------------------------------------------------------------- the app

struct MappedRing {
  MappedRing() = default;
  MappedRing(const MappedRing&) = delete;
  MappedRing& operator=(const MappedRing&) = delete;
  ~MappedRing() { unmap(); }
  uint8_t* base = nullptr;
  size_t len = 0;
  uint32_t entries = 0;
  uint32_t entry_size = 0;
  void map(int fd, uint32_t n, uint32_t esz) {
    struct stat st;
    ASSERT_EQ(fstat(fd, &st), 0);
    len = size_t(st.st_size);
    ASSERT_GE(len, vhca_ring_bytes(n, esz));
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_NE(p, MAP_FAILED);
    base = static_cast<uint8_t*>(p);
    entries = n;
    entry_size = esz;
    close(fd);
  }
  void unmap() {
    if (base) munmap(base, len);
    base = nullptr;
  }
  vhca_ring_hdr* hdr() const { return reinterpret_cast<vhca_ring_hdr*>(base); }
  uint8_t* slot(uint32_t i) const {
    return base + sizeof(vhca_ring_hdr) + size_t(i & (entries - 1)) * entry_size;
  }
};

struct AppCq {
  uint32_t handle = 0;
  uint32_t entries = 0;
  MappedRing ring;
  uint32_t cons = 0;
};

struct AppQp {
  uint32_t handle = 0;
  uint32_t qpn = 0;
  MappedRing sq, rq;
  uint32_t sq_prod = 0, rq_prod = 0;
  vhca_create_qp_rsp rsp{};
};

// What the provider hands over at OPEN_CONTEXT: the app's own address space.
inline int self_mem_fd() { return ::open("/proc/self/mem", O_RDWR | O_CLOEXEC); }

struct QpCaps {
  uint32_t send_wr = 64, recv_wr = 64, send_sge = 4, recv_sge = 4, inline_data = 256;
  bool sig_all = false;
  ibv_qp_type type = IBV_QPT_RC;
};

class App {
 public:
  App(Hca& hca, ClientId id) : hca_(hca), id_(id) {
    vhca_open_context_rsp rsp{};
    EXPECT_EQ(hca.open_client(id, getpid(), self_mem_fd(), rsp), 0);
  }
  ClientId id() const { return id_; }
  Hca& hca() { return hca_; }

  uint32_t alloc_pd() {
    vhca_alloc_pd_rsp r{};
    EXPECT_EQ(hca_.alloc_pd(id_, r), 0);
    return r.pd_handle;
  }
  int reg_mr(uint32_t pd, const void* addr, uint64_t len, uint32_t access, vhca_reg_mr_rsp& r) {
    vhca_reg_mr_req q{};
    q.pd_handle = pd;
    q.access = access;
    q.addr = reinterpret_cast<uint64_t>(addr);
    q.length = len;
    return hca_.reg_mr(id_, q, r);
  }
  vhca_reg_mr_rsp mr(uint32_t pd, const void* addr, uint64_t len,
                     uint32_t access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                       IBV_ACCESS_REMOTE_READ) {
    vhca_reg_mr_rsp r{};
    EXPECT_EQ(reg_mr(pd, addr, len, access, r), 0);
    return r;
  }
  std::unique_ptr<AppCq> cq(uint32_t cqe = 255) {
    auto c = std::make_unique<AppCq>();
    vhca_create_cq_req q{};
    q.cqe = cqe;
    vhca_create_cq_rsp r{};
    Fd fd;
    EXPECT_EQ(hca_.create_cq(id_, q, r, fd), 0);
    if (fd.fd < 0) return c;
    c->handle = r.cq_handle;
    c->entries = r.entries;
    c->ring.map(fd.fd, r.entries, sizeof(vhca_cqe));
    return c;
  }
  int create_qp(uint32_t pd, const AppCq& scq, const AppCq& rcq, const QpCaps& caps, AppQp& q) {
    vhca_create_qp_req req{};
    req.pd_handle = pd;
    req.send_cq_handle = scq.handle;
    req.recv_cq_handle = rcq.handle;
    req.qp_type = caps.type;
    req.sq_sig_all = caps.sig_all;
    req.cap.max_send_wr = caps.send_wr;
    req.cap.max_recv_wr = caps.recv_wr;
    req.cap.max_send_sge = caps.send_sge;
    req.cap.max_recv_sge = caps.recv_sge;
    req.cap.max_inline_data = caps.inline_data;
    Fd sq, rq;
    int st = hca_.create_qp(id_, req, q.rsp, sq, rq);
    if (st) return st;
    q.handle = q.rsp.qp_handle;
    q.qpn = q.rsp.qp_num;
    q.sq.map(sq.fd, q.rsp.sq_entries, sizeof(vhca_send_wqe));
    q.rq.map(rq.fd, q.rsp.rq_entries, sizeof(vhca_recv_wqe));
    return 0;
  }
  std::unique_ptr<AppQp> qp(uint32_t pd, const AppCq& scq, const AppCq& rcq,
                            const QpCaps& caps = {}) {
    auto q = std::make_unique<AppQp>();
    EXPECT_EQ(create_qp(pd, scq, rcq, caps, *q), 0);
    return q;
  }
  int modify(const AppQp& q, const ibv_qp_attr& attr, uint32_t mask) {
    vhca_modify_qp_req r{};
    r.qp_handle = q.handle;
    r.attr_mask = mask;
    r.attr = attr;
    return hca_.modify_qp(id_, r);
  }
  vhca_query_qp_rsp query(const AppQp& q) {
    vhca_query_qp_req r{};
    r.qp_handle = q.handle;
    r.attr_mask = ~0u;
    vhca_query_qp_rsp rsp{};
    EXPECT_EQ(hca_.query_qp(id_, r, rsp), 0);
    return rsp;
  }

  // Fast path, as the provider does it.
  void post_send(AppQp& q, const vhca_send_wqe& w) {
    std::memcpy(q.sq.slot(q.sq_prod), &w, sizeof(w));
    __atomic_store_n(&q.sq.hdr()->producer, ++q.sq_prod, __ATOMIC_RELEASE);
  }
  void post_recv(AppQp& q, const vhca_recv_wqe& w) {
    std::memcpy(q.rq.slot(q.rq_prod), &w, sizeof(w));
    __atomic_store_n(&q.rq.hdr()->producer, ++q.rq_prod, __ATOMIC_RELEASE);
  }
  bool poll_cq(AppCq& c, vhca_cqe& out) {
    const uint32_t prod = __atomic_load_n(&c.ring.hdr()->producer, __ATOMIC_ACQUIRE);
    if (prod == c.cons) return false;
    std::memcpy(&out, c.ring.slot(c.cons), sizeof(out));
    __atomic_store_n(&c.ring.hdr()->consumer, ++c.cons, __ATOMIC_RELEASE);
    return true;
  }
  std::vector<vhca_cqe> drain(AppCq& c) {
    std::vector<vhca_cqe> v;
    vhca_cqe e;
    while (poll_cq(c, e)) v.push_back(e);
    return v;
  }
  void arm(AppCq& c, uint32_t how) {
    __atomic_store_n(&c.ring.hdr()->arm, how, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c.ring.hdr()->arm_sn, 1, __ATOMIC_RELEASE);
  }

 private:
  Hca& hca_;
  ClientId id_;
};

inline vhca_sge sge(const void* p, uint32_t len, uint32_t lkey) {
  return vhca_sge{reinterpret_cast<uint64_t>(p), len, lkey};
}

inline vhca_send_wqe send_wqe(uint64_t wr_id, std::initializer_list<vhca_sge> sges,
                              uint32_t flags = IBV_SEND_SIGNALED, uint8_t opcode = IBV_WR_SEND,
                              uint32_t imm_be = 0) {
  vhca_send_wqe w;
  std::memset(&w, 0, sizeof(w));
  w.wr_id = wr_id;
  w.opcode = opcode;
  w.send_flags = flags;
  w.imm_data = imm_be;
  for (const vhca_sge& s : sges) w.sge[w.num_sge++] = s;
  return w;
}

inline vhca_send_wqe inline_wqe(uint64_t wr_id, const void* data, uint16_t len,
                                uint32_t flags = IBV_SEND_SIGNALED) {
  vhca_send_wqe w;
  std::memset(&w, 0, sizeof(w));
  w.wr_id = wr_id;
  w.opcode = IBV_WR_SEND;
  w.send_flags = flags | IBV_SEND_INLINE;
  w.inline_len = len;
  std::memcpy(w.inline_data, data, len);
  return w;
}

inline vhca_recv_wqe recv_wqe(uint64_t wr_id, std::initializer_list<vhca_sge> sges) {
  vhca_recv_wqe w;
  std::memset(&w, 0, sizeof(w));
  w.wr_id = wr_id;
  for (const vhca_sge& s : sges) w.sge[w.num_sge++] = s;
  return w;
}

struct ConnParams {
  ibv_mtu mtu = IBV_MTU_1024;
  uint32_t psn_a = 100, psn_b = 5000;  // each side's send PSN
  uint8_t timeout = 14;                // 4.096us * 2^14 = 67.1 ms
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 12;  // 0.64 ms
  uint8_t max_rd_atomic = 1, max_dest_rd_atomic = 1;
  uint32_t access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;  // qp_access_flags
};

inline ibv_qp_attr init_attr(uint32_t access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = access;
  return a;
}
inline constexpr uint32_t kInitMask =
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;

inline ibv_qp_attr rtr_attr(uint32_t dest_qpn, uint16_t dlid, uint32_t rq_psn, const ConnParams& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = p.mtu;
  a.dest_qp_num = dest_qpn;
  a.rq_psn = rq_psn;
  a.max_dest_rd_atomic = p.max_dest_rd_atomic;
  a.min_rnr_timer = p.min_rnr_timer;
  a.ah_attr.dlid = dlid;
  a.ah_attr.port_num = 1;
  return a;
}
inline constexpr uint32_t kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

inline ibv_qp_attr rts_attr(uint32_t sq_psn, const ConnParams& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = sq_psn;
  a.timeout = p.timeout;
  a.retry_cnt = p.retry_cnt;
  a.rnr_retry = p.rnr_retry;
  a.max_rd_atomic = p.max_rd_atomic;
  return a;
}
inline constexpr uint32_t kRtsMask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                                     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                     IBV_QP_MAX_QP_RD_ATOMIC;

inline void connect(App& a, AppQp& qa, uint16_t lid_a, App& b, AppQp& qb, uint16_t lid_b,
                    const ConnParams& p = {}) {
  ASSERT_EQ(a.modify(qa, init_attr(p.access), kInitMask), 0);
  ASSERT_EQ(b.modify(qb, init_attr(p.access), kInitMask), 0);
  ASSERT_EQ(a.modify(qa, rtr_attr(qb.qpn, lid_b, p.psn_b, p), kRtrMask), 0);
  ASSERT_EQ(b.modify(qb, rtr_attr(qa.qpn, lid_a, p.psn_a, p), kRtrMask), 0);
  ASSERT_EQ(a.modify(qa, rts_attr(p.psn_a, p), kRtsMask), 0);
  ASSERT_EQ(b.modify(qb, rts_attr(p.psn_b, p), kRtsMask), 0);
}

inline HcaConfig hca_config(const char* name, uint16_t lid, uint64_t guid) {
  HcaConfig c;
  c.name = name;
  c.node_guid = guid;
  c.port.link_layer = IBV_LINK_LAYER_INFINIBAND;
  c.port.lid = lid;
  c.port.sm_lid = 1;
  c.port.active_mtu = IBV_MTU_4096;
  return c;
}

inline ibv_gid gid_of(uint64_t guid) {
  ibv_gid g{};
  g.global.subnet_prefix = htobe64(0xfe80000000000000ull);
  g.global.interface_id = htobe64(guid);
  return g;
}

inline void fill_pattern(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) p[i] = uint8_t((i * 131 + seed * 7 + (i >> 8)) & 0xFF);
}

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
        hca_a(hca_config("vhca_a", kLidA, 0xA), sched, port_a),
        hca_b(hca_config("vhca_b", kLidB, 0xB), sched, port_b) {
    net.attach(kLidA, &hca_a);
    net.attach(kLidB, &hca_b);
    hca_a.set_event_sink(&ev_a);
    hca_b.set_event_sink(&ev_b);
  }

  // Rebuilds both vHCAs with other settings (before setup()).
  void reconfigure(const std::function<void(HcaConfig&)>& edit) {
    HcaConfig ca = hca_config("vhca_a", kLidA, 0xA), cb = hca_config("vhca_b", kLidB, 0xB);
    edit(ca);
    edit(cb);
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
    settle();
    while (!done()) {
      if (sched.idle() || sched.next_deadline() > limit) return done();
      sched.run_next();
      settle();
    }
    return true;
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
