// An Ethernet fabric's egress scheduling in mlnx_qos words: prio_tc (the
// traffic class of each priority), tsa (strict or ets per class) and tc_bw
// (the ETS classes' shares, summing to 100 as mlnx_qos and dcb require).
#include <fmt/format.h>

#include "daemon/config/config_detail.hpp"
#include "daemon/config/ets_check.hpp"
#include "daemon/config/units.hpp"

namespace vf::config::detail {
namespace {

// An eight-entry list, first entry for priority / class 0.
void expect_eight(const Reader& r, const YAML::Node& v, std::string_view key, std::string_view example) {
  r.expect_seq(v, fmt::format("qos {}", key), example);
  if (v.size() != 8)
    r.fail(v, fmt::format("{} has {} entries", key, v.size()), fmt::format("give 8, the first for 0: {}", example));
}

}  // namespace

void read_ets(const Reader& r, const YAML::Node& qos, EthQos& q) {
  if (const auto v = qos["prio_tc"]) {
    expect_eight(r, v, "prio_tc", "prio_tc: [1, 0, 2, 3, 4, 5, 6, 7]");
    for (std::size_t p = 0; p < 8; ++p) {
      const auto tc = units::parse_uint(r.scalar(v[p], "prio_tc", "prio_tc: [1, 0, ...]"), 7);
      if (!tc)
        r.fail(v[p], fmt::format("priority {} maps to traffic class {}", p, quote(v[p].Scalar())),
               "a traffic class is 0 to 7");
      q.prio_tc[p] = uint8_t(*tc);
    }
  }
  if (const auto v = qos["tsa"]) {
    expect_eight(r, v, "tsa", "tsa: [ets, ets, ets, ets, ets, ets, strict, ets]");
    for (std::size_t tc = 0; tc < 8; ++tc) {
      const std::string s = units::lower(r.scalar(v[tc], "tsa", "tsa: [ets, ...]"));
      if (s != "ets" && s != "strict") {
        const std::string hint = units::did_you_mean(s, {"ets", "strict"});
        r.fail(v[tc], fmt::format("tsa {} of traffic class {} is not a selection algorithm", quote(v[tc].Scalar()), tc),
               hint.empty() ? "use strict (before every ETS class) or ets (a bandwidth share)"
                            : fmt::format("did you mean '{}'?", hint));
      }
      q.tc_strict[tc] = s == "strict";
    }
  }
  const YAML::Node bw = qos["tc_bw"];
  if (bw) {
    expect_eight(r, bw, "tc_bw", "tc_bw: [13, 13, 13, 13, 12, 12, 12, 12]");
    for (std::size_t tc = 0; tc < 8; ++tc) {
      const auto n = units::parse_uint(r.scalar(bw[tc], "tc_bw", "tc_bw: [13, ...]"), 100);
      if (!n)
        r.fail(bw[tc], fmt::format("tc_bw {} of traffic class {} is not a percentage", quote(bw[tc].Scalar()), tc),
               "use 0 to 100");
      q.tc_bw[tc] = uint8_t(*n);
    }
  }
  const YAML::Node at = bw ? bw : qos["tsa"] ? qos["tsa"] : qos;
  if (const auto p = ets_problem(q.tc_strict, q.tc_bw)) r.fail(at, p->what, p->fix);
}

}  // namespace vf::config::detail
