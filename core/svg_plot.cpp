#include "core/svg_plot.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string_view>

namespace vf {
namespace {

constexpr int kWidth = 820;
constexpr int kHeight = 420;
// Plot area; the right margin holds the legend, so no curve is ever hidden
// behind it.
constexpr double kLeft = 80;
constexpr double kRight = 560;
constexpr double kTop = 48;
constexpr double kBottom = 356;

// Tableau 10 without its grey and olive, which read poorly as thin lines.
constexpr std::array<const char*, 8> kPalette{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                              "#9467bd", "#8c564b", "#e377c2", "#17becf"};

enum class Scale { kLinear, kLog2, kLog10 };

struct Point {
  double x = 0, y = 0;  // in axis units (exponents on a log axis)
};

struct Range {
  double lo = 0, hi = 0;
  bool empty = true;
  void add(double v) {
    lo = empty ? v : std::min(lo, v);
    hi = empty ? v : std::max(hi, v);
    empty = false;
  }
};

struct Tick {
  double at = 0;      // axis units
  std::string label;  // empty: a grid line only
};

struct Axis {
  double lo = 0, hi = 1;  // axis units, hi > lo
  std::vector<Tick> ticks;
};

// Fixed precision keeps the bytes identical across runs and machines.
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string compact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string escape_xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even when escaped.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += c;
    }
  }
  return out;
}

bool plottable(double v, Scale s) { return std::isfinite(v) && (s == Scale::kLinear || v > 0); }

double to_axis(double v, Scale s) {
  switch (s) {
    case Scale::kLog2: return std::log2(v);
    case Scale::kLog10: return std::log10(v);
    case Scale::kLinear: break;
  }
  return v;
}

std::vector<Point> plottable_points(const Series& s, Scale sx, Scale sy) {
  std::vector<Point> pts;
  const std::size_t n = std::min(s.x.size(), s.y.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (plottable(s.x[i], sx) && plottable(s.y[i], sy)) pts.push_back({to_axis(s.x[i], sx), to_axis(s.y[i], sy)});
  }
  return pts;
}

// A 1, 2 or 5 x 10^k step giving roughly 4 to 9 ticks over `span`.
double nice_step(double span) {
  const double raw = span / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double n = raw / mag;
  return (n < 1.5 ? 1 : n < 3 ? 2 : n < 7 ? 5 : 10) * mag;
}

