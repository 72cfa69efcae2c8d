// An IB HCA's `pkeys`: the port's P_Key table from index 0, as an SM's
// partition configuration would program it (opensm's partitions.conf writes
// them in hex too). Bit 15 is membership: set = full, clear = limited.
#include <fmt/format.h>

#include <charconv>

#include "daemon/config/config_detail.hpp"
#include "daemon/config/link_attrs.hpp"

namespace vf::config::detail {
namespace {

std::optional<uint16_t> parse_pkey(std::string_view t) {
  if (t.size() < 3 || t.size() > 6 || t[0] != '0' || (t[1] != 'x' && t[1] != 'X')) return std::nullopt;
  unsigned v = 0;
  auto [p, ec] = std::from_chars(t.data() + 2, t.data() + t.size(), v, 16);
  if (ec != std::errc() || p != t.data() + t.size() || v > 0xFFFF) return std::nullopt;
  return uint16_t(v);
}

}  // namespace

void read_hca_pkeys(const Reader& r, const YAML::Node& v, Hca& h) {
  const std::string what = fmt::format("pkeys of HCA '{}'", h.name);
  r.expect_seq(v, what, "pkeys: [0xffff, 0x8001]");
  if (v.size() == 0 || v.size() > kPkeyTableLenIb)
    r.fail(v, fmt::format("{} lists {} P_Keys", what, v.size()),
           fmt::format("list 1 to {} P_Keys (the port's table), e.g. pkeys: [0xffff, 0x8001]", kPkeyTableLenIb));
  h.pkeys.clear();
  for (const auto& e : v) {
    const std::string t = r.scalar(e, "pkey", "0x8001");
    const auto k = parse_pkey(t);
    if (!k)
      r.fail(e, fmt::format("P_Key {} of HCA '{}' is not a P_Key", quote(t), h.name),
             "write 16 bits in hex, e.g. 0x8001 (full member of partition 1) or 0x0001 (limited member)");
    if ((*k & 0x7FFF) == 0)
      r.fail(e, fmt::format("P_Key {} of HCA '{}' is invalid", t, h.name),
             "0x0000 and 0x8000 are the IBA's invalid P_Key; partitions are 0x0001 to 0x7fff");
    for (uint16_t prev : h.pkeys)
      if ((prev & 0x7FFF) == (*k & 0x7FFF))
        r.fail(e, fmt::format("P_Key {} of HCA '{}' repeats partition 0x{:04x}", t, h.name, *k & 0x7FFF),
               "a port is a member of a partition once: keep one of the two entries");
    h.pkeys.push_back(*k);
  }
}

}  // namespace vf::config::detail
