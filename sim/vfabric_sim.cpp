// vfabric-sim: fabricd's fabric from fabricd's own config, on one virtual
// clock, driven by a workload instead of applications (docs/simulator.md).
#include <sys/resource.h>
#include <unistd.h>

#include <rte_mempool.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/version.hpp"
#include "daemon/config/config.hpp"
#include "daemon/config/units.hpp"
#include "sim/config_fabric.hpp"
#include "sim/mbuf_pool.hpp"
#include "sim/plan_run.hpp"
#include "sim/port_pcap.hpp"
#include "sim/run_loop.hpp"
#include "sim/sim_output.hpp"
#include "sim/workload_options.hpp"

namespace {

using namespace vf;
using namespace vf::sim;

constexpr const char* kDescription =
    "Runs the fabric a fabricd config describes -- the same parser, subnet manager, routing, QoS, "
    "PFC/DCQCN, engines, ports, links and switches fabricd runs -- on one virtual clock, with every "
    "vHCA driven by a workload instead of an application: NCCL-style collectives over RC QPs "
    "(ring or halving-doubling all-reduce, all-gather, reduce-scatter, all-to-all), incast, a "
    "permutation, or a list of flows. Prints time per collective, algorithm and bus bandwidth as "
    "nccl-tests does, beside the host link's bound. The same config and options give the same "
    "figures on every machine.";

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

struct Cli {
  std::string config;
  WorkloadOptions w;
  RunOptions run;
  std::string chunk = "512KiB";
  unsigned iters = 1;
  std::string time_limit = "10s";
  std::string csv, ports_csv, metrics, svg;
  unsigned mbufs = 0;
  unsigned sl = 0;
  std::string adaptive;  // overrides the config's adaptive_routing
  std::vector<std::string> capture;  // ports whose frames go to pcapng files
  std::string capture_dir = ".";
  unsigned snaplen = 65535;
  bool quiet = false;
};

void add_options(CLI::App& app, Cli& c) {
  app.add_option("-c,--config", c.config, "fabricd's YAML config (a topology: key generates big fabrics)")
      ->required();
  app.add_option("--fabric", c.w.fabric, "the config's fabric to run (default: the first)");
  app.add_option("-w,--workload", c.w.workload,
                 "allreduce | allgather | reducescatter | alltoall | incast | permutation | flows")
      ->capture_default_str();
  app.add_option("--algo", c.w.algo, "ring | halving-doubling (hd) | direct (alltoall); default ring / direct");
  app.add_option("-b,--size", c.w.size,
                 "bytes per rank, as nccl-tests counts them (all-gather: the output); incast, permutation: per flow")
      ->capture_default_str();
  app.add_option("--chunk", c.chunk, "bytes per RDMA WRITE (NCCL's slice)")->capture_default_str();
  app.add_option("--channels", c.run.channels, "RC QPs per pair of ranks; pieces alternate over them")
      ->capture_default_str();
  app.add_option("--window", c.run.window, "WRs each rank keeps outstanding")->capture_default_str();
  app.add_option("-n,--iters", c.iters, "iterations, one after the other")->capture_default_str();
  app.add_option("--ranks", c.w.ranks, "ranks (default: every vHCA of the fabric)");
  app.add_option("--placement", c.w.placement, "rank to vHCA: linear | strided:K | random[:SEED]")
      ->capture_default_str();
  app.add_option("--receiver", c.w.receiver, "incast: the receiving rank")->capture_default_str();
  app.add_option("--senders", c.w.senders, "incast: how many ranks send (default: every other)");
  app.add_option("--seed", c.w.seed, "permutation and random placement")->capture_default_str();
  app.add_option("--flows", c.w.flows_file, "flows: the file (SRC DST BYTES [START] per line)");
  app.add_flag("--check", c.run.check, "materialise every byte and check it on arrival (small runs)");
  app.add_option("--sl", c.sl, "IB service level of every QP (0-15)")->check(CLI::Range(0, 15))->capture_default_str();
  app.add_option("--adaptive-routing", c.adaptive,
                 "off | per-packet | flowlet: the switches' choice among equal-cost ports, over the config's "
                 "adaptive_routing")
      ->check(CLI::IsMember({"off", "per-packet", "flowlet"}));
  app.add_option("--capture", c.capture,
                 "write the frames crossing this port (a vHCA: vib0, or a switch port: leaf0/3) to "
                 "DIR/PORT.pcapng, as fabricctl capture -w writes them; repeatable")
      ->type_name("PORT");
  app.add_option("--capture-dir", c.capture_dir, "where --capture writes its files")->capture_default_str();
  app.add_option("--snaplen", c.snaplen,
                 "bytes of each captured frame kept (tshark calls truncated IB records malformed)")
      ->check(CLI::Range(1u, 65535u))
      ->capture_default_str();
  app.add_option("--time-limit", c.time_limit, "give up after this much simulated time (from the workload's start)")
      ->capture_default_str();
  app.add_option("--csv", c.csv, "write one line per iteration here");
  app.add_option("--ports-csv", c.ports_csv, "write every port's counters here at the end");
  app.add_option("--svg", c.svg,
                 "write an SVG plot here at the end: when each rank finished, beside the host link's bound");
  app.add_option("--metrics", c.metrics, "write the run's Prometheus exposition here at the end");
  app.add_option("--mbufs", c.mbufs, "packet buffers (default: scaled to the fabric's links)");
  app.add_flag("-q,--quiet", c.quiet, "no progress lines");
  app.footer(
      "OUTPUT\n"
      "  One line per iteration, nccl-tests' columns: size (B), time (us), algbw and busbw (GB/s),\n"
      "  and the bound: the host link's payload rate, which a ring's busbw cannot exceed. Then\n"
      "  what the run cost: events, wall time, simulated time per wall second, peak RSS.\n"
      "  Progress (simulated time, events/s, share delivered, ETA) goes to stderr each second.\n\n"
      "EXIT STATUS\n"
      "  0 done; 1 the run failed (a completion in error, corrupted data, stuck, time limit);\n"
      "  2 bad options or config; 130 stopped by SIGINT/SIGTERM (what finished is printed).\n\n"
      "EXAMPLES\n"
      "  vfabric-sim -c configs/generated.yaml -w allreduce -b 64MiB\n"
      "  vfabric-sim -c configs/sim-fat-tree-k16.yaml --fabric roce -w alltoall -b 16MiB\n"
      "  vfabric-sim -c lab.yaml -w incast -b 1MiB --receiver 0 --senders 7\n"
      "  vfabric-sim -c configs/generated.yaml -w permutation -b 4MiB --adaptive-routing flowlet\n"
      "  vfabric-sim -c configs/generated.yaml -w allreduce -b 1MiB --capture leaf0/3 --capture vib0\n"
      "  vfabric-sim -c lab.yaml -w flows --flows trace.txt --csv flows.csv");
}

uint64_t parse_bytes(const std::string& s, const char* what) {
  auto b = units::parse_uint(s, uint64_t{1} << 30);
  if (!b) b = units::parse_size_bytes(s, uint64_t{1} << 30);
  if (!b) throw std::invalid_argument(std::string(what) + " '" + s + "' is not a size, e.g. 512KiB");
  return *b;
}

// A run whose frames took every packet buffer waits for buffers nobody
// frees: say so rather than leave only "time limit" or "stuck".
const char* mbufs_short() {
  return rte_mempool_avail_count(mbuf_pool()) < 64
             ? "; the packet buffers ran out (every mbuf is queued): raise --mbufs"
             : "";
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

// Every vHCA keeps its memory file open; a thousand hosts need more than
// the default soft limit of descriptors.
void raise_fd_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

void progress_line(const LoopStats& st, const ConfigFabric& f, const PlanRun& run, const Plan& p, unsigned iter,
                   unsigned iters) {
  const double wall = std::chrono::duration<double>(st.wall).count();
  const double total = double(p.total_bytes()) * iters, done = double(run.delivered()) + double(p.total_bytes()) * iter;
  const double share = total > 0 ? done / total : 0;
  const double eta = share > 0 ? wall / share * (1 - share) : 0;
  std::fprintf(stderr, "vfabric-sim: t=%.3f ms simulated, %.2f M events/s, %.1f%% delivered, ETA %.0f s\n",
               double(f.sched.now()) / 1e6, double(st.events) / 1e6 / (wall > 0 ? wall : 1), share * 100, eta);
}

// The config's adaptive routing, or the --adaptive-routing one if the
// fabric can route that way (the config reader's own rule).
void override_adaptive(config::Fabric& f, const std::string& mode) {
  if (mode.empty()) return;
  config::AdaptiveRouting::Mode m = config::AdaptiveRouting::Mode::Off;
  for (const auto k : {config::AdaptiveRouting::Mode::PerPacket, config::AdaptiveRouting::Mode::Flowlet})
    if (mode == config::to_string(k)) m = k;
  if (const config::AdaptiveProblem p = config::adaptive_routing_problem(f, m); !p.problem.empty())
    throw std::invalid_argument("--adaptive-routing " + mode + ": " + p.problem + "; " + p.fix);
  f.adaptive.mode = m;
}

int run(Cli& c) {
  config::Config cfg = only_fabric(config::load_config(c.config, config::kSimLimits), c.w.fabric);
  override_adaptive(cfg.fabrics[0], c.adaptive);
  const config::Fabric& fab = cfg.fabrics[0];
  c.run.hosts = place_ranks(fab.hcas.size(), c.w.ranks, c.w.placement, c.w.seed);
  const Plan plan = make_plan(c.w, c.run.hosts.size());
  c.run.sl = uint8_t(c.sl);
  c.run.chunk = parse_bytes(c.chunk, "--chunk");
  const auto limit = units::parse_delay_ns(c.time_limit, 3600'000'000'000ULL);
  if (!limit) throw std::invalid_argument("--time-limit '" + c.time_limit + "' is not a time, e.g. 10s");

  raise_fd_limit();
  // The fabric's own log lines (the SM's sweep) go to stderr: stdout is the table.
  spdlog::set_default_logger(spdlog::stderr_color_st("vfabric-sim"));
  // Enough for every link's queues and every rank's window of packets.
  mbuf_pool_size() =
      c.mbufs ? c.mbufs : unsigned(std::max<size_t>(8191, fab.links.size() * 64 + c.run.hosts.size() * 64));
  // ~5 KiB per mbuf, plus the EAL's own.
  init_eal("vf_sim_" + std::to_string(getpid()), unsigned(mbuf_pool_size() * 5 / 1024 + 128));

  const auto t0 = std::chrono::steady_clock::now();
  ConfigFabric f(cfg);
  f.run_until([] { return false; }, f.sched.now() + 2'000'000);  // the SM's sweep and ports going active
  PlanRun pr(f, plan, c.run);
  std::vector<std::unique_ptr<PortPcap>> pcaps;  // destroyed before the fabric: they untap it
  for (const std::string& p : c.capture)
    pcaps.push_back(std::make_unique<PortPcap>(f, fab, p, pcap_path(c.capture_dir, p), c.snaplen));
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const config::Link* host_link = fab.link_of(fab.hcas[0].name);
  const uint32_t mtu = f.topology().port_info(c.run.hosts[0]).mtu;
  const double bound = host_link_bound_gbs(fab, *host_link, mtu);

  std::printf("# vfabric-sim %s: %s, fabric %s (%s), %zu ranks, %s %s, %llu B, chunk %llu B, %u channel%s, %zu QPs\n",
              std::string(kVersion).c_str(), c.config.c_str(), fab.name.c_str(), to_string(fab.link_layer),
              plan.ranks.size(), plan.name.c_str(), plan.algo.c_str(), (unsigned long long)plan.bytes,
              (unsigned long long)c.run.chunk, c.run.channels, c.run.channels == 1 ? "" : "s", pr.qps());
  if (!fab.generated.empty()) std::printf("# topology: %s\n", fab.generated.c_str());
  if (fab.adaptive.mode != config::AdaptiveRouting::Mode::Off)
    std::printf("# adaptive routing: %s\n", config::to_string(fab.adaptive.mode));
  std::printf("# built in %.1f s\n#%10s %12s %12s %12s %12s %12s\n", build_s, "iter", "size(B)", "time(us)",
              "algbw(GB/s)", "busbw(GB/s)", "bound(GB/s)");

  const auto drain_captures = [&] {
    for (auto& p : pcaps)
      if (!p->drain()) throw std::runtime_error("writing " + p->path() + " failed");
  };

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::vector<IterationRow> rows;
  LoopStats st;
  LoopEnd end = LoopEnd::Done;
  const Nanos sim0 = f.sched.now(), deadline = sim0 + *limit;
  for (unsigned i = 0; i < c.iters && end == LoopEnd::Done; ++i) {
    pr.start();
    end = run_plan(f, pr, g_stop, deadline, st, [&](const LoopStats& s) {
      drain_captures();
      if (!c.quiet) progress_line(s, f, pr, plan, i, c.iters);
    });
    drain_captures();
    if (end != LoopEnd::Done || !pr.error().empty()) break;
    rows.push_back({i, pr.finished() - pr.started()});
    const CollectiveFigures fig = figures(plan, rows.back().elapsed);
    std::printf(" %10u %12llu %12.2f %12.3f %12.3f %12.3f\n", i, (unsigned long long)plan.bytes, fig.time_us,
                fig.algbw_gbs, fig.busbw_gbs, bound);
    std::fflush(stdout);
  }
  const double wall = std::chrono::duration<double>(st.wall).count();
  const double sim_us = double(f.sched.now() - sim0) / 1e3;
  std::printf("# %llu events in %.2f s of wall time (%.2f M events/s), %.1f us simulated (%.2f us per wall s), "
              "peak RSS %.0f MiB\n",
              (unsigned long long)st.events, wall, double(st.events) / 1e6 / (wall > 0 ? wall : 1), sim_us,
              sim_us / (wall > 0 ? wall : 1), peak_rss_mib());
  if (c.run.check) std::printf("# checked %llu bytes\n", (unsigned long long)pr.checked());
  for (const auto& p : pcaps)
    std::printf("# capture %s: %llu frames in %s (%llu not kept: the ring was full; %llu IB flow-control packets "
                "left out)\n",
                p->port().c_str(), (unsigned long long)p->written(), p->path().c_str(),
                (unsigned long long)p->dropped(), (unsigned long long)p->link_packets());

  auto write = [](const std::string& path, const std::function<void(std::FILE*)>& fn) {
    if (path.empty()) return;
    std::FILE* out = std::fopen(path.c_str(), "w");
    if (!out) throw std::runtime_error("cannot write " + path);
    fn(out);
    std::fclose(out);
  };
  write(c.csv, [&](std::FILE* out) { write_iterations_csv(out, plan, rows, bound); });
  if (!rows.empty())
    write(c.svg, [&](std::FILE* out) {
      std::vector<Nanos> finish;
      for (size_t r = 0; r < plan.ranks.size(); ++r) finish.push_back(pr.rank_finished(r) - pr.started());
      std::fputs(finish_svg(plan, std::move(finish), rows.back().elapsed, bound).c_str(), out);
    });
  if (!c.ports_csv.empty() || !c.metrics.empty()) {
    const MetricsSnapshot m = f.topology().metrics();
    write(c.ports_csv, [&](std::FILE* out) { write_ports_csv(out, m); });
    write(c.metrics, [&](std::FILE* out) { std::fputs(prometheus_text(m).c_str(), out); });
  }

  if (!pr.error().empty()) {
    std::fprintf(stderr, "vfabric-sim: %s\n", pr.error().c_str());
    return 1;
  }
  switch (end) {
    case LoopEnd::Done: return 0;
    case LoopEnd::Stopped:
      std::fprintf(stderr, "vfabric-sim: stopped at %.3f ms simulated; %zu iteration(s) finished\n",
                   double(f.sched.now()) / 1e6, rows.size());
      return 130;
    case LoopEnd::TimeLimit:
      std::fprintf(stderr, "vfabric-sim: the time limit (%s simulated) came first; raise --time-limit%s\n",
                   c.time_limit.c_str(), mbufs_short());
      return 1;
    case LoopEnd::Stuck:
      std::fprintf(stderr,
                   "vfabric-sim: stuck at %.3f ms simulated: nothing is due and the ranks are not done (a deadlock "
                   "of the fabric or the plan)%s\n",
                   double(f.sched.now()) / 1e6, mbufs_short());
      return 1;
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "vfabric-sim"};
  Cli c;
  add_options(app, c);
  app.set_version_flag("--version", std::string(vf::kVersion));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return run(c);
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "vfabric-sim: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "vfabric-sim: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vfabric-sim: %s\n", e.what());
    return 1;
  }
}
