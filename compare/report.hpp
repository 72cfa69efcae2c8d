// The comparison report: sections of findings, tables and plots, written as
// <dir>/index.md with every table also as CSV and every plot as SVG beside
// it. Sections hold only what a run measured or computed; what a run could
// not measure is listed as such, never filled in.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/svg_plot.hpp"

namespace vf::compare {

struct Table {
  std::string name;  // file stem: <section>-<name>.csv
  std::string caption;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

struct Plot {
  std::string name;  // file stem: <section>-<name>.svg
  PlotSpec spec;
};

struct Section {
  std::string id;     // short, file-name safe
  std::string title;
  std::string conditions;             // how the figures were obtained
  std::vector<std::string> findings;  // generated from the figures
  std::vector<Table> tables;
  std::vector<Plot> plots;
  std::vector<std::string> not_measured;  // what this run could not measure, and why
};

struct ReportMeta {
  std::string title;
  std::string command;    // how it was produced
  std::string mode;       // quick | full
  std::string date;       // UTC
  std::string machine;    // CPU, cores, kernel
  std::string version;
  std::string seconds;    // how long the run took
};

// Writes index.md, the CSVs and the SVGs into `dir` (created if missing).
// Throws std::runtime_error naming the file on any I/O failure.
void write_report(const std::filesystem::path& dir, const ReportMeta& meta, const std::vector<Section>& sections);

// A table as CSV (RFC 4180 quoting) and as a Markdown table.
std::string to_csv(const Table& t);
std::string to_markdown(const Table& t);

// Numbers as the report prints them: fixed decimals, "n/a" for NaN.
std::string num(double v, int decimals);
std::string gbps(double bps);  // "12.345"
std::string percent(double share);  // 0.5 -> "50.0 %"

}  // namespace vf::compare
