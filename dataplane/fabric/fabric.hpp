// One emulated fabric (an IB subnet or an Ethernet/RoCEv2 L2 domain): owns its
// switches, HCA ports and links, and is built by the daemon from its config.
//
//   Fabric f(sched, "ib", LinkLayer::kInfiniBand, mbuf_pool);
//   Switch& sw = f.add_switch("ibsw0", 8, 100);
//   HcaPort& h0 = f.add_hca_port("vib0", {.link_layer = LinkLayer::kInfiniBand, .lid = 1, .gids = {...}});
//   f.connect(Endpoint::parse("vib0"), Endpoint::parse("ibsw0/1"), {100'000'000'000, 100, 4096});
//   f.set_lft("ibsw0", 1, 1);                 // the SM's routing
//   h0.set_receiver(..., &hca);               // the engine's Hca::receive
//
// Threading: build before the lcore runs (or from tasks posted to it); after
// that every mutator and the fast path belong to the lcore, and the control
// thread may only call snapshot functions. The containers never change once
// the lcore runs, so walking them for counters is safe.
//
// No EAL calls in here beyond mbuf alloc/free; the mempool comes from the caller
// and must outlive the fabric (mbufs in flight are freed on destruction).
#pragma once

#include <rte_mempool.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dataplane/fabric/hca_port.hpp"
#include "dataplane/fabric/ib_credits.hpp"
#include "dataplane/fabric/ecn_marker.hpp"
#include "dataplane/fabric/impairment.hpp"
#include "dataplane/fabric/link.hpp"
#include "dataplane/fabric/pfc.hpp"
#include "dataplane/fabric/port.hpp"
#include "dataplane/fabric/eth_switch.hpp"
#include "dataplane/fabric/ib_switch.hpp"
#include "dataplane/fabric/switch.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

// A link end: an HCA port ("vib0", port 0) or a switch port ("ibsw0/3").
struct Endpoint {
  std::string node;
  unsigned port = 0;  // 0 for an HCA port, 1..N for a switch port

  // "name" or "name/N" (N >= 1); nullopt when malformed.
  static std::optional<Endpoint> parse(std::string_view text);
  std::string str() const;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

class PortCapture;

struct LinkInfo {
  Endpoint a, b;
  std::unique_ptr<Link> link;
  // IB: each end's credit flow control (null when off); destroyed before
  // the link and the ports.
  std::unique_ptr<IbCredits> credits_a, credits_b;
  // Ethernet: each end's PFC (pfc.hpp; with an empty enable vector it still
  // consumes MAC Control frames and accounts the switch buffer).
  std::unique_ptr<Pfc> pfc_a, pfc_b;
  // Ethernet switch ports: ECN marking on egress (null when off or an HCA end).
  std::unique_ptr<EcnMarker> ecn_a, ecn_b;
  Port* port_a = nullptr;
  Port* port_b = nullptr;
  // Loss / corruption per direction (null: a clean wire).
  std::unique_ptr<Impairment> impair_ab, impair_ba;

  bool up() const { return port_a->link_up(); }  // both ends always agree
};

struct NamedPortSnapshot {
  std::string name;  // "vib0" or "ibsw0/3"
  PortSnapshot counters;
};

class Fabric {
 public:
  Fabric(Scheduler& sched, std::string name, LinkLayer ll, rte_mempool* pool);
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  const std::string& name() const { return name_; }
  LinkLayer link_layer() const { return ll_; }
  Scheduler& scheduler() const { return sched_; }

  // ---- builder. Throws std::invalid_argument with a readable reason on a bad
  // request (duplicate name, unknown endpoint, port already connected, link
  // layer mismatch, zero rate, a VL buffer too small for the MTU); the fabric
  // is unchanged then. On IB, connect() sets up credit flow control on both
  // ends unless either end's PortConfig turns it off; the link's data VLs are
  // the fewer of its two ends'.
  Switch& add_switch(const std::string& name, unsigned nports, Nanos latency_ns);
  Switch& add_switch(const std::string& name, const SwitchConfig& cfg);
  // cfg.link_layer must be the fabric's.
  HcaPort& add_hca_port(const std::string& name, const HcaPortConfig& cfg);
  // `vl_buffer_bytes` (IB): both ends' receive buffer per data VL, instead of
  // what each end's PortConfig says; 0 = theirs.
  Link& connect(const Endpoint& a, const Endpoint& b, const LinkParams& params,
                uint32_t vl_buffer_bytes = 0);
  void set_lft(std::string_view sw, uint16_t dlid, uint8_t port);
  // A static FDB entry (the switch learns the rest).
  void add_fdb(std::string_view sw, const Mac& mac, unsigned port, uint16_t vid = kDefaultVid);
  // The Ethernet switch `sw`; throws when there is none.
  EthSwitch& eth_switch(std::string_view sw);
  void set_neighbour(std::string_view hca_port, const Gid& gid, const Mac& mac);
  // Makes Ethernet switch `sw` an IPv4 router too (EthSwitch::enable_routing).
  Router& enable_routing(std::string_view sw, const RouterConfig& cfg);

