// Column-aligned text tables in the style of `ip -br` and `ibstat`: upper-case
// headers, two spaces between columns, no borders, no trailing blanks.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace vf::ctl {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add(std::vector<std::string> row);  // missing cells print as "-"
  void print(std::ostream& out) const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// Makes daemon-supplied text safe for a terminal: control characters
// (escape sequences) become '?', and the cell is cut at `max` characters.
std::string cell(const std::string& s, std::size_t max = 64);

}  // namespace vf::ctl
