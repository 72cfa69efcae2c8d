#include "daemon/service/daemon_state.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <future>

#include <boost/asio/post.hpp>

#include "daemon/config/addr.hpp"
#include "daemon/cm/fabric_routes.hpp"
#include "daemon/cm/gsi_wire.hpp"
#include "daemon/cm/service.hpp"
#include "daemon/cm/ucma_server.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/vhca/device_server.hpp"
#include "daemon/vhca/engine_backend.hpp"
#include "daemon/vhca/event_sink.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/umad/mad_backend.hpp"
#include "daemon/umad/smi_agent.hpp"
#include "daemon/telemetry/metrics_http.hpp"
#include "daemon/telemetry/metrics_text.hpp"
#include "daemon/ip/host_net.hpp"
#include "daemon/ip/netdev.hpp"
#include "daemon/runtime/owned_dir.hpp"
#include "daemon/runtime/runtime_tree.hpp"
#include "daemon/service/sd_notify.hpp"
#include "daemon/runtime/sysfs_counters.hpp"
#include "daemon/runtime/sysfs_spec.hpp"
#include "daemon/fabric/topology.hpp"
#include "daemon/umad/umad_server.hpp"

namespace vf {
namespace fs = std::filesystem;

namespace {
int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
// The connection manager's view of each vHCA port (before the lcore runs).
std::vector<cm::Port> cm_ports(const config::Config& cfg, const Topology& topo) {
  std::vector<cm::Port> out;
  for (size_t i = 0; i < topo.vhcas().size(); ++i) {
    const auto& v = topo.vhcas()[i];
    cm::Port p;
    p.vhca = i;
    p.name = v.name;
    while (p.fabric + 1 < cfg.fabrics.size() && cfg.fabrics[p.fabric].name != v.fabric) ++p.fabric;
    const config::Fabric& f = cfg.fabrics[p.fabric];
    p.infiniband = f.link_layer == config::LinkLayer::Infiniband;
    for (const config::Hca& h : f.hcas)
      if (h.name == v.name) {
        p.ipv4 = h.ipv4;
        p.prefix_len = h.prefix_len;
        p.gateway = h.gateway;
        p.node_guid = h.node_guid;
      }
    const PortInfo& pi = topo.port_info(i);
    p.lid = pi.lid;
    p.sm_lid = pi.sm_lid;
    p.mtu = mtu_code(pi.mtu) ? mtu_code(pi.mtu) : 1;
    if (p.infiniband) {
      if (!pi.gids.empty()) p.gid = pi.gids[0];
    } else if (p.ipv4) {
      const Gid want = addr::ipv4_mapped_gid(*p.ipv4);
      for (size_t g = 0; g < pi.gids.size(); ++g)
        if (pi.gids[g] == want) {
          p.gid = want;
          p.gid_index = uint8_t(g);
        }
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

DaemonState::DaemonState(const config::Config& cfg, Eal& eal, const CommandSet& commands)
    : cfg_(cfg), applied_(cfg), eal_(eal), signals_(io_, SIGINT, SIGTERM), hangup_(io_, SIGHUP), watchdog_(io_), counters_timer_(io_),
      started_(std::chrono::steady_clock::now()),
      heartbeat_(std::make_shared<std::atomic<uint64_t>>(0)) {
  const fs::path run_dir = cfg.daemon.runtime_dir;
  fs::create_directories(run_dir);
  // Ours alone, so the device servers' unlink-then-bind of their sockets in
  // it can only ever hit fabricd's own files.
  hca_dir_ = std::make_unique<runtime::OwnedDir>(run_dir / "hca");

  lcore_ = std::make_unique<Lcore>(cfg.daemon.time_dilation, cfg.daemon.exact_catch_up ? 0 : kCatchUpAfter);
  topology_ = std::make_unique<Topology>(cfg, lcore_->scheduler(), eal.pool());
  lcore_->add_poller([t = topology_.get()] { return t->poll(); });
  announced_active_.assign(topology_->vhcas().size(), 1);  // the SM's first sweep activated them all
  topology_->on_port_activated([this](size_t i) { port_changed(i, nullptr); });
  topology_->on_event([this](std::string kind, std::string text) { fabric_event(std::move(kind), std::move(text)); });
  last_port_event_.assign(topology_->vhcas().size(), "");

  // SMPs cross the fabric as VL15 packets; a response reaches the umad port
  // of the vHCA whose app sent the request.
  smi_ = std::make_unique<SmiAgent>(*topology_, cfg_, [this](size_t vhca, const mad::Mad& resp, uint16_t slid) {
    boost::asio::post(io_, [this, vhca, resp, slid] {
      if (!stopping_ && vhca < umads_.size()) umads_[vhca]->on_wire_response(UmadResult{resp, slid, {}});
    });
  });
  smi_->attach();  // the lcore is not running yet
  create_netdevs();  // before the runtime tree names them in gid_attrs/ndevs

  auto specs = runtime::make_device_specs(cfg);
  for (size_t i = 0; i < topology_->vhcas().size(); ++i) {
    const auto& v = topology_->vhcas()[i];
    const std::string sock = (hca_dir_->path() / (v.name + ".sock")).string();
    events_.push_back(std::make_unique<AppEventSink>());
    topology_->engine(i).set_event_sink(events_.back().get());  // the lcore is not running yet
    backends_.push_back(std::make_unique<EngineBackend>(*lcore_, *topology_, i, *events_.back()));
    devices_.push_back(std::make_unique<DeviceServer>(io_, sock, *backends_.back()));
    const std::string umad_sock = (hca_dir_->path() / (v.name + ".umad")).string();
    size_t fi = 0;
    while (fi + 1 < cfg.fabrics.size() && cfg.fabrics[fi].name != v.fabric) ++fi;
    mad_backends_.push_back(std::make_unique<MadBackend>(*lcore_, *topology_, cfg.fabrics.at(fi), fi, v.name));
    mad_backends_.back()->use_wire_for_smps(smi_.get(), i);
    umads_.push_back(std::make_unique<UmadServer>(io_, umad_sock, *mad_backends_.back(), cfg.daemon.admin_gid));
    for (auto& s : specs)
      if (s.ibdev == v.name) {
        s.device_attrs["vfabric_socket"] = sock;
        s.umad_socket = umad_sock;
        // sysfs shows the port's own record, not the config's idea of it
        // (the lcore is not running yet, so it may be read here).
        s.port = topology_->port_info(i);
      }
  }
  cm_ports_ = cm_ports(cfg, *topology_);
  std::vector<UmadBackend*> mads;
  for (auto& m : mad_backends_) mads.push_back(m.get());
  cm_routes_ = std::make_unique<cm::FabricRoutes>(io_, cm_ports_, std::move(mads));
  cm_ = std::make_unique<cm::Service>(io_, cm_ports_, *cm_routes_, [this](uint64_t ch) {
    if (ucma_) ucma_->notify(ch);
  });
  cm_wire_ = std::make_unique<cm::GsiWire>(io_, *lcore_, *topology_, cm_ports_);
  cm_wire_->attach(*cm_);  // the lcore is not running yet
  ucma_ = std::make_unique<cm::UcmaServer>(io_, (hca_dir_->path() / "rdma_cm.sock").string(), *cm_);
  runtime::TreeOptions tree_opts;
  tree_opts.runtime_dir = run_dir;
  tree_opts.rdma_cm_socket = ucma_->path();
  tree_ = std::make_unique<runtime::RuntimeTree>(tree_opts, specs);
  // The counter files exist from the start (all zero; the lcore is not running yet).
  for (size_t i = 0; i < topology_->vhcas().size(); ++i) {
    const VhcaSnapshot s = topology_->snapshot(i);
    tree_->update_counters(topology_->vhcas()[i].name, sysfs_counter_files(s.port, s.engine));
  }

  control::ServerOptions opts;
  opts.socket_path = run_dir / "control.sock";
  opts.admin_gid = cfg.daemon.admin_gid;
  control_ = std::make_unique<control::ControlServer>(io_, opts);
  commands(*control_, *this, io_);
  control_->start();
  if (cfg.daemon.metrics) start_metrics(*cfg.daemon.metrics);
}

// A port already taken (a second fabricd, another exporter) costs the
// monitoring, not the fabric: say so and serve everything else.
void DaemonState::start_metrics(const config::MetricsListen& at) {
  try {
    const boost::asio::ip::tcp::endpoint ep(boost::asio::ip::make_address(at.address), at.port);
    metrics_ = std::make_unique<MetricsHttp>(
        io_, ep,
        [this](MetricsHttp::Done done) {
          if (!collect_metrics([done](std::string text) { done(std::move(text)); })) done(std::nullopt);
        },
        MetricsHttp::Options{});
    spdlog::info("metrics: Prometheus can scrape http://{}/metrics", metrics_address());
  } catch (const boost::system::system_error& e) {
    spdlog::warn("metrics: cannot listen on {}: {}; nothing serves /metrics. Set daemon.metrics_listen to a free "
                 "address and port, or to off",
                 at.text(), e.code().message());
  }
}

std::string DaemonState::metrics_address() const {
  if (!metrics_) return "";
  const auto ep = metrics_->local_endpoint();
  return config::MetricsListen{ep.address().to_string(), ep.port()}.text();
}

void DaemonState::fabric_event(std::string kind, std::string text) {
  boost::asio::post(io_, [this, kind = std::move(kind), text = std::move(text), now = wall_ns()]() mutable {
    event_log_.add(std::move(kind), std::move(text), now);
  });
}

bool DaemonState::collect_metrics(std::function<void(std::string)> then) {
  return lcore_->post([this, then = std::move(then)] {
    // Plain copies on the lcore; the text is made on the control thread.
    MetricsSnapshot m = topology_->metrics();
    m.lcore = lcore_->snapshot();
    for (size_t i = 0; i < m.vhcas.size(); ++i) m.vhcas[i].events = events(i).stats();
    boost::asio::post(io_, [this, m = std::move(m), then]() mutable {
      if (stopping_) return;
      for (size_t i = 0; i < m.vhcas.size() && i < umads_.size(); ++i) {
        m.vhcas[i].mad = umad_stats(i);
        m.vhcas[i].cm = cm_stats(i);
      }
      then(prometheus_text(m));
    });
  });
}

cm::CmStats DaemonState::cm_stats(size_t vhca) const {
  if (!cm_) return {};
  cm::CmStats s = cm_->stats(vhca);
  if (cm_wire_) cm_wire_->add_drops(vhca, s);
  return s;
}

UmadStats DaemonState::umad_stats(size_t vhca) const {
  UmadStats s = umads_.at(vhca)->stats();
  mad_backends_.at(vhca)->add_drops(s);
  if (smi_) smi_->add_drops(vhca, s);
  return s;
}

DaemonState::~DaemonState() {
  if (!stopping_) shutdown();
}

size_t DaemonState::clients() const {
  size_t n = 0;
  for (auto& d : devices_) n += d->client_count();
  return n;
}

void DaemonState::create_netdevs() {
  netdevs_.resize(topology_->vhcas().size());
  netdev_watch_.resize(netdevs_.size());
  for (const NetdevSpec& s : netdev_specs(cfg_))
    for (size_t i = 0; i < netdevs_.size(); ++i) {
      if (topology_->vhcas()[i].name != s.hca) continue;
      netdevs_[i] = std::make_unique<Netdev>(s);
      // A port that is not ACTIVE (an IB port before the SM's sweep) has no
      // carrier, as IPoIB's ib0 has none then.
      if (int err = netdevs_[i]->set_carrier(topology_->port_info(i).passes_data()))
        spdlog::warn("interface {}: cannot set its carrier: {}", s.name, std::strerror(err));
      // Close-on-exec: a child that kept it open would keep the interface alive.
      const int watch = ::fcntl(netdevs_[i]->fd(), F_DUPFD_CLOEXEC, 0);
      if (watch < 0)
        throw std::runtime_error(fmt::format("interface {}: F_DUPFD_CLOEXEC: {}", s.name, std::strerror(errno)));
      netdev_watch_[i] = std::make_unique<boost::asio::posix::stream_descriptor>(io_, watch);
      drain_netdev(i);
      spdlog::info("{}: interface {} holds {}/{}", s.hca, s.name, addr::format_ipv4(s.ipv4), int(s.prefix_len));
    }
}

void DaemonState::drain_netdev(size_t i) {
  netdev_watch_[i]->async_wait(boost::asio::posix::stream_descriptor::wait_read, [this, i](boost::system::error_code ec) {
    if (ec || stopping_) return;
    netdevs_[i]->drain();
    drain_netdev(i);
  });
}

void DaemonState::publish_port(size_t vhca, PortInfo port, std::function<void(const std::string&)> then) {
  boost::asio::post(io_, [this, vhca, port = std::move(port), then = std::move(then)] {
    if (stopping_) return then("fabricd is stopping");  // the tree is going away
    // The interface's link follows the port, as a NIC's carrier follows its cable.
    if (const Netdev* n = netdev(vhca))
      if (int err = netdevs_[vhca]->set_carrier(port.passes_data()))
        spdlog::warn("interface {}: cannot set its carrier: {}", n->spec().name, std::strerror(err));
    std::string error;
    try {
      tree_->update_port(topology_->vhcas().at(vhca).name, port);
    } catch (const std::exception& e) {
      error = e.what();
      spdlog::warn("sysfs of {}: {}", topology_->vhcas().at(vhca).name, error);
    }
    then(error);
  });
}

void DaemonState::port_changed(size_t i, std::function<void(const std::string&)> then) {
  PortInfo now = topology_->port_info(i);
  const bool active = now.passes_data();
  // What the vHCA's port now is, in ibstat's words, once per change.
  std::string state = topology_->vhcas()[i].name + ": port 1 " + runtime::to_string(now.state) + " (" +
                      runtime::to_string(now.phys_state) + ")";
  publish_port(i, std::move(now), [this, i, active, state = std::move(state), then = std::move(then)](const std::string& error) {
    if (last_port_event_[i] != state) event_log_.add("port", state, wall_ns());
    last_port_event_[i] = state;
    // Decided on what was published, not on the state by then: a port that
    // went down and came back quickly still tells its apps both.
    const bool queued = lcore_->post([this, i, active] {
      if (bool(announced_active_[i]) == active) return;
      announced_active_[i] = active;
      events(i).port_event(active ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR, 1);
    });
    if (!then) return;
    if (!queued) return then("its apps could not be told: the dataplane is busy");
    if (!error.empty()) return then("sysfs could not be updated: " + error);
    then("");
  });
}

int DaemonState::run() {
  eal_.launch([l = lcore_.get()] { l->run(); });
  signals_.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", sig);
    shutdown();
  });
  wait_for_hangup();
  refresh_counters();
  if (auto interval = SdNotify::watchdog_interval()) {
    watchdog_period_ = *interval / 2;
    watchdog_tick();
  }
  size_t n = topology_->vhcas().size();
  spdlog::info("ready: {} fabrics, {} vHCAs, runtime dir {}", cfg_.fabrics.size(), n,
               cfg_.daemon.runtime_dir);
  fabric_event("daemon", fmt::format("fabricd ready: {} fabrics, {} vHCAs", cfg_.fabrics.size(), n));
  SdNotify::status("serving " + std::to_string(n) + " vHCAs");
  SdNotify::ready();
  io_.run();
  return 0;
}

// `systemctl reload` and daemons' habit: SIGHUP. See reload() (daemon_reload.cpp).
void DaemonState::wait_for_hangup() {
  hangup_.async_wait([this](boost::system::error_code ec, int) {
    if (ec) return;
    reload();
    wait_for_hangup();
  });
}

void DaemonState::refresh_counters() {
  counters_timer_.expires_after(kSysfsCounterPeriod);
  counters_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopping_) return;
    const bool queued = lcore_->post([this] {
      // Plain copies here; the files are made and written on the control thread.
      std::vector<VhcaSnapshot> snaps;
      snaps.reserve(topology_->vhcas().size());
      for (size_t i = 0; i < topology_->vhcas().size(); ++i) snaps.push_back(topology_->snapshot(i));
      // Once a second is also when the fabric is checked for credit-loop
      // deadlocks and PFC storms.
      std::vector<std::string> deadlocks = topology_->check_credit_deadlocks();
      std::vector<std::string> storms = topology_->check_pfc_storms();
      boost::asio::post(io_, [this, snaps = std::move(snaps), deadlocks = std::move(deadlocks),
                              storms = std::move(storms)] {
        for (const auto& d : deadlocks) {
          spdlog::error("{}", d);
          fabric_event("deadlock", d);
        }
        for (const auto& s : storms) {
          spdlog::warn("{}", s);
          fabric_event("pfc-storm", s);
        }
        report_stalls();
        if (stopping_) return;
        try {
          for (size_t i = 0; i < snaps.size(); ++i) {
            const auto files = sysfs_counter_files(snaps[i].port, snaps[i].engine);
            tree_->update_counters(topology_->vhcas()[i].name, files);
          }
        } catch (const std::exception& e) {
          spdlog::warn("sysfs counters: {}", e.what());
        }
        refresh_counters();
      });
    });
    if (!queued) refresh_counters();  // the lcore's queue is full: try next period
  });
}

