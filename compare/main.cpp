// vfabric-compare: runs the IB-vs-RoCEv2 scenarios and writes the report.
#include <rte_eal.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "compare/scenarios.hpp"
#include "core/version.hpp"
#include "sim/lab.hpp"
#include "sim/mbuf_pool.hpp"

namespace {

using namespace vf::compare;
namespace fs = std::filesystem;

const char* kDescription = R"(Runs the same workloads on an emulated InfiniBand fabric and an emulated RoCEv2
fabric of the same topology, link rate and delays, and writes a report: DIR/index.md with
tables and findings, every table as CSV and every plot as SVG beside it.

Scenarios: 1 encapsulation cost (goodput vs message size, beside the analytic figure from the
header bytes), 2 latency (what the fabric adds, in emulated time, and what the host adds, with
unmodified ib_send_lat), 3 incast N->1 (credits, PFC, lossy, PFC+ECN/DCQCN), 4 head-of-line
blocking of a victim flow, 5 failure of a link under load, 6 deadlock on a ring, 7 AI
collectives at scale (ring all-reduce and all-to-all on generated leaf-spines of 16 to 1,024
hosts, static against adaptive routing, 1:1 against 2:1), 8 a table of when to use which,
generated from the figures.

Emulated figures come from the fabric's virtual clock: the engines, ports, links and switches
fabricd runs, driven in-process, exact and the same in every run. Wall-clock figures come from
unmodified perftest tools run through `fabricctl exec` against a fabricd this command starts
for itself (its own runtime directory, no metrics listener, so it runs beside a lab's
service); they need root, as fabricd does, and vary between runs.

--quick takes about a minute on 2 cores (what CI runs; scenario 7 at 16 hosts only);
the full run is for a lab.

Exit status: 0 report written; 1 a scenario failed (the error says which); 2 usage.)";

std::string self_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

// fabricd / fabricctl beside this program (a build tree), in ../sbin (an
// installed prefix), else on PATH.
std::string find_tool(const std::string& name) {
  const fs::path here = self_dir();
  for (const fs::path& p : {here / name, here / ".." / "sbin" / name})
    if (access(p.c_str(), X_OK) == 0) return fs::weakly_canonical(p).string();
  return name;
}

std::string machine() {
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpu, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  utsname u{};
  uname(&u);
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " CPUs, Linux " + u.release;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return b;
}

void init_eal(bool quick) {
  // No hugepages, no devices, no shared config: the virtual-time runs need
  // only mbufs, and this process must not collide with a running fabricd.
  // Scenario 7's 1,024 hosts hold far more frames at once than the labs
  // (64 per link and per rank, as vfabric-sim sizes it); ~5 KiB each.
  vf::sim::mbuf_pool_size() = quick ? 24'575 : 200'000;
  vf::sim::init_eal("vf_compare_" + std::to_string(getpid()), vf::sim::mbuf_pool_size() * 5 / 1024 + 128);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "vfabric-compare"};
  Options o;
  std::string out = "report";
  bool no_live = false;
  std::vector<std::string> only;
  app.add_flag("--quick", o.quick, "short runs of every scenario (about a minute on 2 cores; what CI runs)");
  app.add_option("-o,--out", out, "the report directory (created; files in it are overwritten)")
      ->capture_default_str();
  app.add_flag("--no-live", no_live, "emulated figures only: start no fabricd, run no perftest");
  app.add_option("--only", only, "run these scenarios only (encapsulation latency incast hol failure deadlock ai)")
      ->check(CLI::IsMember({"encapsulation", "latency", "incast", "hol", "failure", "deadlock", "ai"}));
  app.add_option("--fabricd", o.fabricd, "fabricd to start (default: beside this program, ../sbin, or PATH)");
  app.add_option("--fabricctl", o.fabricctl, "fabricctl to use (default: beside this program, ../sbin, or PATH)");
  app.set_version_flag("--version", std::string(vf::kVersion));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  o.live = !no_live;
  if (o.fabricd.empty()) o.fabricd = find_tool("fabricd");
  if (o.fabricctl.empty()) o.fabricctl = find_tool("fabricctl");

  const auto t0 = std::chrono::steady_clock::now();
  try {
    init_eal(o.quick);
    char tmpl[] = "/tmp/vfabric-compare-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp /tmp/vfabric-compare-XXXXXX failed");
    o.work_dir = tmpl;
    // The live fabricds' runtime dirs go with it, whichever way this ends.
    struct RemoveDir {
      std::string dir;
      ~RemoveDir() {
        std::error_code ec;
        fs::remove_all(dir, ec);
      }
    } work_dir{o.work_dir};
    Findings f;
    std::vector<Section> sections;
    auto want = [&](const char* s) { return only.empty() || std::find(only.begin(), only.end(), s) != only.end(); };
    const std::pair<const char*, Section (*)(const Options&, Findings&)> scenarios[] = {
        {"encapsulation", run_encapsulation}, {"latency", run_latency}, {"incast", run_incast},
        {"hol", run_hol}, {"failure", run_failure}, {"deadlock", run_deadlock}, {"ai", run_ai_scale}};
    for (const auto& [name, fn] : scenarios) {
      if (!want(name)) continue;
      std::fprintf(stderr, "vfabric-compare: %s ...\n", name);
      const auto s0 = std::chrono::steady_clock::now();
      sections.push_back(fn(o, f));
      std::fprintf(stderr, "vfabric-compare: %s done in %.1f s\n", name,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count());
    }
    sections.push_back(when_to_use_which(f));
    ReportMeta meta;
    meta.title = "InfiniBand vs RoCEv2, measured on vfabric";
    meta.command = std::string("vfabric-compare") + (o.quick ? " --quick" : "") + (no_live ? " --no-live" : "");
    meta.mode = o.quick ? "quick" : "full";
    meta.date = utc_now();
    meta.machine = machine();
    meta.version = vf::kVersion;
    meta.seconds = num(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0);
    write_report(out, meta, sections);
    std::printf("report written to %s/index.md\n", out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vfabric-compare: %s\n", e.what());
    return 1;
  }
  return 0;
}
