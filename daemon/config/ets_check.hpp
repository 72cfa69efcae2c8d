// The rules ETS settings obey wherever they come from (the config's qos:,
// fabricctl qos set): mlnx_qos's and dcb's -- the ets classes' shares sum
// to 100, a strict class has none.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace vf {

struct EtsProblem {
  std::string what, fix;
};

inline std::optional<EtsProblem> ets_problem(const std::array<bool, 8>& strict, const std::array<uint8_t, 8>& bw) {
  unsigned sum = 0, ets = 0;
  for (unsigned tc = 0; tc < 8; ++tc) {
    if (strict[tc] && bw[tc])
      return EtsProblem{fmt::format("traffic class {} is strict but has tc_bw {}", tc, bw[tc]),
                        "a strict class takes what it needs: give it tc_bw 0 and share 100 among the ets classes"};
    if (!strict[tc]) {
      sum += bw[tc];
      ++ets;
    }
  }
  if (ets && sum != 100)
    return EtsProblem{fmt::format("the ets classes' tc_bw sum to {}", sum),
                      "ETS shares are percentages of what the strict classes leave: make them sum to 100"};
  return std::nullopt;
}

}  // namespace vf
