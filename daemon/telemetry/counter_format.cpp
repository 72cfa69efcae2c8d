#include "daemon/telemetry/counter_format.hpp"

#include <fstream>
#include <system_error>

namespace vf {

void put_counters(nlohmann::json& out, CounterTable table, const void* snapshot) {
  for (const CounterDef& d : table) out[std::string(d.name)] = read_counter(d, snapshot);
}

std::string prom_labels(std::initializer_list<std::pair<std::string_view, std::string_view>> kv) {
  std::string s;
  for (const auto& [k, v] : kv) {
    if (!s.empty()) s += ',';
    s.append(k).append("=\"");
    for (char c : v) {
      if (c == '\\' || c == '"') s += '\\';
      if (c == '\n') {
        s += "\\n";
        continue;
      }
      s += c;
    }
    s += '"';
  }
  return s;
}

void append_prometheus(std::string& out, std::string_view prefix, CounterTable table,
                       std::span<const PromRow> rows) {
  for (const CounterDef& d : table) {
    const bool gauge = d.kind == CounterKind::kGauge;
    const std::string metric = std::string(prefix) + "_" + std::string(d.sysfs) + (gauge ? "" : "_total");
    out += "# HELP " + metric + " " + std::string(d.help) + " (" + std::string(unit_name(d.unit)) + ")\n";
    out += "# TYPE " + metric + (gauge ? " gauge\n" : " counter\n");
    for (const PromRow& r : rows) {
      out += metric;
      if (!r.labels.empty()) out += "{" + r.labels + "}";
      out += " " + std::to_string(read_counter(d, r.snapshot)) + "\n";
    }
  }
}

void add_counter_files(std::map<std::string, std::string>& out, std::string_view dir, CounterTable table,
                       const void* snapshot) {
  for (const CounterDef& d : table)
    out[std::string(dir) + "/" + std::string(d.sysfs)] = std::to_string(read_counter(d, snapshot)) + "\n";
}

void write_counter_files(const std::filesystem::path& dir, CounterTable table, const void* snapshot) {
  std::filesystem::create_directories(dir);
  std::map<std::string, std::string> files;
  add_counter_files(files, ".", table, snapshot);
  for (const auto& [name, content] : files) {
    const auto path = dir / name;
    std::ofstream f(path, std::ios::trunc);
    f << content;
    if (!f.flush()) throw std::system_error(errno, std::generic_category(), "write " + path.string());
  }
}

}  // namespace vf
