// Line plots for vfabric-compare's report and vfabric-sim --svg. They are written
// directly as SVG text so the report needs no plotting package and no
// network access; the output is byte-for-byte deterministic for a given
// input, so regenerated reports diff cleanly.
#pragma once

#include <string>
#include <vector>

namespace vf {

struct Series {
  std::string name;  // legend text
  // Paired by index (the shorter vector decides the count). A point whose x or
  // y is not finite is skipped, as is one with x <= 0 or y <= 0 on a log axis.
  std::vector<double> x, y;
};

struct PlotSpec {
  std::string title;
  std::string x_label, y_label;
  // Base 2, for message sizes: ticks at powers of two, labelled 64, 1K, 4K,
  // 1M...; with many powers in range only every second or fourth is labelled.
  bool log_x = false;
  bool log_y = false;       // base 10: ticks at powers of ten
  bool y_from_zero = true;  // a linear y axis always includes 0
  std::vector<Series> series;
};

// A standalone SVG 1.1 document, 820x420 (legend at the right, about 36 characters wide). With no plottable point it still
// has the frame, title and labels, and says "no data" in the middle.
std::string render_svg(const PlotSpec& spec);

// Writes render_svg(spec) to `path`; throws std::runtime_error naming the
// path and the system's reason on failure.
void write_svg(const std::string& path, const PlotSpec& spec);

}  // namespace vf
