// Strict parsers for the quantities a config carries: delays ("100ns",
// "1.5us"), rates ("100G", "25Gbps", "400Mb/s") and plain integers. They
// return std::nullopt instead of guessing, so every config error can say
// exactly what was expected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vf::units {

// "<number><unit>" with unit ns, us (or µs), ms, s; the result must be a whole
// number of nanoseconds no larger than max_ns. A bare number is rejected:
// "100" could mean anything.
std::optional<uint64_t> parse_delay_ns(std::string_view text, uint64_t max_ns);

// "<number><prefix>[bps|b/s|bit/s]" with prefix k, K, M, G or T (SI, powers of
// ten). Bytes ("GB/s") are rejected because link rates are quoted in bits.
std::optional<uint64_t> parse_rate_bps(std::string_view text);

// "<number><unit>" with unit B, KiB, MiB, GiB (powers of two) or kB, MB, GB
// (powers of ten); a whole number of bytes no larger than max. A bare number is rejected.
std::optional<uint64_t> parse_size_bytes(std::string_view text, uint64_t max);

// Unsigned decimal integer without sign, spaces or leading zeros; nullopt on
// overflow past max.
std::optional<uint64_t> parse_uint(std::string_view text, uint64_t max);

// "1.5us", "100ns", "2ms": the shortest exact rendering.
std::string format_delay(uint64_t ns);
// "100 Gb/s", "13.64 Gb/s", "800 Mb/s".
std::string format_rate(uint64_t bps);

// Edit distance (Levenshtein + adjacent transpositions), capped (returns cap+1 once exceeded) so hostile
// multi-kilobyte keys cost little.
std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t cap = 8);

// The candidate closest to `word` if it is a plausible typo (distance <= 2, or
// <= 1 for short words), case-insensitively; empty otherwise.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// Lower-cases ASCII.
std::string lower(std::string_view s);

}  // namespace vf::units
