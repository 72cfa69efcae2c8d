// A whole fabric in virtual time, laid out in code: real engine::Hca
// instances over real dp::HcaPorts, Links and Switches, all on one virtual
// Scheduler, each vHCA driven by the in-process app of host_app.hpp. The
// port hands frames to its engine and back exactly as in fabricd, so a
// flow-control, congestion or fault run here exercises the code fabricd
// runs, deterministically and in milliseconds of real time.
//
// Unlike ConfigFabric (config_fabric.hpp, a fabric from fabricd's YAML
// through the daemon's Topology and subnet manager), a lab is programmed
// directly -- static LFTs, FDB entries and neighbours -- so nothing but the
// workload moves on the wire: what vfabric-compare's analytic comparisons
// and the flow-control tests need. Needs the DPDK EAL initialised.
//
//   FabricLab lab(LinkLayer::kInfiniBand, 5, {2'000'000'000, 500, 4096});
//   auto& a = lab.host(0); ...; lab.connect(a, qa, lab.host(4), qb);
//   lab.run_until([&] { ... });
//
// Host i is "vhca<i>" on switch port i+1. IB: LID i+1, one LFT entry per
// host. RoCEv2: MAC 02:00:00:00:00:<i+1>, GIDs fe80::EUI-64 and
// ::ffff:198.18.0.<i+1>, static FDB and neighbours (as fabricd programs them).
//
// Several switches: FabricLab(LabTopology) -- the switches, where each host
// hangs, the switch-to-switch links and, on IB, every switch's LFT (e.g. from
// the daemon's routing, see tests/unit/fabric/credit_loop_test.cpp). An
// Ethernet topology is not programmed at all, as in fabricd: the switches
// learn and the hosts resolve each other with ARP.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/scheduler.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "device/engine/hca.hpp"
#include "sim/host_app.hpp"
#include "sim/mbuf_pool.hpp"
#include "sim/virtual_run.hpp"