Axis linear_axis(double lo, double hi, bool from_zero) {
  if (from_zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  // Equal values (or a single point) would leave a zero-width range; an
  // almost-equal pair would make the tick loop numerically meaningless.
  if (hi - lo <= std::max(std::abs(lo), std::abs(hi)) * 1e-9) {
    const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
    if (!(from_zero && lo == 0)) lo -= pad;
    hi += pad;
  }
  if (!std::isfinite(hi - lo)) return {lo, hi, {{lo, compact(lo)}, {hi, compact(hi)}}};
  const double step = nice_step(hi - lo);
  Axis ax;
  ax.lo = std::floor(lo / step + 1e-9) * step;
  ax.hi = std::ceil(hi / step - 1e-9) * step;
  // Bounded so that rounding out past the largest double cannot run away.
  const double intervals = (ax.hi - ax.lo) / step;
  const long count = std::isfinite(intervals) ? std::lround(std::min(intervals, 100.0)) : 0;
  for (long i = 0; i <= count; ++i) {
    double v = ax.lo + static_cast<double>(i) * step;
    if (std::abs(v) < step * 1e-6) v = 0;  // no "-0" or "1e-17" at the origin
    ax.ticks.push_back({v, compact(v)});
  }
  return ax;
}

std::string power_label(int e, Scale s) {
  if (s == Scale::kLog10) {
    if (e >= -3 && e <= 3) return compact(std::pow(10.0, e));
    return "1e" + std::to_string(e);
  }
  if (e < 0) return compact(std::ldexp(1.0, e));
  static constexpr std::array<const char*, 7> kSuffix{"", "K", "M", "G", "T", "P", "E"};
  const int k = std::min(e / 10, static_cast<int>(kSuffix.size()) - 1);
  return compact(std::ldexp(1.0, e - 10 * k)) + kSuffix[static_cast<std::size_t>(k)];
}

Axis log_axis(double lo, double hi, Scale s) {
  // The epsilon keeps log10(1000) = 2.9999999999999996 on its power.
  int first = static_cast<int>(std::floor(lo + 1e-9));
  int last = static_cast<int>(std::ceil(hi - 1e-9));
  if (last <= first) {
    --first;
    ++last;
  }
  const int count = last - first + 1;
  int stride = 1;
  while ((count + stride - 1) / stride > 9) stride *= 2;
  Axis ax;
  ax.lo = first;
  ax.hi = last;
  for (int e = first; e <= last; ++e) {
    const bool labelled = e % stride == 0;
    // Unlabelled powers still get a grid line, unless so many would crowd it.
    if (labelled || stride <= 4) ax.ticks.push_back({static_cast<double>(e), labelled ? power_label(e, s) : ""});
  }
  return ax;
}

Axis make_axis(const Range& r, Scale s, bool from_zero) {
  return s == Scale::kLinear ? linear_axis(r.lo, r.hi, from_zero) : log_axis(r.lo, r.hi, s);
}

double px(const Axis& ax, double v) { return kLeft + (v - ax.lo) / (ax.hi - ax.lo) * (kRight - kLeft); }
double py(const Axis& ax, double v) { return kBottom - (v - ax.lo) / (ax.hi - ax.lo) * (kBottom - kTop); }

void line(std::string& out, double x1, double y1, double x2, double y2) {
  out += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) + "\"/>\n";
}

void text(std::string& out, double x, double y, std::string_view attrs, std::string_view content) {
  out += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"";
  if (!attrs.empty()) (out += ' ') += attrs;
  out += '>' + escape_xml(content) + "</text>\n";
}

void draw_grid(std::string& out, const Axis& ax, const Axis& ay) {
  out += "<g stroke=\"#e0e0e0\" stroke-width=\"1\">\n";
  for (const Tick& t : ax.ticks) line(out, px(ax, t.at), kTop, px(ax, t.at), kBottom);
  for (const Tick& t : ay.ticks) line(out, kLeft, py(ay, t.at), kRight, py(ay, t.at));
  out += "</g>\n";
}

void draw_tick_marks(std::string& out, const Axis& ax, const Axis& ay) {
  out += "<g stroke=\"#333333\" stroke-width=\"1\">\n";
  for (const Tick& t : ax.ticks) line(out, px(ax, t.at), kBottom, px(ax, t.at), kBottom + 5);
  for (const Tick& t : ay.ticks) line(out, kLeft - 5, py(ay, t.at), kLeft, py(ay, t.at));
  out += "</g>\n";
}

void draw_tick_labels(std::string& out, const Axis& ax, const Axis& ay) {
  out += "<g fill=\"#333333\">\n";
  for (const Tick& t : ax.ticks) {
    if (!t.label.empty()) text(out, px(ax, t.at), kBottom + 19, "text-anchor=\"middle\"", t.label);
  }
  // +4 puts the baseline so the digits sit centred on the grid line.
  for (const Tick& t : ay.ticks) {
    if (!t.label.empty()) text(out, kLeft - 8, py(ay, t.at) + 4, "text-anchor=\"end\"", t.label);
  }
  out += "</g>\n";
}

void draw_frame(std::string& out) {
  out += "<rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(kRight - kLeft) +
         "\" height=\"" + num(kBottom - kTop) + "\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1\"/>\n";
}