  // ---- link state (the operator's port/link down, a pulled cable)
  // Takes the link that `end` is one end of down, or brings it up again:
  // both ports (their queues, flow control, LinkDownedCounter), the frames
  // on the wire, and an HCA end's PortInfo (HcaPort::link_changed, with
  // `phys_down` while down). Routing is the subnet manager's: nothing is
  // rerouted here. Throws std::invalid_argument when `end` has no link.
  const LinkInfo& set_link_up(const Endpoint& end, bool up, PhysState phys_down = PhysState::kPolling);
  const LinkInfo* find_link(const Endpoint& end) const;
  // Loss and corruption on both directions of the link at `end` (the b-to-a
  // direction draws from seed + 1); a spec without either clears them. Throws
  // std::invalid_argument when `end` has no link or a probability is not 0..1.
  void set_impairment(const Endpoint& end, const ImpairmentSpec& spec);
  // Taps both directions of the link at `port` into `cap` (what `port` sends
  // and receives), or with null removes the taps. Throws std::invalid_argument
  // when `port` has no link or its link is already captured.
  void set_capture(const Endpoint& port, PortCapture* cap);
  // A new rate and delay for both directions of the link at `end`, from the
  // next frame on (LinkDirection::set_timing). Throws std::invalid_argument
  // when `end` has no link or the rate is 0.
  void set_link_timing(const Endpoint& end, uint64_t rate_bps, Nanos delay_ns);

  // ---- lookup (nullptr / throws when unknown)
  Switch* find_switch(std::string_view name);
  HcaPort* find_hca_port(std::string_view name);
  Port& port(const Endpoint& e);  // throws std::invalid_argument
  const Port& port(const Endpoint& e) const { return const_cast<Fabric*>(this)->port(e); }
  // The credit flow control of a port, or null (Ethernet, credits off, not linked).
  const IbCredits* credits(const Port& p) const;
  // The PFC of a port, or null (IB, not linked).
  const Pfc* pfc(const Port& p) const;
  Pfc* pfc(const Port& p) { return const_cast<Pfc*>(std::as_const(*this).pfc(p)); }
  // The ECN marker of a switch port, or null (off, IB, an HCA port, not linked).
  const EcnMarker* ecn(const Port& p) const;
  // Clears the flow-control counters of `p` (PFC, ECN), as counters reset does
  // its PMA counters.
  void reset_flow_counters(const Port& p);

  const std::vector<std::unique_ptr<Switch>>& switches() const { return switches_; }
  const std::vector<std::unique_ptr<HcaPort>>& hca_ports() const { return hcas_; }
  const std::vector<LinkInfo>& links() const { return links_; }

  // Every port's counters (HCA ports first, then switch ports in order); for
  // the control thread. `now` as for snapshot(PortCounters, now).
  std::vector<NamedPortSnapshot> snapshot(Nanos now) const;

 private:
  bool name_taken(std::string_view n) const;
  // A port's own configuration and operational data VLs.
  std::pair<const PortConfig*, uint8_t> port_setup(const Endpoint& e);
  std::unique_ptr<IbCredits> make_credits(Port& p, uint32_t vl_buffer, uint32_t vl15_buffer,
                                          uint8_t data_vls);
  // `p`'s PFC on its link to `peer`, thresholds computed where its settings say 0.
  std::unique_ptr<Pfc> make_pfc(Port& p, const Port& peer, const Endpoint& e);
  Mac pfc_source_mac(const Endpoint& e);
  std::unique_ptr<EcnMarker> make_ecn(Port& p, const Endpoint& e);

  Scheduler& sched_;
  const std::string name_;
  const LinkLayer ll_;
  rte_mempool* pool_;
  // Destruction order: links (frames in flight) and ports (queued frames) free
  // their mbufs; links go first so no arrival lands on a destroyed port.
  std::vector<std::unique_ptr<Switch>> switches_;
  std::vector<std::unique_ptr<HcaPort>> hcas_;
  std::vector<LinkInfo> links_;
};

}  // namespace vf::dp
