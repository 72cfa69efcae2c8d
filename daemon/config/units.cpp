#include "daemon/config/units.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace vf::units {
namespace {

// Splits "1.5us" into a decimal mantissa and the suffix. The mantissa is kept
// as integer digits plus a count of fraction digits so that "1.5us" becomes
// exactly 1500 ns without floating-point rounding.
struct Decimal {
  uint64_t digits = 0;     // all digits, decimal point removed
  unsigned frac = 0;       // how many of them follow the point
  std::string_view rest;   // the unit
};

std::optional<Decimal> split_decimal(std::string_view s) {
  Decimal d;
  if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;  // "0.5us", not ".5us"

  std::size_t i = 0;
  bool any = false, point = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      if (d.digits > (UINT64_MAX - 9) / 10) return std::nullopt;  // overflow
      d.digits = d.digits * 10 + static_cast<uint64_t>(c - '0');
      if (point) ++d.frac;
      any = true;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!any || (point && d.frac == 0) || d.frac > 12) return std::nullopt;
  d.rest = s.substr(i);
  return d;
}

// digits * 10^exp / 10^frac, exact or nullopt.
std::optional<uint64_t> scale(const Decimal& d, unsigned exp, uint64_t max) {
  __uint128_t v = d.digits;
  for (unsigned k = 0; k < exp; ++k) v *= 10;
  __uint128_t div = 1;
  for (unsigned k = 0; k < d.frac; ++k) div *= 10;
  if (v % div != 0) return std::nullopt;  // not a whole number of base units
  v /= div;
  if (v > max) return std::nullopt;
  return static_cast<uint64_t>(v);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<uint64_t> parse_delay_ns(std::string_view text, uint64_t max_ns) {
  if (text.size() > 32) return std::nullopt;
  auto d = split_decimal(trim(text));
  if (!d) return std::nullopt;
  std::string_view u = trim(d->rest);
  unsigned exp;
  if (u == "ns") exp = 0;
  else if (u == "us" || u == "\xC2\xB5s" /* µs */) exp = 3;
  else if (u == "ms") exp = 6;
  else if (u == "s") exp = 9;
  else return std::nullopt;
  return scale(*d, exp, max_ns);
}

std::optional<uint64_t> parse_rate_bps(std::string_view text) {
  if (text.size() > 32) return std::nullopt;
  auto d = split_decimal(trim(text));
  if (!d) return std::nullopt;
  std::string_view u = trim(d->rest);
  unsigned exp = 0;
  if (!u.empty()) {
    switch (u.front()) {
      case 'k': case 'K': exp = 3; u.remove_prefix(1); break;
      case 'M': exp = 6; u.remove_prefix(1); break;
      case 'G': case 'g': exp = 9; u.remove_prefix(1); break;
      case 'T': case 't': exp = 12; u.remove_prefix(1); break;
      default: break;
    }
  }
  if (!(u.empty() || u == "bps" || u == "b/s" || u == "bit/s")) return std::nullopt;
  if (exp == 0 && u.empty()) return std::nullopt;  // "100" alone: unit missing
  auto v = scale(*d, exp, 10'000'000'000'000ULL);    // 10 Tb/s is absurd enough
  if (!v || *v == 0) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_size_bytes(std::string_view text, uint64_t max) {
  if (text.size() > 32) return std::nullopt;
  auto d = split_decimal(trim(text));
  if (!d) return std::nullopt;
  const std::string_view u = trim(d->rest);
  uint64_t unit;
  if (u == "B") unit = 1;
  else if (u == "KiB") unit = 1024;
  else if (u == "MiB") unit = 1024 * 1024;
  else if (u == "GiB") unit = uint64_t{1} << 30;
  else if (u == "kB") unit = 1000;
  else if (u == "MB") unit = 1'000'000;
  else if (u == "GB") unit = 1'000'000'000;
  else return std::nullopt;
  // digits * unit / 10^frac, exact.
  __uint128_t v = __uint128_t(d->digits) * unit;
  __uint128_t div = 1;
  for (unsigned k = 0; k < d->frac; ++k) div *= 10;
  if (v % div != 0) return std::nullopt;  // not a whole number of bytes
  v /= div;
  if (v > max) return std::nullopt;
  return static_cast<uint64_t>(v);
}

std::optional<uint64_t> parse_uint(std::string_view text, uint64_t max) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  if (text.size() > 1 && text.front() == '0') return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  if (ec != std::errc() || p != text.data() + text.size() || v > max) return std::nullopt;
  return v;
}

std::string format_delay(uint64_t ns) {
  static constexpr std::array<std::pair<uint64_t, const char*>, 3> units{
      {{1'000'000'000ULL, "s"}, {1'000'000ULL, "ms"}, {1'000ULL, "us"}}};
  for (auto [div, name] : units) {
    if (ns >= div) {
      // Print up to 3 fraction digits, trailing zeros trimmed, exact.
      uint64_t whole = ns / div, rem = ns % div;
      if (rem == 0) return fmt::format("{}{}", whole, name);
      if ((rem * 1000) % div == 0) {
        std::string frac = fmt::format("{:03}", rem * 1000 / div);
        while (frac.back() == '0') frac.pop_back();
        return fmt::format("{}.{}{}", whole, frac, name);
      }
    }
  }
  return fmt::format("{}ns", ns);
}

std::string format_rate(uint64_t bps) {
  static constexpr std::array<std::pair<uint64_t, const char*>, 4> units{
      {{1'000'000'000'000ULL, "Tb/s"}, {1'000'000'000ULL, "Gb/s"}, {1'000'000ULL, "Mb/s"}, {1'000ULL, "kb/s"}}};
  for (auto [div, name] : units) {
    if (bps >= div) {
      double v = static_cast<double>(bps) / static_cast<double>(div);
      std::string s = fmt::format("{:.2f}", v);
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
      return fmt::format("{} {}", s, name);
    }
  }
  return fmt::format("{} b/s", bps);
}

std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t cap) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions
  // ("ecoh" -> "echo" is one typo, not two).
  if (a.size() > b.size()) std::swap(a, b);
  if (b.size() - a.size() > cap) return cap + 1;
  if (b.size() > 256) return cap + 1;
  std::vector<std::size_t> prev2(a.size() + 1), prev(a.size() + 1), cur(a.size() + 1);
  for (std::size_t i = 0; i <= a.size(); ++i) prev[i] = i;
  for (std::size_t j = 1; j <= b.size(); ++j) {
    cur[0] = j;
    std::size_t row_min = cur[0];
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t sub = prev[i - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[i] = std::min({prev[i] + 1, cur[i - 1] + 1, sub});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[i] = std::min(cur[i], prev2[i - 2] + 1);
      row_min = std::min(row_min, cur[i]);
    }
    if (row_min > cap) return cap + 1;
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return std::min(prev[a.size()], cap + 1);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string w = lower(word);
  std::string best;
  std::size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(w, lower(c), 3);
    std::size_t limit = c.size() <= 4 ? 1 : 2;
    if (d <= limit && d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

}  // namespace vf::units
