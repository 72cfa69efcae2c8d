#include "compare/live_fabric.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "compare/analytic.hpp"

namespace vf::compare {

using namespace std::chrono_literals;

std::string LiveFabric::config_yaml(const std::string& runtime_dir, unsigned time_dilation) {
  std::ostringstream y;
  // No interfaces: perftest needs none, and a lab's fabricd beside this one
  // may hold the same names and addresses.
  y << "daemon:\n  runtime_dir: " << runtime_dir << "\n  time_dilation: " << time_dilation
    << "\n  metrics_listen: \"off\"\n  netdevs: off\n  eal_args: [--no-huge, --no-pci, --no-shconf, --no-telemetry, -m, \"512\"]\n"
    << "fabrics:\n";
  // The same shape on both: three vHCAs on one switch, 100 Gb/s links,
  // 100 ns of cable, a 100 ns switch.
  y << "  - name: ib\n    link_layer: infiniband\n    switches: [{name: ibsw0, ports: 4, latency: 100ns}]\n"
    << "    hcas: [{name: vib0}, {name: vib1}, {name: vib2}]\n    links:\n";
  for (int i = 0; i < 3; ++i)
    y << "      - {a: vib" << i << ", b: ibsw0/" << i + 1 << ", width: 4x, speed: EDR, delay: 100ns, mtu: 4096}\n";
  y << "  - name: roce\n    link_layer: ethernet\n    switches: [{name: ethsw0, ports: 4, latency: 100ns}]\n"
    << "    hcas: [{name: vroce0, ip: 198.18.0.1}, {name: vroce1, ip: 198.18.0.2}, {name: vroce2, ip: 198.18.0.3}]\n"
    << "    links:\n";
  for (int i = 0; i < 3; ++i)
    y << "      - {a: vroce" << i << ", b: ethsw0/" << i + 1 << ", speed: 100G, delay: 100ns, mtu: 1500}\n";
  return y.str();
}

LiveFabric::LiveFabric(const Options& o, const std::string& name, unsigned time_dilation)
    : o_(o), dir_(o.work_dir + "/" + name), runtime_(dir_ + "/run"), dilation_(time_dilation) {
  std::filesystem::create_directories(dir_);
  const std::string cfg = dir_ + "/fabricd.yaml";
  std::ofstream(cfg) << config_yaml(runtime_, time_dilation);
  // fabricd's log goes to a file: a pipe nobody drains while the tools run
  // would stall its control thread once full.
  fabricd_ = std::make_unique<proc::Process>(
      std::vector<std::string>{"/bin/sh", "-c", "exec \"$0\" --config \"$1\" >\"$2\" 2>&1", o.fabricd, cfg,
                               dir_ + "/fabricd.log"},
      proc::Env{});
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (true) {
    if (!fabricd_->running()) {
      const proc::RunResult r = fabricd_->wait(1s);
      std::ifstream log(dir_ + "/fabricd.log");
      const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      throw std::runtime_error("fabricd for the " + name + " scenario exited with status " +
                               std::to_string(r.exit_code) + ": " + text);
    }
    if (proc::run({o.fabricctl, "--runtime-dir", runtime_, "status"}, {}, 10s).exit_code == 0) break;
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("fabricd for the " + name + " scenario did not answer fabricctl status in 60 s");
    std::this_thread::sleep_for(200ms);
  }
}

LiveFabric::~LiveFabric() {
  fabricd_->signal(SIGTERM);
  fabricd_->wait(30s);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::vector<std::string> LiveFabric::exec(const std::vector<std::string>& argv) const {
  std::vector<std::string> a{o_.fabricctl, "--runtime-dir", runtime_, "exec", "--"};
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

proc::RunResult perftest(const LiveFabric& f, const std::string& tool, const std::string& server_dev,
                         const std::string& client_dev, const std::vector<std::string>& args, int port) {
  std::vector<std::string> srv{tool, "-d", server_dev, "-p", std::to_string(port), "-F"};
  srv.insert(srv.end(), args.begin(), args.end());
  std::vector<std::string> cli = srv;
  cli[2] = client_dev;
  cli.push_back("127.0.0.1");
  proc::Process server(f.exec(srv), {});
  proc::RunResult r;
  // The server listens a moment after it starts; the client retries until it does.
  for (int attempt = 0; attempt < 50; ++attempt) {
    r = proc::run(f.exec(cli), {}, 120s);
    if (r.out.find("Couldn't connect") == std::string::npos && r.err.find("Couldn't connect") == std::string::npos)
      break;
    std::this_thread::sleep_for(100ms);
  }
  server.wait(30s);
  return r;
}

std::vector<double> perftest_result(const std::string& out, uint32_t bytes) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    double first = 0;
    if (!(l >> first) || first != double(bytes)) continue;
    std::vector<double> cols;
    for (double v; l >> v;) cols.push_back(v);
    if (cols.size() >= 3) return cols;
  }
  return {};
}

namespace {

struct Dev {
  const char* name;
  const char *server, *client, *background;
  std::vector<std::string> extra;  // RoCE: GID index 1 (IPv4-mapped, RoCE v2)
  Encap encap;
  uint32_t mtu;
};
const Dev kDevs[] = {{"InfiniBand", "vib1", "vib0", "vib2", {}, Encap::kInfiniBand, 4096},
                     {"RoCEv2", "vroce1", "vroce0", "vroce2", {"-x", "1"}, Encap::kRoceV4, 1024}};

// The CPU the wall-clock runs share: fabricd's lcore and control thread and
// the two perftest processes.
std::string machine_note() {
  return std::to_string(std::thread::hardware_concurrency()) +
         " CPUs shared by fabricd's lcore and control thread and the two perftest processes";
}

// A TCP port on the loopback nobody listens on now, for perftest's
// out-of-band exchange: its default port may be a lab user's.
int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) ::close(fd);
  if (port == 0) throw std::runtime_error(std::string("no free TCP port on 127.0.0.1: ") + std::strerror(errno));
  return port;
}

