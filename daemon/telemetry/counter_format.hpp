// Counter tables (core/counter_def.hpp) rendered for the three readers:
// fabricctl's JSON, the Prometheus text format, and sysfs-style one-value
// files. Runs on the control thread, over snapshots the lcore copied out.
#pragma once

#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/counter_def.hpp"

namespace vf {

// Adds {def.name: value} for every row of `table`.
void put_counters(nlohmann::json& out, CounterTable table, const void* snapshot);

// One labelled sample set: `labels` is already rendered (see prom_labels).
struct PromRow {
  std::string labels;
  const void* snapshot;
};
// key="value" pairs, values escaped as the exposition format requires.
std::string prom_labels(std::initializer_list<std::pair<std::string_view, std::string_view>> kv);
// Appends, per table row, one metric family `<prefix>_<sysfs>_total` (HELP,
// TYPE counter, one sample per row of `rows`; a gauge is `<prefix>_<sysfs>`,
// TYPE gauge), in the Prometheus text exposition format 0.0.4.
void append_prometheus(std::string& out, std::string_view prefix, CounterTable table,
                       std::span<const PromRow> rows);

// Adds "<dir>/<sysfs name>" -> "<value>\n" for every row: the one-value files
// of the kernel's ports/N/counters/ and hw_counters/, for a writer that
// replaces them atomically (RuntimeTree::update_counters).
void add_counter_files(std::map<std::string, std::string>& out, std::string_view dir, CounterTable table,
                       const void* snapshot);

// Writes those files into `dir` directly. Throws std::system_error.
void write_counter_files(const std::filesystem::path& dir, CounterTable table, const void* snapshot);

}  // namespace vf
