// vfabric-compare --quick, as CI runs it: twice, each starting its own
// fabricd for the wall-clock runs. Every scenario must have produced data,
// every plot must be valid SVG, scenario 1's measured goodput must match the
// analytic figure where the link is the bottleneck, and the two runs must
// agree: exactly for emulated figures, within the stated band for wall-clock
// ones.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "process.hpp"

namespace vf::test {
namespace {

namespace fs = std::filesystem;
using Csv = std::vector<std::vector<std::string>>;  // header first

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The report's CSVs quote only fields with commas, quotes or newlines.
Csv read_csv(const fs::path& p) {
  Csv rows;
  std::istringstream in(slurp(p));
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) cells.push_back(cell), cell.clear();
      else cell += c;
    }
    cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

size_t col(const Csv& t, const std::string& name) {
  for (size_t i = 0; i < t.at(0).size(); ++i)
    if (t[0][i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

// Under a sanitizer the second run is emulated only: its wall-clock half
// takes two minutes there and agrees with the first only within a band too
// wide to mean anything; the unsanitized pass compares both halves.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

class Compare : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = fs::temp_directory_path() / ("vf-compare-test-" + std::to_string(getpid()));
    fs::remove_all(base_);
    for (const char* run : {"a", "b"}) {
      std::vector<std::string> argv{VF_COMPARE_PATH, "--quick", "-o", (base_ / run).string()};
      if (kSanitized && run[0] == 'b') argv.push_back("--no-live");
      const RunResult r = vf::test::run(argv, {}, std::chrono::minutes(15));
      ASSERT_EQ(r.exit_code, 0) << r.describe();
      ASSERT_NE(r.out.find("report written to"), std::string::npos) << r.describe();
    }
  }
  static void TearDownTestSuite() { fs::remove_all(base_); }
  static fs::path dir(const char* run = "a") { return base_ / run; }
  static inline fs::path base_;
};

const char* kCsvs[] = {"encapsulation-goodput.csv", "encapsulation-live.csv", "latency-half-rtt.csv",
                       "latency-live.csv",          "incast-results.csv",     "hol-victim.csv",
                       "failure-recovery.csv",      "deadlock-ring.csv",      "ai-results.csv",
                       "summary-when.csv"};
const char* kEmulated[] = {"encapsulation-goodput.csv", "latency-half-rtt.csv", "incast-results.csv",
                           "hol-victim.csv",            "failure-recovery.csv", "deadlock-ring.csv",
                           "ai-results.csv"};

TEST_F(Compare, EveryScenarioProducedData) {
  const std::string md = slurp(dir() / "index.md");
  for (const char* h : {"## 1. Encapsulation", "## 2. Latency", "## 3. Incast", "## 4. Head-of-line", "## 5. Failure",
                        "## 6. Deadlock", "## 7. AI collectives at scale", "## 8. When to use which"})
    EXPECT_NE(md.find(h), std::string::npos) << h;
  for (const char* c : kCsvs) {
    ASSERT_TRUE(fs::exists(dir() / c)) << c;
    EXPECT_GE(read_csv(dir() / c).size(), 3u) << c << " has a header and at least two rows";
  }
  // The wall-clock runs worked: no tool failure was reported.
  EXPECT_EQ(md.find(" failed: "), std::string::npos) << md.substr(md.find("Not measured"), 2000);
  // 4 flavours x N = 2, 4, 8, each run to the end.
  const Csv incast = read_csv(dir() / "incast-results.csv");
  EXPECT_EQ(incast.size(), 1u + 12);
  for (size_t i = 1; i < incast.size(); ++i) EXPECT_EQ(incast[i].back(), "yes") << incast[i][0] << " N=" << incast[i][1];
  // The closing table is built from figures every scenario measured.
  for (const auto& row : read_csv(dir() / "summary-when.csv"))
    for (const auto& cell : row) EXPECT_EQ(cell.find("not measured"), std::string::npos) << row[0];
  EXPECT_EQ(md.find("Not measured yet"), std::string::npos);
}

TEST_F(Compare, EveryPlotTheReportShowsIsValidSvg) {
  const std::string md = slurp(dir() / "index.md");
  const std::regex img(R"(!\[[^\]]*\]\(([^)]+\.svg)\))");
  unsigned plots = 0;
  for (auto it = std::sregex_iterator(md.begin(), md.end(), img); it != std::sregex_iterator(); ++it) {
    const fs::path p = dir() / (*it)[1].str();
    ASSERT_TRUE(fs::exists(p)) << p;
    const RunResult x = vf::test::run({"xmllint", "--noout", p.string()});
    EXPECT_EQ(x.exit_code, 0) << p << "\n" << x.describe();
    const std::string svg = slurp(p);
    EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos) << p;
    EXPECT_NE(svg.find("<polyline"), std::string::npos) << p << " plots at least one curve";
    ++plots;
  }
  EXPECT_EQ(plots, 8u) << "goodput (WRITE, SEND), latency (idle, loaded), incast (goodput, buffer), "
                          "all-reduce (1:1, 2:1)";
}

// Scenario 7, quick: N = 16, both fabrics, static / flowlets / per packet,
// 1:1 and 2:1, ring all-reduce and all-to-all -- every run finished, never
// above the host link's bound; static routing never reorders, per-packet
// spraying does somewhere, and RC repaired it.
TEST_F(Compare, AiCollectivesRanEveryCaseWithinTheBound) {
  const Csv t = read_csv(dir() / "ai-results.csv");
  ASSERT_EQ(t.size(), 1u + 2 * 2 * 2 * 3) << "oversubscription x collective x fabric x routing";
  const size_t routing = col(t, "routing"), busbw = col(t, "busbw GB/s"), bound = col(t, "bound GB/s"),
               ooo = col(t, "out-of-sequence pkts"), retx = col(t, "retransmitted pkts");
  uint64_t sprayed_ooo = 0;
  for (size_t i = 1; i < t.size(); ++i) {
    SCOPED_TRACE(t[i][0] + " " + t[i][routing] + " " + t[i][2] + " N=" + t[i][3] + " " + t[i][4]);
    ASSERT_EQ(t[i][5].find("did not finish"), std::string::npos) << t[i][5];
    EXPECT_GT(std::stod(t[i][busbw]), 0.0);
    EXPECT_LE(std::stod(t[i][busbw]), std::stod(t[i][bound]) * 1.0005);
    if (t[i][routing].rfind("static", 0) == 0) {
      EXPECT_EQ(t[i][ooo], "0");
    }
    if (t[i][routing] == "adaptive, per packet") {
      sprayed_ooo += std::stoull(t[i][ooo]);
      EXPECT_GE(std::stoull(t[i][retx]), std::stoull(t[i][ooo]) > 0 ? 1u : 0u);
    }
  }
  EXPECT_GT(sprayed_ooo, 0u) << "per-packet spraying reordered some flow";
}

TEST_F(Compare, MeasuredGoodputMatchesTheAnalyticWhereTheLinkIsTheBottleneck) {
  // Emulated: the link is the bottleneck by construction; within 2 %.
  const Csv g = read_csv(dir() / "encapsulation-goodput.csv");
  const size_t r = col(g, "measured/analytic");
  ASSERT_GE(g.size(), 1u + 3 * 2 * 5) << "3 fabrics x 2 operations x 5 sizes";
  for (size_t i = 1; i < g.size(); ++i) {
    const double x = std::stod(g[i][r]);
    EXPECT_GE(x, 0.98) << g[i][0] << " " << g[i][1] << " " << g[i][2] << " B";
    EXPECT_LE(x, 1.0005) << "never above what the headers allow: " << g[i][0] << " " << g[i][2] << " B";
  }
  // Wall clock, unmodified ib_write_bw under time dilation: never above what
  // the headers allow, and within 12 % below it (the host's share of the
  // shortfall: 0-11 % measured on 2 vCPUs; rows more than 2 % short are
  // flagged as the host's).
  const Csv l = read_csv(dir() / "encapsulation-live.csv");
  const size_t lr = col(l, "measured/analytic"), lb = col(l, "bottleneck");
  ASSERT_EQ(l.size(), 1u + 2) << "IB and RoCEv2 at 64 KiB";
  for (size_t i = 1; i < l.size(); ++i) {
    const double x = std::stod(l[i][lr]);
    EXPECT_LE(x, 1.005) << l[i][0];
    EXPECT_GE(x, 0.88) << l[i][0];
    EXPECT_EQ(l[i][lb] == "emulated link", x >= 0.98) << l[i][0] << ": " << l[i][lb];
  }
}


TEST_F(Compare, TwoQuickRunsAgree) {
  // Emulated figures are functions of the configuration: byte for byte.
  for (const char* c : kEmulated) EXPECT_EQ(slurp(dir("a") / c), slurp(dir("b") / c)) << c;
  if (kSanitized) return;  // run b is emulated only
  // Wall clock, link-bound bandwidth: within 8 % of each other.
  const Csv a = read_csv(dir("a") / "encapsulation-live.csv"), b = read_csv(dir("b") / "encapsulation-live.csv");
  ASSERT_EQ(a.size(), b.size());
  const size_t e = col(a, "× dilation = Gb/s emulated");
  for (size_t i = 1; i < a.size(); ++i)
    EXPECT_NEAR(std::stod(a[i][e]), std::stod(b[i][e]), 0.08 * std::stod(a[i][e])) << a[i][0];
  // Wall clock, latency: the stated band is a factor of 10 between runs (the
  // app, its peer and fabricd's lcore share two cores; 6x seen within one).
  constexpr double kBand = 10.0;
  const Csv la = read_csv(dir("a") / "latency-live.csv"), lb = read_csv(dir("b") / "latency-live.csv");
  ASSERT_EQ(la.size(), lb.size());
  const size_t p50 = col(la, "t_typical (p50)");
  for (size_t i = 1; i < la.size(); ++i) {
    const double x = std::stod(la[i][p50]), y = std::stod(lb[i][p50]);
    EXPECT_LT(std::max(x, y) / std::min(x, y), kBand) << la[i][0] << " " << la[i][1] << ": " << x << " vs " << y;
  }
}

}  // namespace
}  // namespace vf::test