namespace vf::sim {

struct LabHost {
  std::string name;
  uint16_t lid = 0;       // IB
  Mac mac{};              // RoCEv2
  std::vector<Gid> gids;  // the port's and the engine's GID table
  dp::HcaPort* port = nullptr;
  std::unique_ptr<engine::Hca> hca;
  std::unique_ptr<App> app;
};

struct LabConfig {
  LinkLayer link_layer = LinkLayer::kInfiniBand;
  unsigned hosts = 2;
  dp::LinkParams link{100'000'000'000ULL, 500, 4096};
  Nanos switch_latency_ns = 100;
  dp::PortConfig port;  // queue sizes, for switch and HCA ports alike
  uint64_t switch_buffer_bytes = 0;  // the switch's shared packet memory; 0 = unlimited
  uint8_t default_tclass = 0;        // RoCE vHCAs (HcaPortConfig::default_tclass)
  engine::DcqcnConfig dcqcn;         // every vHCA's; line_rate_mbps from `link`
  std::map<unsigned, uint64_t> rx_rate_bps;  // host -> how fast it takes frames off its NIC
  uint32_t roce_mtu = 1024;  // RoCEv2: the vHCAs' active path MTU (4096 with a 9000-byte link MTU)
};

// An IB fabric of several switches.
struct LabTopology {
  struct Switch {
    std::string name;
    unsigned ports;
  };
  struct Host {  // host i ("vhca<i>", LID i+1) on switch `sw`, port `port`
    std::string sw;
    unsigned port;
    dp::LinkParams link;
    // Ethernet: the host's IPv4 address, subnet and gateway (a routed
    // fabric); 0 = 198.18.0.<i+1> on one flat subnet.
    uint32_t ipv4 = 0;
    uint8_t prefix_len = 0;
    uint32_t gateway = 0;
  };
  struct Cable {  // switch a/pa to switch b/pb
    std::string a;
    unsigned pa;
    std::string b;
    unsigned pb;
    dp::LinkParams link;
    uint32_t vl_buffer_bytes = 0;  // 0: derived
  };
  std::vector<Switch> switches;
  std::vector<Host> hosts;
  std::vector<Cable> cables;
  // lft[switch][host index] = egress port
  std::map<std::string, std::map<unsigned, uint8_t>> lft;
  // Ethernet: link layer, every port's QoS (PFC, ECN, ETS) and the vHCAs'.
  LinkLayer link_layer = LinkLayer::kInfiniBand;
  dp::PortConfig port;
  uint8_t default_tclass = 0;
  engine::DcqcnConfig dcqcn;
};

class FabricLab {
 public:
  explicit FabricLab(const LabConfig& cfg)
      : cfg_(cfg), fabric(sched, "lab", cfg.link_layer, mbuf_pool()) {
    dp::SwitchConfig sc;
    sc.nports = cfg.hosts;
    sc.latency_ns = cfg.switch_latency_ns;
    sc.port = cfg.port;
    sc.buffer_bytes = cfg.switch_buffer_bytes;
    fabric.add_switch("sw0", sc);
    hosts_.resize(cfg.hosts);
    for (unsigned i = 0; i < cfg.hosts; ++i) add_host(i, {"sw0", i + 1});
    for (unsigned i = 0; i < cfg.hosts; ++i) route_to(i);
  }
  explicit FabricLab(const LabTopology& t, Nanos switch_latency_ns = 100)
      : fabric(sched, "lab", t.link_layer, mbuf_pool()) {
    cfg_.hosts = unsigned(t.hosts.size());
    cfg_.link_layer = t.link_layer;
    cfg_.port = t.port;
    cfg_.default_tclass = t.default_tclass;
    cfg_.dcqcn = t.dcqcn;
    for (const auto& s : t.switches) {
      dp::SwitchConfig sc;
      sc.nports = s.ports;
      sc.latency_ns = switch_latency_ns;
      sc.port = t.port;
      fabric.add_switch(s.name, sc);
    }
    hosts_.resize(t.hosts.size());
    for (unsigned i = 0; i < t.hosts.size(); ++i) {
      cfg_.link = t.hosts[i].link;
      add_host(i, {t.hosts[i].sw, t.hosts[i].port}, &t.hosts[i]);
    }
    for (const auto& c : t.cables) fabric.connect({c.a, c.pa}, {c.b, c.pb}, c.link, c.vl_buffer_bytes);
    for (const auto& [sw, table] : t.lft)
      for (const auto& [host, port] : table) fabric.set_lft(sw, hosts_.at(host).lid, port);
  }
  FabricLab(const FabricLab&) = delete;
  FabricLab& operator=(const FabricLab&) = delete;
  ~FabricLab() {
    // Apps first (their objects live in the engines), then engines; the
    // fabric member frees what is still queued or in flight.
    for (auto& h : hosts_) h.app.reset();
    for (auto& h : hosts_) h.hca.reset();
  }

  LabHost& host(unsigned i) { return hosts_.at(i); }
  unsigned size() const { return unsigned(hosts_.size()); }
  bool is_ib() const { return cfg_.link_layer == LinkLayer::kInfiniBand; }
  dp::Port& switch_port_to(unsigned i) { return fabric.port(attached_.at(i)); }
  // RoCEv2: the PFC of host i's port and of the switch port it is linked to.
  const dp::Pfc& host_pfc(unsigned i) const { return *fabric.pfc(hosts_.at(i).port->port()); }
  const dp::Pfc& switch_pfc_to(unsigned i) { return *fabric.pfc(switch_port_to(i)); }
  // Host i's link: a_to_b() carries what it sends, b_to_a() what it receives.
  dp::Link& link_of(unsigned i) { return *fabric.links().at(i).link; }

