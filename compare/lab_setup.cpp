#include "compare/lab_setup.hpp"

namespace vf::compare {

const char* flavour_name(Flavour f) {
  switch (f) {
    case Flavour::kIb: return "InfiniBand (credits)";
    case Flavour::kRocePfc: return "RoCEv2 + PFC";
    case Flavour::kRoceEcn: return "RoCEv2 + PFC + ECN/DCQCN";
    case Flavour::kRoceLossy: return "RoCEv2 lossy";
  }
  return "?";
}

dp::PortConfig port_config(Flavour f) {
  dp::PortConfig p;
  if (f == Flavour::kIb || f == Flavour::kRoceLossy) return p;
  p.eth.trust_dscp = true;
  p.eth.pfc.enable = 1u << kRocePrio;
  if (f == Flavour::kRoceEcn) p.eth.ecn = {true, 8 * 1024, 32 * 1024, 0.05};  // fabricd's defaults
  return p;
}

engine::DcqcnConfig dcqcn_config(Flavour f) {
  engine::DcqcnConfig d;
  d.rp_enabled = d.np_enabled = f == Flavour::kRoceEcn;
  return d;
}

uint32_t path_mtu(Flavour f, const LinkSpec& l) { return is_ib(f) ? l.mtu : roce_path_mtu(l.mtu); }

ibv_mtu ibv_path_mtu(uint32_t bytes) {
  switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    default: return IBV_MTU_4096;
  }
}

sim::LabConfig single_switch(Flavour f, unsigned hosts, const LinkSpec& l, Nanos switch_latency_ns) {
  sim::LabConfig c;
  c.link_layer = is_ib(f) ? LinkLayer::kInfiniBand : LinkLayer::kEthernet;
  c.hosts = hosts;
  c.link = {l.rate_bps, l.delay_ns, l.mtu};
  c.switch_latency_ns = switch_latency_ns;
  c.port = port_config(f);
  c.default_tclass = is_ib(f) ? 0 : kRoceTclass;
  c.dcqcn = dcqcn_config(f);
  c.roce_mtu = is_ib(f) ? 1024 : roce_path_mtu(l.mtu);
  return c;
}

bool run_for(sim::FabricLab& lab, const std::function<bool()>& done, Nanos until) {
  if (lab.run_until(done, until)) return true;
  // run_until stopped because the next timer is after `until`: moving the
  // clock there fires nothing.
  if (lab.sched.now() < until) lab.sched.advance_to(until);
  return done();
}

void resolve_neighbours(sim::FabricLab& lab) {
  for (unsigned a = 0; a < lab.size(); ++a)
    for (unsigned b = 0; b < lab.size(); ++b)
      if (a != b)
        for (const Gid& g : lab.host(b).gids) lab.fabric.set_neighbour(lab.host(a).name, g, lab.host(b).mac);
}

uint64_t switch_buffered_bytes(sim::FabricLab& lab) {
  uint64_t b = 0;
  for (const auto& s : lab.fabric.switches())
    for (unsigned p = 1; p <= s->nports(); ++p)
      for (const auto& c : s->port(p).snapshot(0).classes) b += c.depth_bytes;
  return b;
}

uint64_t switch_discards(sim::FabricLab& lab) {
  uint64_t d = 0;
  for (const auto& s : lab.fabric.switches())
    for (unsigned p = 1; p <= s->nports(); ++p) {
      const dp::PortSnapshot ps = s->port(p).snapshot(0);
      d += ps.port_xmit_discards + ps.port_rcv_discards + ps.excessive_buffer_overrun_errors;
    }
  return d;
}

EngineTotals engine_totals(sim::FabricLab& lab) {
  EngineTotals t;
  for (unsigned i = 0; i < lab.size(); ++i) {
    const auto& c = lab.host(i).hca->counters();
    t.retransmitted += c.retransmitted_packets;
    t.timeouts += c.retransmit_timeouts;
    t.seq_naks += c.seq_naks_rcvd;
    t.cnp_handled += c.rp_cnp_handled;
    t.cnp_sent += c.np_cnp_sent;
  }
  return t;
}

uint64_t switch_pauses_sent(sim::FabricLab& lab) {
  uint64_t n = 0;
  for (const auto& s : lab.fabric.switches())
    for (unsigned p = 1; p <= s->nports(); ++p)
      if (const dp::Pfc* pfc = lab.fabric.pfc(s->port(p)))
        for (const auto& prio : pfc->snapshot().prio) n += prio.tx_pause;
  return n;
}

uint64_t hosts_xmit_wait_ns(sim::FabricLab& lab) {
  uint64_t w = 0;
  for (unsigned i = 0; i < lab.size(); ++i) w += lab.host(i).port->port().snapshot(0).port_xmit_wait_ns;
  return w;
}

}  // namespace vf::compare
