// SVG plots for the comparison report: document shape, point filtering, axis
// labels, escaping and determinism.
#include "core/svg_plot.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace vf::compare {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::size_t occurrences(std::string_view hay, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = hay.find(needle); at != std::string_view::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

PlotSpec two_series() {
  PlotSpec spec;
  spec.title = "Latency";
  spec.x_label = "size";
  spec.y_label = "us";
  spec.series.push_back({"IB", {1, 2, 3}, {10, 20, 15}});
  spec.series.push_back({"RoCE & <v2>", {1, 2, 3}, {12, 25, 18}});
  return spec;
}

TEST(SvgPlot, IsACompleteDocument) {
  const std::string svg = render_svg(two_series());
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_TRUE(contains(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_TRUE(contains(svg, "width=\"820\" height=\"420\" viewBox=\"0 0 820 420\""));
  ASSERT_GE(svg.size(), 7u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(SvgPlot, TagsAreBalanced) {
  PlotSpec logs = two_series();
  logs.log_x = logs.log_y = true;
  for (const PlotSpec& spec : {two_series(), logs, PlotSpec{}}) {
    const std::string svg = render_svg(spec);
    EXPECT_EQ(occurrences(svg, "<svg"), 1u);
    EXPECT_EQ(occurrences(svg, "</svg>"), 1u);
    EXPECT_EQ(occurrences(svg, "<g"), occurrences(svg, "</g>"));
    EXPECT_EQ(occurrences(svg, "<text"), occurrences(svg, "</text>"));
    EXPECT_GT(occurrences(svg, "<text"), 0u);
  }
}

TEST(SvgPlot, OnePolylineAndLegendEntryPerSeries) {
  const std::string svg = render_svg(two_series());
  EXPECT_EQ(occurrences(svg, "<polyline"), 2u);
  EXPECT_EQ(occurrences(svg, ">IB</text>"), 1u);
  EXPECT_EQ(occurrences(svg, ">RoCE &amp; &lt;v2&gt;</text>"), 1u);
  EXPECT_FALSE(contains(svg, "<v2>"));
}

TEST(SvgPlot, SeriesGetDistinctColours) {
  const std::string svg = render_svg(two_series());
  EXPECT_TRUE(contains(svg, "stroke=\"#1f77b4\""));
  EXPECT_TRUE(contains(svg, "stroke=\"#ff7f0e\""));
}

TEST(SvgPlot, AllTextIsEscaped) {
  PlotSpec spec = two_series();
  spec.title = "a\"b'c";
  spec.x_label = "<x>";
  spec.y_label = "&y";
  const std::string svg = render_svg(spec);
  EXPECT_TRUE(contains(svg, "a&quot;b&apos;c"));
  EXPECT_TRUE(contains(svg, "&lt;x&gt;"));
  EXPECT_TRUE(contains(svg, "&amp;y"));
  EXPECT_FALSE(contains(svg, "<x>"));
}

TEST(SvgPlot, NonFinitePointsAreSkipped) {
  PlotSpec spec;
  spec.series.push_back({"s", {1, 2, kNaN, 4, 5}, {1, kNaN, 3, kInf, 5}});
  const std::string svg = render_svg(spec);
  EXPECT_EQ(occurrences(svg, "<circle"), 2u);
  EXPECT_FALSE(contains(svg, "nan"));
  EXPECT_FALSE(contains(svg, "inf"));
}

TEST(SvgPlot, NonPositivePointsAreSkippedOnLogAxes) {
  PlotSpec spec;
  spec.log_x = true;
  spec.log_y = true;
  spec.series.push_back({"s", {0, 64, 128, -1, 256}, {1, 2, 0, 3, 4}});
  const std::string svg = render_svg(spec);
  EXPECT_EQ(occurrences(svg, "<circle"), 2u);  // (64, 2) and (256, 4)
}

TEST(SvgPlot, NonPositivePointsStayOnLinearAxes) {
  PlotSpec spec;
  spec.series.push_back({"s", {0, 1, -1}, {0, -2, 3}});
  EXPECT_EQ(occurrences(render_svg(spec), "<circle"), 3u);
}

TEST(SvgPlot, LogXLabelsMessageSizes) {
  PlotSpec spec;
  spec.log_x = true;
  Series s{"s", {}, {}};
  for (double x = 64; x <= 1048576; x *= 2) {
    s.x.push_back(x);
    s.y.push_back(std::log2(x));
  }
  spec.series.push_back(s);
  const std::string svg = render_svg(spec);
  EXPECT_TRUE(contains(svg, ">64</text>"));
  EXPECT_TRUE(contains(svg, ">1K</text>"));
  EXPECT_TRUE(contains(svg, ">64K</text>"));
  EXPECT_TRUE(contains(svg, ">1M</text>"));
  EXPECT_FALSE(contains(svg, ">1024</text>"));
  // 15 powers of two: only every second one is labelled.
  EXPECT_FALSE(contains(svg, ">128</text>"));
  EXPECT_FALSE(contains(svg, ">2K</text>"));
}

TEST(SvgPlot, LogYTicksArePowersOfTen) {
  PlotSpec spec;
  spec.log_y = true;
  spec.series.push_back({"s", {5, 6, 7}, {1.5, 150, 1500}});
  const std::string svg = render_svg(spec);
  for (const char* label : {">1</text>", ">10</text>", ">100</text>", ">1000</text>", ">1e4</text>"}) {
    EXPECT_TRUE(contains(svg, label)) << label;
  }
}

TEST(SvgPlot, LinearTicksAreRoundNumbers) {
  PlotSpec spec;
  spec.series.push_back({"s", {0, 100}, {3, 7}});
  const std::string svg = render_svg(spec);
  EXPECT_TRUE(contains(svg, ">0</text>"));  // y starts at zero
  EXPECT_TRUE(contains(svg, ">7</text>"));
  EXPECT_TRUE(contains(svg, ">20</text>"));
  EXPECT_TRUE(contains(svg, ">100</text>"));
  EXPECT_FALSE(contains(svg, ">0.5</text>"));
  EXPECT_FALSE(contains(svg, ">-0</text>"));
}

TEST(SvgPlot, DegenerateRangesArePadded) {
  PlotSpec single;
  single.series.push_back({"s", {5}, {7}});
  PlotSpec flat;
  flat.y_from_zero = false;
  flat.series.push_back({"s", {1, 2, 3}, {4, 4, 4}});
  PlotSpec zeros;
  zeros.series.push_back({"s", {0, 0}, {0, 0}});
  PlotSpec log_single;
  log_single.log_x = log_single.log_y = true;
  log_single.series.push_back({"s", {1024}, {100}});
  for (const PlotSpec& spec : {single, flat, zeros, log_single}) {
    const std::string svg = render_svg(spec);
    EXPECT_FALSE(contains(svg, "nan")) << svg;
    EXPECT_FALSE(contains(svg, "inf")) << svg;
    EXPECT_GE(occurrences(svg, "<circle"), 1u);
  }
}

TEST(SvgPlot, NoPlottablePointSaysNoData) {
  PlotSpec empty;
  empty.title = "Nothing";
  PlotSpec unplottable;
  unplottable.log_y = true;
  unplottable.series.push_back({"s", {1, 2}, {0, kNaN}});
  for (const PlotSpec& spec : {empty, unplottable}) {
    const std::string svg = render_svg(spec);
    EXPECT_TRUE(contains(svg, ">no data</text>"));
    EXPECT_TRUE(contains(svg, "<rect"));
    EXPECT_EQ(occurrences(svg, "<polyline"), 0u);
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  }
  EXPECT_TRUE(contains(render_svg(empty), ">Nothing</text>"));
}

TEST(SvgPlot, SameInputSameBytes) {
  PlotSpec spec = two_series();
  spec.log_x = true;
  EXPECT_EQ(render_svg(spec), render_svg(spec));
  EXPECT_EQ(render_svg(two_series()), render_svg(two_series()));
}

TEST(SvgPlot, WriteSvgWritesTheRenderedDocument) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / "vf_svg_plot_test.svg";
  write_svg(path.string(), two_series());
  std::ifstream in(path, std::ios::binary);
  const std::string written{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(written, render_svg(two_series()));
  std::filesystem::remove(path);
}

TEST(SvgPlot, WriteSvgIntoMissingDirectoryThrows) {
  const std::string path = ::testing::TempDir() + "/vf-no-such-dir/plot.svg";
  try {
    write_svg(path, two_series());
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), path)) << e.what();
  }
}

}  // namespace
}  // namespace vf::compare
