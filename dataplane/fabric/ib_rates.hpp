// InfiniBand link data rates from width and speed, for configs that say
// "width: 4x, speed: EDR". The rate is after line coding (8b/10b up to QDR,
// 64b/66b from FDR10), which is what wire_time.hpp expects: SDR/DDR/QDR lanes
// signal at 2.5/5/10 Gbaud and carry 2/4/8 Gb/s; FDR10 10.3125 Gbaud carries
// 10 Gb/s; FDR 14.0625 Gbaud carries 13.64 Gb/s; EDR 25.78125 Gbaud carries
// 25 Gb/s; HDR and NDR carry 50 and 100 Gb/s per lane.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace vf::dp {

enum class IbSpeed : uint8_t { kSDR, kDDR, kQDR, kFDR10, kFDR, kEDR, kHDR, kNDR };

// Per-lane data rate in bit/s (FDR rounded down to a whole bit/s).
constexpr uint64_t ib_lane_rate_bps(IbSpeed s) {
  switch (s) {
    case IbSpeed::kSDR: return 2'000'000'000ULL;
    case IbSpeed::kDDR: return 4'000'000'000ULL;
    case IbSpeed::kQDR: return 8'000'000'000ULL;
    case IbSpeed::kFDR10: return 10'000'000'000ULL;
    case IbSpeed::kFDR: return 14'062'500'000ULL * 64 / 66;
    case IbSpeed::kEDR: return 25'000'000'000ULL;
    case IbSpeed::kHDR: return 50'000'000'000ULL;
    case IbSpeed::kNDR: return 100'000'000'000ULL;
  }
  return 0;
}

// Link widths the IBA defines: 1x, 2x, 4x, 8x, 12x.
constexpr bool ib_width_valid(unsigned lanes) {
  return lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 12;
}

constexpr uint64_t ib_link_rate_bps(unsigned lanes, IbSpeed s) { return lanes * ib_lane_rate_bps(s); }

// "SDR".."NDR" (upper case, as ibstat prints them).
constexpr std::optional<IbSpeed> parse_ib_speed(std::string_view name) {
  constexpr std::string_view names[] = {"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR"};
  for (unsigned i = 0; i < 8; ++i)
    if (name == names[i]) return IbSpeed(i);
  return std::nullopt;
}

}  // namespace vf::dp