// The smallest of 10, 20, 50, 100, 200, 500, ... that is at least `x`,
// capped at fabricd's largest time_dilation, 10000.
unsigned nice_ceil(double x) {
  for (unsigned decade = 10; decade < 10000; decade *= 10)
    for (unsigned m : {1u, 2u, 5u})
      if (double(m * decade) >= x) return m * decade;
  return 10000;
}

// What went wrong with a tool, briefly: its status and the end of its output.
std::string failure(const proc::RunResult& r) {
  auto tail = [](const std::string& s) { return s.size() > 300 ? "…" + s.substr(s.size() - 300) : s; };
  return "exit " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") + "; stdout ends: " +
         tail(r.out) + "; stderr ends: " + tail(r.err);
}

// ib_write_bw's average, best of three runs: a run whose processes the
// kernel descheduled for a while loses that link time, and the first after
// fabricd starts also pays for warming the host's caches. 0 and `error` set
// if every run failed.
double write_bw(const LiveFabric& fab, const Dev& d, uint32_t bytes, const std::string& iters, std::string& error) {
  std::vector<std::string> args{"-s", std::to_string(bytes), "-n", iters};
  args.insert(args.end(), d.extra.begin(), d.extra.end());
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    const proc::RunResult r = perftest(fab, "ib_write_bw", d.server, d.client, args, free_tcp_port());
    // #iters, peak, average (MB/s, perftest's MB being 2^20 bytes), msg rate
    const std::vector<double> c = perftest_result(r.out, bytes);
    if (r.exit_code != 0 || c.size() < 3) error = failure(r);
    else best = std::max(best, c[2] * 1048576 * 8);
  }
  return best;
}

}  // namespace

