// A fabric built from fabricd's own YAML config, on one virtual clock: the
// daemon's Topology (daemon/fabric) builds the switches, links, HCA ports and
// engines and has the subnet manager sweep, exactly as fabricd does at
// start-up; Ethernet switches learn and hosts resolve each other with ARP on
// the wire. Each vHCA is driven by an in-process App (host_app.hpp) instead
// of a process. Time is virtual: run_until() advances it, deterministically.
// Needs the DPDK EAL initialised (init_eal).
#pragma once

#include <infiniband/verbs.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/scheduler.hpp"
#include "daemon/config/config.hpp"
#include "daemon/fabric/topology.hpp"
#include "sim/host_app.hpp"

namespace vf::sim {

class ConfigFabric {
 public:
  // `cfg` (load_config) must outlive the fabric.
  explicit ConfigFabric(const config::Config& cfg);
  ~ConfigFabric();
  ConfigFabric(const ConfigFabric&) = delete;
  ConfigFabric& operator=(const ConfigFabric&) = delete;

  // vHCAs in config order, as fabricd numbers them (uverbs0, 1, ...).
  size_t size() const { return apps_.size(); }
  // The vHCA named `name` ("vib0"); throws std::out_of_range naming it.
  size_t index(const std::string& name) const;
  const VhcaInfo& vhca(size_t i) const { return topology_->vhcas().at(i); }
  App& app(size_t i) { return *apps_.at(i); }
  Topology& topology() { return *topology_; }

  // The address vector that reaches vHCA `to`: IB, its LID as the SM
  // assigned it; RoCEv2, its first IPv4 GID (else GID 0), sent from the
  // same GID index.
  ibv_ah_attr av_to(size_t to, uint8_t sl = 0) const;
  // What fabricd does before modify_qp sets an address vector: vHCA `h`
  // resolves its next hop (RoCE: ARP on the wire, in virtual time). 0 or the
  // errno modify_qp would fail with.
  int resolve_av(size_t h, const ibv_ah_attr& av);
  // INIT -> RTR -> RTS on both sides of an RC/UC pair between vHCAs a and b.
  // Throws std::system_error naming the step that failed.
  void connect(size_t a, AppQp& qa, size_t b, AppQp& qb, const ConnParams& p = {}, uint8_t sl = 0);

  // Polls every engine until none has work right now; throws when one never stops.
  void settle();
  // The same for big fabrics: polls only the engines with work -- woken by
  // a frame, egress space or a QP timer since their last poll, still busy
  // then, or named by wake() -- appending each one polled to `polled`.
  // True if any did work.
  bool poll_active(std::vector<size_t>& polled);
  // vHCA i has work its engine learns of only by polling (an app posted).
  void wake(size_t i);
  // Runs virtual time (timers, then polling) until `done` or `limit`; returns done().
  bool run_until(const std::function<bool()>& done, Nanos limit = 10'000'000'000ULL);

  Scheduler sched;

 private:
  std::unique_ptr<Topology> topology_;  // after sched: its fabrics' timers live there
  std::vector<std::unique_ptr<App>> apps_;
  struct WakeCtx {
    ConfigFabric* f;
    size_t i;
  };
  std::unique_ptr<WakeCtx[]> wake_ctx_;  // stable addresses: the engines keep them
  std::vector<size_t> active_, polling_;
  std::vector<uint8_t> is_active_;
};

}  // namespace vf::sim