  // The address vector that reaches host `to` (IB: its LID; RoCEv2: its IPv4 GID).
  ibv_ah_attr av_to(unsigned to, uint8_t sl = 0) const {
    ibv_ah_attr a{};
    a.port_num = 1;
    a.sl = sl;
    if (is_ib()) {
      a.dlid = hosts_.at(to).lid;
      return a;
    }
    a.is_global = 1;
    a.grh.sgid_index = 1;
    a.grh.hop_limit = 64;
    std::memcpy(a.grh.dgid.raw, hosts_.at(to).gids[1].data(), 16);
    return a;
  }

  // INIT -> RTR -> RTS on both sides of an RC/UC pair between hosts a and b.
  // Throws std::system_error naming the step that failed.
  void connect(unsigned a, AppQp& qa, unsigned b, AppQp& qb, const ConnParams& p = {}, uint8_t sl = 0) {
    connect_pair(*host(a).app, qa, av_to(b, sl), *host(b).app, qb, av_to(a, sl), p,
                 [&](int side, const ibv_ah_attr& av) { return resolve_av(side ? b : a, av); });
  }


  // What fabricd does before a command sets an address vector
  // (daemon/vhca/engine_backend.cpp): host h resolves its next hop (RoCE: ARP
  // on the wire, in virtual time). 0, or the errno modify_qp would fail with.
  int resolve_av(unsigned h, const ibv_ah_attr& av) {
    auto err = std::make_shared<int>(-1);
    host(h).hca->resolve_route(av, [err](int e) { *err = e; });
    run_until([&] { return *err >= 0; }, sched.now() + 2'000'000'000ULL);
    return *err;
  }

  // Polls every engine until none has work right now.
  void settle() {
    for (int i = 0; i < 1'000'000; ++i) {
      bool any = false;
      for (auto& h : hosts_) any |= h.hca->poll(64);
      if (!any) return;
    }
    throw std::runtime_error("engines never went idle: one keeps finding work without time passing");
  }
  // Runs virtual time (timers, then polling) until `done` or `limit`.
  bool run_until(const std::function<bool()>& done, Nanos limit = 10'000'000'000ULL) {
    return run_virtual(sched, [this] { settle(); }, done, limit);
  }

  Scheduler sched;

 private:
  void add_host(unsigned i, const dp::Endpoint& at, const LabTopology::Host* routed = nullptr) {
    attached_.push_back(at);
    LabHost& h = hosts_[i];
    h.name = "vhca" + std::to_string(i);
    engine::HcaConfig ec;
    ec.name = h.name;
    ec.node_guid = 0x0002c90300000000ULL + i + 1;
    ec.dcqcn = cfg_.dcqcn;
    ec.dcqcn.line_rate_mbps = uint32_t(cfg_.link.rate_bps / 1'000'000);
    dp::HcaPortConfig pc;  // the port's PortInfo, which the engine reports
    pc.link_layer = cfg_.link_layer;
    pc.port = cfg_.port;
    pc.default_tclass = cfg_.default_tclass;
    if (const auto r = cfg_.rx_rate_bps.find(i); r != cfg_.rx_rate_bps.end()) pc.rx_rate_bps = r->second;
    pc.sm_lid = 1;
    pc.mtu = cfg_.link_layer == LinkLayer::kInfiniBand ? cfg_.link.mtu : cfg_.roce_mtu;
    if (is_ib()) {
      h.lid = uint16_t(i + 1);
      h.gids.push_back(ib_gid(ec.node_guid));
      pc.lid = h.lid;
    } else {
      h.mac = {0x02, 0, 0, 0, 0, uint8_t(i + 1)};
      h.gids.push_back(link_local(h.mac));
      if (routed && routed->ipv4) {
        const uint32_t a = routed->ipv4;
        h.gids.push_back(ipv4_mapped(uint8_t(a >> 24), uint8_t(a >> 16), uint8_t(a >> 8), uint8_t(a)));
        pc.ipv4_prefix_len = routed->prefix_len;
        pc.ipv4_gateway = routed->gateway;
      } else {
        h.gids.push_back(ipv4_mapped(198, 18, 0, uint8_t(i + 1)));
      }
      pc.mac = h.mac;
    }
    pc.gids = h.gids;
    h.port = &fabric.add_hca_port(h.name, pc);
    h.hca = std::make_unique<engine::Hca>(ec, sched, *h.port);
    h.port->set_receiver(&engine::Hca::deliver, h.hca.get());
    h.port->set_tx_space(&engine::Hca::transmit_space, h.hca.get());
    fabric.connect({h.name, 0}, at, cfg_.link);
    h.app = std::make_unique<App>(*h.hca, engine::ClientId(i + 1));
  }
  void route_to(unsigned i) {
    const LabHost& h = hosts_[i];
    if (is_ib()) return fabric.set_lft("sw0", h.lid, uint8_t(i + 1));
    fabric.add_fdb("sw0", h.mac, i + 1);
    for (const LabHost& other : hosts_)
      if (&other != &h)
        for (const Gid& g : h.gids) fabric.set_neighbour(other.name, g, h.mac);
  }
  static Gid ib_gid(uint64_t guid) {
    Gid g{0xfe, 0x80};
    for (int b = 0; b < 8; ++b) g[8 + b] = uint8_t(guid >> (56 - 8 * b));
    return g;
  }
  static Gid link_local(const Mac& m) {
    return Gid{0xfe, 0x80, 0, 0, 0, 0, 0, 0, uint8_t(m[0] ^ 2), m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
  }
  static Gid ipv4_mapped(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    return Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
  }

  LabConfig cfg_;
  std::vector<LabHost> hosts_;
  std::vector<dp::Endpoint> attached_;  // each host's switch port

 public:
  dp::Fabric fabric;  // after hosts_: destroyed first, freeing frames in flight
};

// An RC flow: host `from` WRITEs `wrs` messages of `bytes` each into a buffer
// of host `to`, all posted at once, every one signalled (`wrs` at most the
// send queue QpCaps gives, 64).
struct WriteFlow {
  WriteFlow(FabricLab& lab, unsigned from, unsigned to, uint32_t bytes, unsigned wrs,
            const ConnParams& p = {}, uint8_t sl = 0)
      : lab_(lab), from_(from), wrs_(wrs) {
    auto& a = *lab.host(from).app;
    auto& b = *lab.host(to).app;
    src.resize(size_t(bytes) * wrs);
    for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 7 + from);
    dst.assign(src.size(), 0);
    const uint32_t pa = a.alloc_pd(), pb = b.alloc_pd();
    const auto smr = a.mr(pa, src.data(), src.size());
    const auto dmr = b.mr(pb, dst.data(), dst.size());
    cq_ = a.cq(255);
    peer_cq_ = b.cq(255);
    qp_ = a.qp(pa, *cq_, *cq_);
    peer_ = b.qp(pb, *peer_cq_, *peer_cq_);
    lab.connect(from, *qp_, to, *peer_, p, sl);
    for (unsigned k = 0; k < wrs; ++k) {
      vhca_send_wqe w = send_wqe(
          k, {sge(src.data() + size_t(k) * bytes, bytes, smr.lkey)}, IBV_SEND_SIGNALED,
          IBV_WR_RDMA_WRITE);
      w.remote_addr = reinterpret_cast<uint64_t>(dst.data()) + size_t(k) * bytes;
      w.rkey = dmr.rkey;
      a.post_send(*qp_, w);
    }
  }
  // Reaps the sender's completions; true once every WR has one.
  bool poll() {
    vhca_cqe e;
    while (lab_.host(from_).app->poll_cq(*cq_, e)) e.status == IBV_WC_SUCCESS ? ++ok : ++failed;
    return ok + failed == wrs_;
  }
  bool delivered() const { return src == dst; }

  unsigned ok = 0, failed = 0;
  std::vector<uint8_t> src, dst;

 private:
  FabricLab& lab_;
  unsigned from_, wrs_;
  std::unique_ptr<AppCq> cq_, peer_cq_;
  std::unique_ptr<AppQp> qp_, peer_;
};

}  // namespace vf::sim
