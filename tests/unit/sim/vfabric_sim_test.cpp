// The vfabric-sim command as a user runs it: the table and its CSV, the same
// figures every run, clear errors with exit status 2, a time limit that
// fails the run, and SIGINT stopping it cleanly with status 130.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/subprocess.hpp"

namespace vf::sim {
namespace {

const std::string kSim = VF_SIM_PATH;
const std::string kConfig = VF_SOURCE_DIR "/configs/generated.yaml";

proc::RunResult sim(std::vector<std::string> args) {
  args.insert(args.begin(), kSim);
  return proc::run(args, {}, std::chrono::seconds(120));
}

// The table's rows: lines that start with a space (comments start with '#').
std::string rows(const std::string& out) {
  std::istringstream in(out);
  std::string line, r;
  while (std::getline(in, line))
    if (!line.empty() && line[0] == ' ') r += line + "\n";
  return r;
}

TEST(VfabricSim, PrintsNcclTestsColumnsAndTheSameFiguresEveryRun) {
  const std::string csv = testing::TempDir() + "/sim-" + std::to_string(getpid()) + ".csv";
  const proc::RunResult a = sim({"-c", kConfig, "-w", "allgather", "-b", "4MiB", "-n", "2", "-q", "--csv", csv});
  ASSERT_EQ(a.exit_code, 0) << a.describe();
  EXPECT_NE(a.out.find("fabric ib (infiniband), 8 ranks, all_gather ring, 4194304 B"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("# topology: 2-level fat tree, k=4"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("busbw(GB/s)"), std::string::npos);
  const std::string table = rows(a.out);
  std::istringstream first(table);
  unsigned iter = 9;
  uint64_t size = 0;
  double us = 0, algbw = 0, busbw = 0, bound = 0;
  first >> iter >> size >> us >> algbw >> busbw >> bound;
  EXPECT_EQ(iter, 0u);
  EXPECT_EQ(size, 4194304u);
  EXPECT_NEAR(busbw, algbw * 7 / 8, 0.002);
  EXPECT_GT(busbw, 0.8 * bound);
  EXPECT_LE(busbw, bound);
  std::ifstream in(csv);
  std::string header, line1, line2;
  std::getline(in, header), std::getline(in, line1), std::getline(in, line2);
  EXPECT_EQ(header, "workload,algo,ranks,bytes,iteration,time_us,algbw_GBps,busbw_GBps,bound_busbw_GBps");
  EXPECT_EQ(line1.rfind("all_gather,ring,8,4194304,0,", 0), 0u) << line1;
  EXPECT_EQ(line2.rfind("all_gather,ring,8,4194304,1,", 0), 0u) << line2;
  std::remove(csv.c_str());
  // Virtual time: the same run, the same figures.
  const proc::RunResult b = sim({"-c", kConfig, "-w", "allgather", "-b", "4MiB", "-n", "2", "-q"});
  ASSERT_EQ(b.exit_code, 0) << b.describe();
  EXPECT_EQ(rows(b.out), table);
}

TEST(VfabricSim, TheRoceFabricAndAFlowWorkloadRunToo) {
  const proc::RunResult r = sim({"-c", kConfig, "--fabric", "roce", "-w", "permutation", "-b", "1MiB", "--check", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("fabric roce (ethernet), 4 ranks, permutation flows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# checked 4194304 bytes"), std::string::npos) << r.out;
}

// --capture writes what crossed the port as pcapng that Wireshark's
// dissectors read: the spine-facing port of leaf0 carries the ring's RDMA
// WRITEs between leaves, with LIDs from the SM.
TEST(VfabricSim, ACapturedPortIsAPcapngFileTsharkDecodes) {
  const std::string dir = testing::TempDir() + "/sim-cap-" + std::to_string(getpid());
  ASSERT_EQ(proc::run({"mkdir", "-p", dir}, {}, std::chrono::seconds(10)).exit_code, 0);
  const proc::RunResult r =
      sim({"-c", kConfig, "-w", "allreduce", "-b", "256KiB", "--capture", "leaf0/3", "--capture-dir", dir, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("# capture leaf0/3: "), std::string::npos) << r.out;
  const std::string file = dir + "/leaf0_3.pcapng";
  const proc::RunResult t = proc::run({"tshark", "-r", file, "-T", "fields", "-e", "infiniband.bth.opcode"}, {},
                                      std::chrono::seconds(60));
  ASSERT_EQ(t.exit_code, 0) << t.describe();
  size_t frames = 0, writes = 0;
  std::istringstream in(t.out);
  for (std::string op; std::getline(in, op); ++frames) writes += op == "6" || op == "7" || op == "8";  // WRITE first/middle/last
  EXPECT_GT(frames, 100u);
  EXPECT_GT(writes, frames / 2) << t.out.substr(0, 400);
  EXPECT_EQ(proc::run({"tshark", "-r", file}, {}, std::chrono::seconds(60)).out.find("Malformed"), std::string::npos);
  proc::run({"rm", "-rf", dir}, {}, std::chrono::seconds(10));
}

// --svg plots when each rank finished beside the time the host link's bound
// allows: a valid SVG with both curves.
TEST(VfabricSim, TheFinishPlotIsValidSvgWithTheRanksAndTheBound) {
  const std::string svg = testing::TempDir() + "/sim-" + std::to_string(getpid()) + ".svg";
  const proc::RunResult r = sim({"-c", kConfig, "-w", "alltoall", "-b", "1MiB", "--svg", svg, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const proc::RunResult x = proc::run({"xmllint", "--noout", svg}, {}, std::chrono::seconds(30));
  EXPECT_EQ(x.exit_code, 0) << x.describe();
  std::ifstream in(svg);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  size_t curves = 0;
  for (size_t at = s.find("<polyline"); at != std::string::npos; at = s.find("<polyline", at + 1)) ++curves;
  EXPECT_EQ(curves, 2u) << "the ranks and the bound";
  EXPECT_NE(s.find("alltoall direct, 8 ranks"), std::string::npos);
  EXPECT_NE(s.find("at the host link"), std::string::npos);
  std::remove(svg.c_str());
}

TEST(VfabricSim, BadInputExitsTwoAndSaysWhatToFix) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : {Case{{"-c", "/nonexistent.yaml"}, "cannot open the config"},
                        Case{{"-c", kConfig, "--fabric", "eth"}, "it has: ib, roce"},
                        Case{{"-c", kConfig, "-w", "broadcast"}, "is not allreduce"},
                        Case{{"-c", kConfig, "--algo", "hd", "--ranks", "6"}, "power-of-two"},
                        Case{{"-c", kConfig, "--ranks", "9"}, "more than the fabric's 8 vHCAs"},
                        Case{{"-c", kConfig, "--chunk", "big"}, "--chunk 'big'"},
                        Case{{"-c", kConfig, "--channels", "0"}, "channels must be"},
                        Case{{"-c", kConfig, "--capture", "leaf9/1"}, "has no switch leaf9"},
                        Case{{"-c", kConfig, "--capture", "leaf0/9"}, "leaf0 has no link on port 9"},
                        Case{{"-c", kConfig, "--capture", "vib99"}, "has no vHCA vib99"},
                        Case{{"-c", kConfig, "--capture", "vib0", "--capture", "vib0"}, "being captured already"},
                        Case{{"-c", VF_SOURCE_DIR "/configs/default.yaml", "--fabric", "roce", "--adaptive-routing",
                              "per-packet"},
                             "none of its switches routes"}}) {
    const proc::RunResult r = sim(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

TEST(VfabricSim, ATimeLimitFailsTheRun) {
  const proc::RunResult r = sim({"-c", kConfig, "-b", "64MiB", "--time-limit", "20us", "-q"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("the time limit (20us simulated) came first"), std::string::npos) << r.err;
}

TEST(VfabricSim, SigintStopsTheRunCleanly) {
  proc::Process p({kSim, "-c", kConfig, "-w", "allreduce", "-b", "4GiB", "--time-limit", "3600s"}, {});
  // Progress lines come once a second of wall time: the run is under way.
  for (int i = 0; i < 600 && p.err_so_far().find("vfabric-sim: t=") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_NE(p.err_so_far().find("% delivered, ETA"), std::string::npos) << p.err_so_far();
  p.signal(SIGINT);
  const proc::RunResult r = p.wait(std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 130) << r.describe();
  EXPECT_NE(r.err.find("stopped at"), std::string::npos) << r.err;
  EXPECT_EQ(rows(r.out), "") << "no iteration finished";
  EXPECT_NE(r.out.find("events in"), std::string::npos) << "the cost of what ran is still printed";
}

}  // namespace
}  // namespace vf::sim
