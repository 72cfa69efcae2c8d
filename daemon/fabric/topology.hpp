// Builds what the config describes: per fabric the switches, links and HCA
// ports of the dataplane, one engine per vHCA wired to its port, and the
// routes the subnet manager computes (IB LFTs, Ethernet FDBs, neighbours).
// Lives on the lcore after construction.
#pragma once

#include <rte_mempool.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/config/config.hpp"
#include "daemon/telemetry/event_sink_stats.hpp"
#include "daemon/telemetry/metrics_text.hpp"
#include "core/scheduler.hpp"
#include "daemon/sm/subnet_manager.hpp"
#include "dataplane/fabric/hca_port.hpp"
#include "device/engine/hca.hpp"

namespace vf {
namespace dp {
class Fabric;
struct Endpoint;
struct ImpairmentSpec;
struct LinkInfo;
class PortCapture;
}  // namespace dp

struct VhcaInfo {
  std::string name;
  std::string fabric;
  config::LinkLayer link_layer;
  uint32_t index;
  engine::HcaConfig engine_config;  // the device: GUIDs, firmware, limits
  PortInfo port;                    // port 1 as it starts (then the HcaPort's record)
};

// What the lcore copies out of one vHCA for fabricctl: plain values, so the
// control thread can format them while the lcore runs on.
struct VhcaSnapshot {
  engine::Hca::ObjectCounts objects;
  engine::Counters engine;
  dp::HcaPortSnapshot port;
  PortInfo port_info;
  EventSinkStats events;  // the daemon's event sink (not the topology's): filled by the caller
};

class Topology {
 public:
  Topology(const config::Config& cfg, Scheduler& sched, rte_mempool* pool);
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  // How long an IB subnet manager waits between a link change and its sweep.
  static constexpr Nanos kSweepDelay = 1'000'000;

  const std::vector<VhcaInfo>& vhcas() const { return info_; }
  engine::Hca& engine(size_t i);

  // ---- links and subnet managers (lcore only, like everything below)
  // Takes link `link` of config fabric `fabric` down or brings it up
  // (dp::Fabric::set_link_up; `phys_down` is what a vHCA end shows while
  // down) and, on IB, has the fabric's SM sweep kSweepDelay later. Returns
  // the vHCAs at its ends: their port records changed.
  std::vector<size_t> set_link_up(size_t fabric, size_t link, bool up, PhysState phys_down);
  bool link_up(size_t fabric, size_t link) const;
  // The dataplane's link for link `link` of config fabric `fabric`.
  const dp::LinkInfo& link(size_t fabric, size_t link) const;
  // Loss and corruption on both directions of the link (dp::Fabric::set_impairment).
  void set_link_impairment(size_t fabric, size_t link, const dp::ImpairmentSpec& spec);
  // The VL record of an IB port (a vHCA's, or switch port `end.port`'s), and
  // programming one as the SM would (SL→VL for every input, VL arbitration).
  // Throws std::invalid_argument for a port that is not an IB port or a
  // record whose VLs are not operational there.
  PortQos port_qos(size_t fabric, const dp::Endpoint& end) const;
  void set_port_qos(size_t fabric, const dp::Endpoint& end, const PortQos& q);
  // An Ethernet port's ETS scheduling from now on. Lcore only.
  void set_port_ets(size_t fabric, const dp::Endpoint& end, const dp::EtsConfig& e);
  // A RoCE vHCA's DCQCN parameters (nullopt: no vHCA of that name on
  // Ethernet), and changing them. Lcore only.
  std::optional<engine::DcqcnConfig> dcqcn(const std::string& hca) const;
  void set_dcqcn(const std::string& hca, const engine::DcqcnConfig& c);
  // Taps port `end`'s link into `cap`, or removes the taps (dp::Fabric::set_capture).
  void set_capture(size_t fabric, const dp::Endpoint& end, dp::PortCapture* cap);
  // Rate and delay of both directions, from the next frame on (dp::Fabric::set_link_timing).
  void set_link_timing(size_t fabric, size_t link, uint64_t rate_bps, Nanos delay_ns);
  // Clears the counters of port `end` of fabric `fabric` (dp::reset; a vHCA
  // port's own counters too, not its engine's hw_counters).
  void reset_counters(size_t fabric, const dp::Endpoint& end);
  // Clears an Ethernet switch's own counters: bridge, FDB, router (no-op on IB).
  void reset_switch_counters(size_t fabric, const std::string& sw);
  // Told what the subnet managers did (kind "sm", a line of plain words), on the lcore.
  void on_event(std::function<void(std::string kind, std::string text)> fn);
  // Called for every vHCA port a sweep activated, after the sweep.
  void on_port_activated(std::function<void(size_t vhca)> fn);
  // The fabric's SM (null on Ethernet) and dataplane fabric.
  const sm::SubnetManager* subnet_manager(size_t fabric) const;
  sm::SubnetManager* subnet_manager(size_t fabric) {
    return const_cast<sm::SubnetManager*>(std::as_const(*this).subnet_manager(fabric));
  }
  const dp::Fabric& fabric(size_t i) const;
  dp::Fabric& fabric(size_t i) { return const_cast<dp::Fabric&>(std::as_const(*this).fabric(i)); }
  // vHCA i's port record as it is now (the HcaPort's). Lcore only, or before
  // the lcore runs: a change to it must be published (DaemonState::publish_port).
  const PortInfo& port_info(size_t i) const;
  // Polls every engine once; true if any did work. Lcore only.
  bool poll();
  // Counters and object counts for fabricctl. Lcore only.
  VhcaSnapshot snapshot(size_t i) const;
  // Every vHCA, switch port and link direction, for the Prometheus text
  // (vHCAs in vhcas() order; lcore and event-sink numbers left for the
  // caller). Lcore only.
  MetricsSnapshot metrics() const;
  // Credit-loop deadlocks that appeared since the last call, one plain-words
  // line each (dp::CreditDeadlockDetector). Lcore only; call about once a second.
  std::vector<std::string> check_credit_deadlocks();
  // PFC watchdogs that declared a storm, or saw one end, since the last
  // call, one plain-words line each. Lcore only; about once a second.
  std::vector<std::string> check_pfc_storms();
  // Fault injection: vHCA i's NIC holds XOFF on `prios` (0: stops), as a
  // stuck receive pipeline does. False when its port has no PFC (IB, not
  // linked). Lcore only.
  bool set_pfc_storm(size_t i, uint8_t prios);

 private:
  void add_vhca(dp::Fabric& fabric, const config::Fabric& f, const config::Hca& h, uint16_t lid);
  void add_switches(dp::Fabric& fabric, const config::Fabric& f);
  void warn_small_headroom(const dp::Fabric& fabric);
  void program_ethernet(dp::Fabric& fabric, const config::Fabric& f);
  void after_sweep(size_t fabric, const sm::SweepReport& r);
  const VhcaInfo& vhca_by_name(const std::string& name) const;

  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<VhcaInfo> info_;
};

// fabricctl's view of one vHCA (hca.list); any thread.
nlohmann::json hca_json(const VhcaInfo& info, const VhcaSnapshot& snap);

// The engine's view of one HCA from the config: GIDs, LID, MTU, speed/width.
VhcaInfo describe_vhca(const config::Config::HcaRef& ref, uint16_t lid);

}  // namespace vf
