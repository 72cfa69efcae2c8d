// A strict reader of the Prometheus text exposition format 0.0.4, standing
// in for promtool (Debian's prometheus package starts a server on install):
// the line grammar of HELP, TYPE and samples, metric and label name syntax,
// label value and HELP escapes, float values and int64 timestamps, one HELP
// and one TYPE per family and before its samples, a family's lines together,
// no series twice, no label twice, and the final newline. Returns every
// problem, "line N: what"; empty when the text is valid.
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace vf::test {

namespace prom_detail {

inline bool metric_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_' || s[0] == ':')) return false;
  for (unsigned char c : s)
    if (!(std::isalnum(c) || c == '_' || c == ':')) return false;
  return true;
}

inline bool label_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  if (s.rfind("__", 0) == 0) return false;  // reserved
  for (unsigned char c : s)
    if (!(std::isalnum(c) || c == '_')) return false;
  return true;
}

inline bool float_value(const std::string& s) {
  if (s == "NaN" || s == "+Inf" || s == "-Inf" || s == "Inf") return true;
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && s.find_first_of("xXpP") == std::string::npos;
}

inline bool int_value(const std::string& s) {
  if (s.empty()) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

}  // namespace prom_detail

inline std::vector<std::string> exposition_problems(const std::string& text) {
  using namespace prom_detail;
  std::vector<std::string> bad;
  if (!text.empty() && text.back() != '\n') bad.push_back("the text does not end with a newline");
  std::map<std::string, int> help, type;  // family -> line
  std::set<std::string> closed;           // families whose lines ended
  std::set<std::string> series;
  std::string current;                    // family of the previous line
  std::istringstream in(text);
  std::string line;
  int n = 0;
  const auto enter = [&](const std::string& family, int at) {
    if (family == current) return;
    if (closed.count(family)) bad.push_back("line " + std::to_string(at) + ": family " + family + " is split");
    if (!current.empty()) closed.insert(current);
    current = family;
  };
  while (std::getline(in, line)) {
    ++n;
    const std::string at = "line " + std::to_string(n) + ": ";
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream w(line.substr(1));
      std::string kw, name;
      w >> kw >> name;
      if (kw != "HELP" && kw != "TYPE") continue;  // a plain comment
      if (!metric_name(name)) {
        bad.push_back(at + "bad metric name '" + name + "'");
        continue;
      }
      enter(name, n);
      std::string rest;
      std::getline(w, rest);
      if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
      if (kw == "HELP") {
        if (!help.emplace(name, n).second) bad.push_back(at + "second HELP for " + name);
        for (size_t i = 0; i < rest.size(); ++i)
          if (rest[i] == '\\' && (i + 1 == rest.size() || (rest[i + 1] != '\\' && rest[i + 1] != 'n')))
            bad.push_back(at + "bad escape in HELP of " + name);
          else if (rest[i] == '\\')
            ++i;
      } else {
        if (!type.emplace(name, n).second) bad.push_back(at + "second TYPE for " + name);
        if (rest != "counter" && rest != "gauge" && rest != "histogram" && rest != "summary" && rest != "untyped")
          bad.push_back(at + "unknown type '" + rest + "'");
        for (const std::string& s : series)
          if (s.rfind(name + "{", 0) == 0 || s == name) bad.push_back(at + "TYPE after samples of " + name);
      }
      continue;
    }
    // name[{labels}] value [timestamp]
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    const std::string name = line.substr(0, i);
    if (!metric_name(name)) {
      bad.push_back(at + "bad metric name '" + name + "'");
      continue;
    }
    enter(name, n);
    std::string key = name + "{";
    std::set<std::string> labels;
    if (i < line.size() && line[i] == '{') {
      ++i;
      bool ok = true;
      while (ok && i < line.size() && line[i] != '}') {
        size_t j = i;
        while (j < line.size() && line[j] != '=') ++j;
        const std::string lname = line.substr(i, j - i);
        if (!label_name(lname)) bad.push_back(at + "bad label name '" + lname + "'"), ok = false;
        if (!labels.insert(lname).second) bad.push_back(at + "label " + lname + " twice"), ok = false;
        if (j + 1 >= line.size() || line[j + 1] != '"') {
          bad.push_back(at + "label " + lname + " has no quoted value");
          ok = false;
          break;
        }
        std::string value;
        for (j += 2; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\') {
            if (j + 1 == line.size() || (line[j + 1] != '\\' && line[j + 1] != '"' && line[j + 1] != 'n')) {
              bad.push_back(at + "bad escape in label " + lname);
              ok = false;
            }
            value += line[j++];
          }
          value += line[j];
        }
        if (j >= line.size()) {
          bad.push_back(at + "label " + lname + " is not closed");
          ok = false;
          break;
        }
        key += lname + "=" + value + ",";
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (!ok) continue;
      if (i >= line.size()) {
        bad.push_back(at + "labels are not closed");
        continue;
      }
      ++i;  // '}'
    }
    if (!series.insert(key + "}").second) bad.push_back(at + "series " + key + "} twice");
    if (i >= line.size() || line[i] != ' ') {
      bad.push_back(at + "no value");
      continue;
    }
    std::istringstream w(line.substr(i + 1));
    std::string value, stamp, extra;
    w >> value >> stamp >> extra;
    if (!float_value(value)) bad.push_back(at + "bad value '" + value + "'");
    if (!stamp.empty() && !int_value(stamp)) bad.push_back(at + "bad timestamp '" + stamp + "'");
    if (!extra.empty()) bad.push_back(at + "trailing text");
  }
  return bad;
}

}  // namespace vf::test
