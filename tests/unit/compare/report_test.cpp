#include "compare/report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace vf::compare {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(Report, CsvQuotesFieldsWithCommasQuotesAndNewlines) {
  const Table t{"x", "", {"a", "b,c"}, {{"1", "say \"hi\""}, {"two\nlines", "plain"}}};
  EXPECT_EQ(to_csv(t), "a,\"b,c\"\n1,\"say \"\"hi\"\"\"\n\"two\nlines\",plain\n");
}

TEST(Report, MarkdownEscapesPipesAndFlattensNewlines) {
  const Table t{"x", "", {"k", "v"}, {{"a|b", "c\nd"}}};
  EXPECT_EQ(to_markdown(t), "| k | v |\n|---|---|\n| a\\|b | c d |\n");
}

TEST(Report, NumbersHaveFixedDecimalsAndNanIsSaidToBeMissing) {
  EXPECT_EQ(num(1.23456, 2), "1.23");
  EXPECT_EQ(num(std::nan(""), 2), "n/a");
  EXPECT_EQ(gbps(92'565'000'000.0), "92.565");
}

TEST(Report, WritesIndexCsvAndSvgForEverySection) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "vf_report_test";
  std::filesystem::remove_all(dir);
  Section s;
  s.id = "enc";
  s.title = "1. Something";
  s.conditions = "virtual time";
  s.findings = {"a finding"};
  s.tables.push_back({"goodput", "caption", {"x", "y"}, {{"1", "2"}}});
  PlotSpec p;
  p.title = "plot";
  p.series.push_back({"s", {1, 2}, {3, 4}});
  s.plots.push_back({"curve", p});
  s.not_measured = {"the other half, because"};
  ReportMeta m;
  m.title = "T";
  write_report(dir, m, {s});
  const std::string md = slurp(dir / "index.md");
  EXPECT_NE(md.find("## 1. Something"), std::string::npos);
  EXPECT_NE(md.find("- a finding"), std::string::npos);
  EXPECT_NE(md.find("![plot](enc-curve.svg)"), std::string::npos);
  EXPECT_NE(md.find("[CSV](enc-goodput.csv)"), std::string::npos);
  EXPECT_NE(md.find("**Not measured yet:**"), std::string::npos);
  EXPECT_EQ(slurp(dir / "enc-goodput.csv"), "x,y\n1,2\n");
  EXPECT_EQ(slurp(dir / "enc-curve.svg").rfind("<?xml", 0), 0u);
  std::filesystem::remove_all(dir);
}

TEST(Report, AnUnwritableDirectoryIsAnErrorThatNamesIt) {
  EXPECT_THROW(write_report("/proc/vf_no_such_dir/report", ReportMeta{}, {}), std::runtime_error);
}

}  // namespace
}  // namespace vf::compare