void draw_series(std::string& out, const std::vector<Point>& pts, const Axis& ax, const Axis& ay,
                 const char* colour) {
  if (pts.empty()) return;
  const std::string c = colour;
  out += "<g>\n<polyline fill=\"none\" stroke=\"" + c + "\" stroke-width=\"2\" points=\"";
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (i > 0) out += ' ';
    out += num(px(ax, pts[i].x)) + ',' + num(py(ay, pts[i].y));
  }
  out += "\"/>\n";
  for (const Point& p : pts) {
    out += "<circle cx=\"" + num(px(ax, p.x)) + "\" cy=\"" + num(py(ay, p.y)) + "\" r=\"3\" fill=\"" + c + "\"/>\n";
  }
  out += "</g>\n";
}

void draw_legend(std::string& out, const std::vector<Series>& series) {
  if (series.empty()) return;
  out += "<g>\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double y = kTop + 10 + 20 * static_cast<double>(i);
    const std::string c = kPalette[i % kPalette.size()];
    out += "<line x1=\"" + num(kRight + 16) + "\" y1=\"" + num(y) + "\" x2=\"" + num(kRight + 40) + "\" y2=\"" +
           num(y) + "\" stroke=\"" + c + "\" stroke-width=\"2\"/>\n";
    text(out, kRight + 46, y + 4, "", series[i].name);
  }
  out += "</g>\n";
}

void draw_labels(std::string& out, const PlotSpec& spec) {
  const double mid_x = (kLeft + kRight) / 2;
  const double mid_y = (kTop + kBottom) / 2;
  text(out, kWidth / 2.0, 26, "text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"", spec.title);
  text(out, mid_x, kHeight - 16, "text-anchor=\"middle\" font-size=\"13\"", spec.x_label);
  const std::string rotate = "text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 " + num(20) + ' ' +
                             num(mid_y) + ")\"";
  text(out, 20, mid_y, rotate, spec.y_label);
}

[[noreturn]] void throw_write_error(const std::string& path, int err) {
  throw std::runtime_error("cannot write SVG plot " + path + ": " + std::strerror(err));
}

}  // namespace

std::string render_svg(const PlotSpec& spec) {
  const Scale sx = spec.log_x ? Scale::kLog2 : Scale::kLinear;
  const Scale sy = spec.log_y ? Scale::kLog10 : Scale::kLinear;
  std::vector<std::vector<Point>> points;
  Range rx, ry;
  for (const Series& s : spec.series) {
    points.push_back(plottable_points(s, sx, sy));
    for (const Point& p : points.back()) {
      rx.add(p.x);
      ry.add(p.y);
    }
  }

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  const std::string w = std::to_string(kWidth), h = std::to_string(kHeight);
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + ' ' + h + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"#ffffff\"/>\n";
  if (rx.empty) {
    draw_frame(out);
    text(out, (kLeft + kRight) / 2, (kTop + kBottom) / 2, "text-anchor=\"middle\" font-size=\"14\" fill=\"#666666\"",
         "no data");
  } else {
    const Axis ax = make_axis(rx, sx, false);
    const Axis ay = make_axis(ry, sy, spec.y_from_zero);
    draw_grid(out, ax, ay);
    draw_frame(out);
    draw_tick_marks(out, ax, ay);
    draw_tick_labels(out, ax, ay);
    for (std::size_t i = 0; i < points.size(); ++i) draw_series(out, points[i], ax, ay, kPalette[i % kPalette.size()]);
  }
  draw_labels(out, spec);
  draw_legend(out, spec.series);
  out += "</svg>\n";
  return out;
}

void write_svg(const std::string& path, const PlotSpec& spec) {
  const std::string svg = render_svg(spec);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw_write_error(path, errno);
  const bool written = std::fwrite(svg.data(), 1, svg.size(), f) == svg.size();
  const int write_err = errno;
  // fclose flushes, so a full disk may only show up here.
  if (std::fclose(f) != 0) throw_write_error(path, errno);
  if (!written) throw_write_error(path, write_err);
}

}  // namespace vf