// Once a second: if the emulated clock gave time up (the lcore did not run,
// or had more to do than one core can), the journal says so, at most once a
// minute, since figures measured meanwhile are the host's.
void DaemonState::report_stalls() {
  const LcoreSnapshot now = lcore_->snapshot();
  const uint64_t last_second = now.drift_ns - stalls_seen_.drift_ns;
  stalls_seen_ = now;
  const auto t = std::chrono::steady_clock::now();
  if (last_second < kStallReportNs || t < stall_report_quiet_until_) return;
  stall_report_quiet_until_ = t + std::chrono::minutes(1);
  spdlog::warn("lcore: the dataplane fell {:.1f} ms behind emulated time in the last second ({:.1f} ms since this was "
               "last said; {} stalls, the longest {:.1f} ms): it did not run, or had more to do than one core can. "
               "The emulated clock paused for it rather than invent events, so rates and latencies measured now are "
               "the host's, not the fabric's (time_dilation slows emulated time to fit)",
               double(last_second) / 1e6, double(now.drift_ns - stall_reported_drift_) / 1e6, now.stalls,
               double(now.max_stall_ns) / 1e6);
  stall_reported_drift_ = now.drift_ns;
}

// The watchdog is fed only while the lcore keeps executing tasks: a wedged
// dataplane gets the daemon restarted instead of silently hanging apps.
void DaemonState::watchdog_tick() {
  if (watchdog_gate_.may_feed(heartbeat_->load())) SdNotify::watchdog();
  watchdog_gate_.posted(lcore_->post([hb = heartbeat_] { hb->fetch_add(1); }));
  watchdog_.expires_after(watchdog_period_);
  watchdog_.async_wait([this](boost::system::error_code ec) {
    if (!ec) watchdog_tick();
  });
}