void add_live_bandwidth(const Options& o, Section& sec) {
  // Time dilation slows emulated time so a 100 Gb/s link carries a fraction
  // of that in wall-clock traffic. Whether the link or the host is the
  // bottleneck is decided beforehand, not from the result: the host's own
  // capacity is measured first with the same tool and no dilation, the
  // dilation is chosen so the link needs at most a quarter of the least of
  // it, and a row counts as link-bound when its link needs at most half of
  // its own. Then the tool's figure times the dilation is the emulated goodput.
  const std::vector<uint32_t> sizes = o.quick ? std::vector<uint32_t>{65536} : std::vector<uint32_t>{4096, 65536, 1048576};
  constexpr uint64_t kRate = 100'000'000'000ULL;
  // About 64 MiB a run (quick) or 320 MiB (full) at the host's pace.
  auto iters = [&](uint32_t b) {
    return std::to_string(std::clamp<uint64_t>((o.quick ? 64ull << 20 : 320ull << 20) / b, 100, 5000));
  };
  Table t{"live", "Unmodified `ib_write_bw` against a real fabricd (wall clock, × dilation = emulated goodput):",
          {"fabric", "bytes", "host capacity Gb/s (no dilation)", "dilation", "link in wall-clock Gb/s",
           "ib_write_bw Gb/s (wall)", "× dilation = Gb/s emulated", "analytic Gb/s", "measured/analytic",
           "bottleneck"},
          {}};
  unsigned dilation = 0;
  try {
    std::vector<double> capacity;
    {
      LiveFabric host(o, "host-capacity", 1);
      for (const Dev& d : kDevs)
        for (uint32_t b : sizes) {
          std::string error;
          capacity.push_back(write_bw(host, d, b, iters(b), error));
          if (capacity.back() == 0) throw std::runtime_error(std::string("ib_write_bw on ") + d.name + " failed: " + error);
        }
    }
    dilation = nice_ceil(4 * double(kRate) / *std::min_element(capacity.begin(), capacity.end()));
    LiveFabric fab(o, "encapsulation", dilation);
    size_t i = 0;
    for (const Dev& d : kDevs)
      for (uint32_t b : sizes) {
        const double cap = capacity[i++];
        std::string error;
        const double wall = write_bw(fab, d, b, iters(b), error);
        if (wall == 0) {
          sec.not_measured.push_back(std::string("ib_write_bw on ") + d.name + " failed: " + error);
          continue;
        }
        const double analytic = analytic_goodput_bps(d.encap, Op::kWrite, b, d.mtu, kRate);
        const double link_wall = analytic / dilation;
        // The emulated link carries exactly the analytic goodput (the
        // emulated rows above): whatever falls short of it is the host's.
        const double ratio = wall * dilation / analytic;
        t.rows.push_back({d.name, std::to_string(b), gbps(cap), std::to_string(dilation), gbps(link_wall), gbps(wall),
                          gbps(wall * dilation), gbps(analytic), num(ratio, 4),
                          ratio >= 0.98 ? "emulated link"
                                        : "host: " + num(100 * (1 - ratio), 1) +
                                              " % short of the link (flagged: not a fabric property)"});
      }
  } catch (const std::exception& e) {
    sec.not_measured.push_back(std::string("the wall-clock ib_write_bw runs: ") + e.what());
  }
  double lo = 2, hi = 0;
  for (const auto& row : t.rows) {
    lo = std::min(lo, std::stod(row[8]));
    hi = std::max(hi, std::stod(row[8]));
  }
  if (hi > 0)
    sec.findings.push_back("Unmodified ib_write_bw through a real fabricd under time dilation gets " + num(100 * lo, 1) +
                           "–" + num(100 * hi, 1) +
                           " % of the analytic goodput. The emulated link carries exactly the analytic figure, so "
                           "what falls short is the host's; rows more than 2 % short are flagged.");
  if (!t.rows.empty()) sec.tables.push_back(std::move(t));
  sec.conditions += " Wall clock: unmodified ib_write_bw between two vHCAs of one switch of a real fabricd, " +
                    std::string(o.quick ? "64" : "320") +
                    " MiB a run (100 to 5000 iterations), best of three runs per size; first with no dilation (the "
                    "host's capacity), then with the time dilation (" +
                    (dilation ? std::to_string(dilation) : std::string("not reached")) +
                    " in this run) that makes a 100 Gb/s link need at most a quarter of the least capacity measured. "
                    "A row is marked link-bound when it reaches 98 % of the analytic goodput; a shortfall can only "
                    "be the host's. " + machine_note() + ".";
}

