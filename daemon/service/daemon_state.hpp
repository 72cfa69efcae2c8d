// Everything a running fabricd owns, in the order it must be built and torn
// down: the lcore and topology, the runtime tree that makes the vHCAs
// visible, the device and control sockets, signals and systemd notification.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 in C++20)

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/port_info.hpp"
#include "daemon/telemetry/cm_stats.hpp"
#include "daemon/cm/ports.hpp"
#include "daemon/config/config.hpp"
#include "daemon/lcore/eal.hpp"
#include "daemon/telemetry/event_log.hpp"
#include "daemon/telemetry/lcore_stats.hpp"
#include "daemon/telemetry/umad_stats.hpp"
#include "daemon/service/watchdog_policy.hpp"

namespace vf {

class Lcore;
class Topology;
class DeviceServer;
class EngineBackend;
class MadBackend;
class SmiAgent;
class UmadServer;
class AppEventSink;
class MetricsHttp;
class Netdev;
namespace control { class ControlServer; }
namespace cm {
class FabricRoutes;
class GsiWire;
class Service;
class UcmaServer;
}  // namespace cm
namespace runtime {
class RuntimeTree;
class OwnedDir;
}  // namespace runtime

class DaemonState {
 public:
  // What fabricd's control socket answers: the commands are a layer above
  // the state they read (daemon/commands), so main hands them in.
  using CommandSet = std::function<void(control::ControlServer&, DaemonState&, boost::asio::io_context&)>;
  DaemonState(const config::Config& cfg, Eal& eal, const CommandSet& commands);
  ~DaemonState();
  int run();  // until SIGTERM/SIGINT; returns the exit status

  // For control commands.
  const config::Config& config() const { return cfg_; }
  Lcore& lcore() { return *lcore_; }
  Topology& topology() { return *topology_; }
  std::chrono::steady_clock::time_point started() const { return started_; }
  size_t clients() const;
  AppEventSink& events(size_t vhca) { return *events_.at(vhca); }  // lcore only
  // After the owner changed vHCA `vhca`'s port record (on the lcore): renders
  // `port`, the lcore's copy of it, into the runtime tree on the control
  // thread, then calls `then` there with "" or what went wrong. Any thread.
  void publish_port(size_t vhca, PortInfo port, std::function<void(const std::string& error)> then);
  // After vHCA `vhca`'s port record changed on the lcore (its link went down
  // or trained, a sweep activated it): publishes the record as it is now,
  // then tells the vHCA's apps PORT_ACTIVE / PORT_ERR if what was published
  // entered or left ACTIVE since they were last told, so an app woken by the
  // event reads the new state in sysfs. `then` (may be empty) gets "" or what
  // went wrong, on the control thread. Lcore only.
  void port_changed(size_t vhca, std::function<void(const std::string& error)> then);
  const rte_mempool* mbuf_pool() const { return eal_.pool(); }
  // Copies every counter on the lcore (plain reads) and calls `then` with
  // the Prometheus text on the control thread; false when the lcore's queue
  // is full. Any thread.
  bool collect_metrics(std::function<void(std::string text)> then);
  // Where GET /metrics is served ("127.0.0.1:9469"), or "" when it is not.
  std::string metrics_address() const;
  // Records what happened for `fabricctl events` (event_log.hpp). Any thread.
  void fabric_event(std::string kind, std::string text);
  const EventLog& event_log() const { return event_log_; }  // control thread
  // What became of the MADs sent through vHCA `vhca`'s umad port. Control thread.
  UmadStats umad_stats(size_t vhca) const;
  // The CM messages vHCA `vhca`'s port sent and received. Control thread.
  cm::CmStats cm_stats(size_t vhca) const;
  const cm::Service* cm() const { return cm_.get(); }  // null once stopping
  // vHCA `vhca`'s Linux interface (netdev.hpp), or null. Control thread.
  const Netdev* netdev(size_t vhca) const { return vhca < netdevs_.size() ? netdevs_[vhca].get() : nullptr; }

 private:
  void watchdog_tick();
  void wait_for_hangup();
  // Re-reads the config file, applies what can change live and says what
  // needs a restart (daemon_reload.cpp). Control thread.
  void reload();
  // Copies every vHCA's counters on the lcore, writes them into sysfs on the
  // control thread, then waits kSysfsCounterPeriod and does it again.
  void refresh_counters();
  void report_stalls();
  void shutdown();
  void announce_device_fatal();
  // Creates the vHCAs' interfaces and discards what the host sends into them.
  void create_netdevs();
  void drain_netdev(size_t vhca);
  void start_metrics(const config::MetricsListen& at);

  const config::Config& cfg_;
  config::Config applied_;  // cfg_ with what reloads changed live (control thread)
  Eal& eal_;
  boost::asio::io_context io_;
  boost::asio::signal_set signals_;
  boost::asio::signal_set hangup_;  // SIGHUP: no reload; say so instead of dying
  boost::asio::steady_timer watchdog_;
  boost::asio::steady_timer counters_timer_;
  std::unique_ptr<Lcore> lcore_;
  // One per vHCA; outlives the topology, whose engines point at them.
  std::vector<std::unique_ptr<AppEventSink>> events_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<runtime::OwnedDir> hca_dir_;  // <runtime_dir>/hca: outlives the device sockets
  std::unique_ptr<runtime::RuntimeTree> tree_;
  // Per vHCA (null: none); the descriptors watch a dup of each fd.
  std::vector<std::unique_ptr<Netdev>> netdevs_;
  std::vector<std::unique_ptr<boost::asio::posix::stream_descriptor>> netdev_watch_;
  std::vector<std::unique_ptr<EngineBackend>> backends_;
  std::vector<std::unique_ptr<DeviceServer>> devices_;
  std::unique_ptr<SmiAgent> smi_;  // SMPs on the wire; its hooks run on the lcore only
  std::vector<std::unique_ptr<MadBackend>> mad_backends_;  // one per vHCA; outlive the lcore's tasks
  std::vector<std::unique_ptr<UmadServer>> umads_;
  std::vector<cm::Port> cm_ports_;
  std::unique_ptr<cm::FabricRoutes> cm_routes_;
  std::unique_ptr<cm::Service> cm_;
  std::unique_ptr<cm::GsiWire> cm_wire_;  // after cm_: the service points at it
  std::unique_ptr<cm::UcmaServer> ucma_;  // after cm_: its sessions name the service's channels
  std::unique_ptr<control::ControlServer> control_;
  std::unique_ptr<MetricsHttp> metrics_;
  std::chrono::steady_clock::time_point started_;
  std::shared_ptr<std::atomic<uint64_t>> heartbeat_;
  WatchdogGate watchdog_gate_;
  std::chrono::microseconds watchdog_period_{0};
  bool stopping_ = false;
  LcoreSnapshot stalls_seen_{};  // the lcore's clock figures at the last report_stalls()
  uint64_t stall_reported_drift_ = 0;
  std::chrono::steady_clock::time_point stall_report_quiet_until_{};
  static constexpr uint64_t kStallReportNs = 10'000'000;  // journal a second that gave up 10 ms
  std::vector<char> announced_active_;  // per vHCA, lcore only: what its apps were last told
  EventLog event_log_;                  // control thread
  std::vector<std::string> last_port_event_;  // per vHCA, control thread: not said twice
};

}  // namespace vf