// Every open context learns the device is gone (IBV_EVENT_DEVICE_FATAL)
// while its socket is still open, as a driver reports a catastrophic error
// before its device disappears. Bounded: a wedged lcore must not hang
// shutdown.
void DaemonState::announce_device_fatal() {
  auto done = std::make_shared<std::promise<void>>();
  auto fut = done->get_future();
  std::vector<AppEventSink*> sinks;
  for (auto& e : events_) sinks.push_back(e.get());
  if (!lcore_->post([sinks, done] {
        for (auto* s : sinks) s->device_fatal();
        done->set_value();
      }))
    return;
  if (fut.wait_for(std::chrono::seconds(2)) != std::future_status::ready)
    spdlog::warn("shutdown: the dataplane did not deliver DEVICE_FATAL in time");
}

void DaemonState::shutdown() {
  if (stopping_) return;
  stopping_ = true;
  SdNotify::stopping();
  announce_device_fatal();
  control_->stop();
  if (metrics_) metrics_->stop();
  devices_.clear();  // posts teardown of every client to the lcore
  umads_.clear();    // apps reading a umad port see it close
  if (ucma_) ucma_->announce_removal();  // rdma_cm apps: DEVICE_REMOVAL for each id
  ucma_.reset();     // then the channels close
  cm_.reset();
  lcore_->stop();    // which runs what is queued, then returns
  eal_.join();
  tree_->remove();
  netdev_watch_.clear();  // closing the last descriptors deletes the interfaces
  netdevs_.clear();
  boost::system::error_code ec;
  signals_.cancel(ec);
  hangup_.cancel(ec);
  watchdog_.cancel();
  counters_timer_.cancel();
  io_.stop();
  hca_dir_->remove();  // the device sockets in it are gone with devices_
}

}  // namespace vf