void add_live_latency(const Options& o, Section& sec, Findings& f) {
  Table t{"live", "Unmodified `ib_send_lat` against a real fabricd, 8 bytes (wall clock, µs):",
          {"fabric", "load", "t_typical (p50)", "p99", "p99.9", "iterations"},
          {}};
  const std::string iters = o.quick ? "1000" : "10000";
  try {
    LiveFabric fab(o, "latency", 1);
    for (const Dev& d : kDevs)
      for (bool loaded : {false, true}) {
        std::unique_ptr<proc::Process> bg_server, bg_client;
        if (loaded) {
          // A bulk flow into the ping's target, for longer than the pings run.
          std::vector<std::string> bg{"ib_write_bw", "-d", d.server, "-p", std::to_string(free_tcp_port()), "-F",
                                      "-s", "65536", "-D", o.quick ? "3" : "8"};
          bg.insert(bg.end(), d.extra.begin(), d.extra.end());
          bg_server = std::make_unique<proc::Process>(fab.exec(bg), proc::Env{});
          std::this_thread::sleep_for(500ms);
          bg[2] = d.background;
          bg.push_back("127.0.0.1");
          bg_client = std::make_unique<proc::Process>(fab.exec(bg), proc::Env{});
          std::this_thread::sleep_for(1s);
        }
        // -e: completion events, as a latency-sensitive app on a shared CPU
        // waits; busy-polling perftest processes and fabricd's lcore on two
        // cores would measure the kernel's time slices instead.
        std::vector<std::string> args{"-s", "8", "-n", iters, "-e"};
        args.insert(args.end(), d.extra.begin(), d.extra.end());
        const proc::RunResult r = perftest(fab, "ib_send_lat", d.server, d.client, args, free_tcp_port());
        if (bg_client) {
          // The row is "loaded" only if the bulk flow ran and outlasted the pings.
          const proc::RunResult bc = bg_client->wait(30s);
          bg_server->wait(30s);
          if (bc.exit_code != 0 || perftest_result(bc.out, 65536).size() < 3) {
            sec.not_measured.push_back(std::string("ib_send_lat on ") + d.name +
                                       " beside ib_write_bw: the background ib_write_bw failed: " + failure(bc));
            continue;
          }
        }
        const std::vector<double> c = perftest_result(r.out, 8);
        // #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
        if (r.exit_code != 0 || c.size() < 8) {
          sec.not_measured.push_back(std::string("ib_send_lat on ") + d.name + (loaded ? " beside ib_write_bw" : "") +
                                     " failed: " + failure(r));
          continue;
        }
        t.rows.push_back({d.name, loaded ? "beside ib_write_bw" : "idle", num(c[3], 2), num(c[6], 2), num(c[7], 2),
                          num(c[0], 0)});
        if (!loaded) (d.encap == Encap::kInfiniBand ? f.ib_wall_us : f.roce_wall_us) = c[3];
      }
  } catch (const std::exception& e) {
    sec.not_measured.push_back(std::string("the wall-clock ib_send_lat runs: ") + e.what());
  }
  if (!t.rows.empty()) sec.tables.push_back(std::move(t));
  sec.conditions += " Wall clock: a real fabricd (time_dilation 1), unmodified ib_send_lat -e (completion events) "
                    "through fabricctl exec, 8-byte messages, on a CPU " + machine_note() +
            ": these figures are the host's software (the provider's rings, the engine, scheduling), not "
                    "the fabric, and are flagged so — the emulated figures above are the fabric's.";
  if (std::isfinite(f.ib_wall_us) && std::isfinite(f.roce_wall_us))
    sec.findings.push_back("Through the emulator, host software included, ib_send_lat reports " + num(f.ib_wall_us, 2) +
                           " µs (IB) and " + num(f.roce_wall_us, 2) +
                           " µs (RoCEv2) at the median, one run each: tens of microseconds of host software against "
                           "the fabric's hundreds of nanoseconds, so these rows say what the emulator costs, not how "
                           "the fabrics differ (docs/comparison.md gives the band two runs stay within).");
}

}  // namespace vf::compare
