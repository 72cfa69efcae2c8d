#include "ctl/table.hpp"

#include <algorithm>

namespace vf::ctl {

std::string cell(const std::string& s, std::size_t max) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    out.push_back(c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c));
  }
  return out.empty() ? "-" : out;
}

void Table::add(std::vector<std::string> row) {
  row.resize(headers_.size());
  for (auto& c : row)
    if (c.empty()) c.push_back('-');  // not `c = "-"`: g++ 12 -Wrestrict false positive
  rows_.push_back(std::move(row));
}

void Table::print(std::ostream& out) const {
  // Widths count bytes: exact for the ASCII the daemon sends (names, GIDs, numbers).
  std::vector<std::size_t> w(headers_.size());
  for (std::size_t i = 0; i < headers_.size(); ++i) w[i] = headers_[i].size();
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i) {
      s += r[i];
      if (i + 1 < r.size()) s.append(w[i] - r[i].size() + 2, ' ');
    }
    out << s << '\n';
  };
  line(headers_);
  for (const auto& r : rows_) line(r);
}

}  // namespace vf::ctl
