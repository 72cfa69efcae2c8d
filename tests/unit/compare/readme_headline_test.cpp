// The README's first screen quotes the committed example report's headline
// figures by hand: every number in that table must be one the report holds,
// so a regenerated report and a stale README cannot drift apart unnoticed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<double> numbers(const std::string& text) {
  std::vector<double> out;
  const std::regex num(R"(\d[\d,]*(\.\d+)?)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), num); it != std::sregex_iterator(); ++it) {
    std::string n = it->str();
    n.erase(std::remove(n.begin(), n.end(), ','), n.end());
    out.push_back(std::stod(n));
  }
  return out;
}

// The table after the "InfiniBand or RoCEv2, measured" paragraph.
std::string headline_table(const std::string& readme) {
  const size_t start = readme.find("**InfiniBand or RoCEv2, measured**");
  if (start == std::string::npos) return {};
  const size_t table = readme.find("\n|", start);
  const size_t end = readme.find("\n\n", table);
  return readme.substr(table, end - table);
}

TEST(ReadmeHeadline, EveryFigureIsOneTheExampleReportHolds) {
  const std::string readme = slurp(std::string(VF_SOURCE_DIR) + "/README.md");
  const std::string report = slurp(std::string(VF_SOURCE_DIR) + "/docs/report/index.md");
  ASSERT_FALSE(report.empty()) << "docs/report/index.md: the example report is committed";
  const std::string table = headline_table(readme);
  ASSERT_GT(std::count(table.begin(), table.end(), '\n'), 5) << "the README's first screen has the headline table";
  EXPECT_LT(readme.find("**InfiniBand or RoCEv2, measured**"), 1500u) << "on the first screen";
  const std::vector<double> have = numbers(report);
  for (double x : numbers(table)) {
    // A README figure may be the report's rounded to fewer decimals.
    const bool found = std::any_of(have.begin(), have.end(), [&](double r) {
      return std::fabs(r - x) < 1e-9 || std::fabs(std::round(r * 10) / 10 - x) < 1e-9 || std::fabs(std::round(r) - x) < 1e-9;
    });
    EXPECT_TRUE(found) << x << " is in the README's headline but not in docs/report/index.md";
  }
}

}  // namespace
