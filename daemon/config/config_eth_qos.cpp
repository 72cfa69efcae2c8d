// An Ethernet fabric's `qos:` (trust, DSCP map, PFC, its thresholds and the
// vHCAs' default traffic class) and the check that every switch buffer holds
// the PFC headroom its ports reserve.
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdlib>

#include "core/pfc_headroom.hpp"
#include "daemon/config/config_detail.hpp"
#include "daemon/config/units.hpp"

namespace vf::config::detail {
namespace {

constexpr uint64_t kMaxThresholdBytes = 64ULL << 20;   // 64 MiB: above any switch's buffer
constexpr uint64_t kMaxResponseNs = 1'000'000;         // 1 ms
constexpr uint64_t kMaxWatchdogNs = 10'000'000'000ULL;  // 10 s
constexpr uint64_t kMaxDcqcnTimeNs = 100'000'000;       // 100 ms

uint8_t read_priority(const Reader& r, const YAML::Node& n, std::string_view what, std::string_view example) {
  const auto p = units::parse_uint(r.scalar(n, what, example), 7);
  if (!p) r.fail(n, fmt::format("{} {} is not a priority", what, quote(n.Scalar())), "use 0 to 7");
  return uint8_t(*p);
}

uint8_t read_pfc(const Reader& r, const YAML::Node& v) {
  if (v.IsScalar()) {
    const std::string s = units::lower(v.Scalar());
    if (s == "off" || s == "none" || s == "false") return 0;
    r.fail(v, fmt::format("pfc {} is not a list of priorities", quote(v.Scalar())),
           "list the lossless priorities, e.g. pfc: [3], or write pfc: off for lossy Ethernet");
  }
  r.expect_seq(v, "qos pfc", "pfc: [3]");
  uint8_t vec = 0;
  for (const auto& e : v) {
    const uint8_t p = read_priority(r, e, "pfc priority", "pfc: [3]");
    if (vec >> p & 1) r.fail(e, fmt::format("priority {} is listed twice in pfc", p), "list each priority once");
    vec = uint8_t(vec | 1u << p);
  }
  return vec;
}

void read_dscp_map(const Reader& r, const YAML::Node& v, EthQos& q) {
  if (!v.IsMap())
    r.fail(v, "dscp2prio is not a mapping", "map DSCP values to priorities, e.g. dscp2prio: {26: 3, 48: 6}");
  for (const auto& kv : v) {
    const auto d = units::parse_uint(r.scalar(kv.first, "DSCP", "26: 3"), 63);
    if (!d)
      r.fail(kv.first, fmt::format("DSCP {} is out of range", quote(kv.first.Scalar())),
             "a DSCP is 0 to 63 (the upper six bits of the IP traffic class)");
    q.dscp2prio[*d] = read_priority(r, kv.second, "priority", "26: 3");
  }
}

uint32_t read_threshold(const Reader& r, const YAML::Node& v, std::string_view key) {
  const std::string t = r.scalar(v, key, fmt::format("{}: 16KiB", key));
  const auto b = units::parse_size_bytes(t, kMaxThresholdBytes);
  if (!b || *b == 0)
    r.fail(v, fmt::format("{} {} is not a buffer size", key, quote(t)),
           "write a size with a unit, at most 64MiB, e.g. 16KiB");
  return uint32_t(*b);
}

// off, or a power of two from 1/128 to 64 ("1/8", "0.125", "2"): the alphas
// switch ASICs offer for dynamic thresholds.
int8_t read_alpha(const Reader& r, const YAML::Node& v) {
  const std::string t = units::lower(r.scalar(v, "buffer_alpha", "buffer_alpha: 1/2"));
  if (t == "off") return EthQos::kStaticBuffer;
  double a = 0;
  if (const auto slash = t.find('/'); slash != std::string::npos) {
    const auto num = units::parse_uint(std::string_view(t).substr(0, slash), 1);
    const auto den = units::parse_uint(std::string_view(t).substr(slash + 1), 128);
    if (num && *num == 1 && den && *den > 0) a = 1.0 / double(*den);
  } else {
    char* end = nullptr;
    a = std::strtod(t.c_str(), &end);
    if (t.empty() || *end) a = 0;
  }
  const int e = a > 0 ? std::ilogb(a) : 0;
  if (!(a > 0) || std::ldexp(1.0, e) != a || e < -7 || e > 6)
    r.fail(v, fmt::format("buffer_alpha {} is not a dynamic threshold", quote(t)),
           "use a power of two from 1/128 to 64 (e.g. 1/8, 1/2, 1, 2), or off for static thresholds");
  return int8_t(e);
}

uint64_t read_time(const Reader& r, const YAML::Node& v, std::string_view key, uint64_t max, bool off_ok) {
  const std::string t = r.scalar(v, key, fmt::format("{}: 1us", key));
  if (off_ok && units::lower(t) == "off") return 0;
  const auto d = units::parse_delay_ns(t, max);
  if (!d || (off_ok && *d == 0))
    r.fail(v, fmt::format("{} {} is not a time", key, quote(t)),
           fmt::format("write a time with a unit, at most {}{}", units::format_delay(max), off_ok ? ", or off" : ""));
  return *d;
}

bool is_off(const YAML::Node& v) { return v.IsScalar() && units::lower(v.Scalar()) == "off"; }

void read_ecn(const Reader& r, const YAML::Node& v, EthQos& q) {
  if (is_off(v)) {
    q.ecn_kmax_bytes = 0;
    return;
  }
  r.expect_map(v, "qos ecn", {"kmin", "kmax", "pmax", "wred"});
  if (const auto t = v["wred"]) {
    const std::string s = units::lower(r.scalar(t, "wred", "wred: on"));
    if (s != "on" && s != "off")
      r.fail(t, fmt::format("wred {} is neither on nor off", quote(t.Scalar())),
             "wred: on drops what ECN cannot mark on the lossy priorities; off (the default) lets it pass");
    q.ecn_wred = s == "on";
  }
  if (const auto t = v["kmin"]) q.ecn_kmin_bytes = read_threshold(r, t, "kmin");
  if (const auto t = v["kmax"]) q.ecn_kmax_bytes = read_threshold(r, t, "kmax");
  if (const auto t = v["pmax"]) {
    const std::string s = r.scalar(t, "pmax", "pmax: 0.05");
    char* end = nullptr;
    const double p = std::strtod(s.c_str(), &end);
    if (s.empty() || *end || !(p > 0 && p <= 1))
      r.fail(t, fmt::format("pmax {} is not a probability", quote(s)), "write a number above 0 and at most 1, e.g. 0.05");
    q.ecn_pmax = p;
  }
  if (q.ecn_kmin_bytes >= q.ecn_kmax_bytes)
    r.fail(v, fmt::format("ecn kmin ({} bytes) is not below kmax ({} bytes)", q.ecn_kmin_bytes, q.ecn_kmax_bytes),
           "marking rises from kmin to kmax: make kmin the smaller");
}

void read_dcqcn(const Reader& r, const YAML::Node& v, EthQos& q) {
  if (v.IsScalar()) {
    const std::string s = units::lower(v.Scalar());
    if (s == "on" || s == "off") {
      q.dcqcn = s == "on";
      return;
    }
    r.fail(v, fmt::format("dcqcn {} is neither on nor off", quote(v.Scalar())),
           "write dcqcn: on, dcqcn: off, or a mapping of its parameters");
  }
  r.expect_map(v, "qos dcqcn", {"min_time_between_cnps", "rpg_time_reset", "rpg_ai_rate", "rpg_hai_rate"});
  q.dcqcn = true;
  if (const auto t = v["min_time_between_cnps"])
    q.cnp_interval_ns = read_time(r, t, "min_time_between_cnps", kMaxDcqcnTimeNs, false);
  if (const auto t = v["rpg_time_reset"]) q.rate_timer_ns = read_time(r, t, "rpg_time_reset", kMaxDcqcnTimeNs, false);
  for (const auto& [key, out] : {std::pair{"rpg_ai_rate", &q.ai_rate_mbps}, {"rpg_hai_rate", &q.hai_rate_mbps}})
    if (const auto t = v[key]) {
      const auto bps = units::parse_rate_bps(r.scalar(t, key, "rpg_ai_rate: 5Mbps"));
      if (!bps || *bps < 1'000'000 || *bps > 100'000'000'000ULL)
        r.fail(t, fmt::format("{} {} is not a rate", key, quote(t.Scalar())),
               "write a rate from 1Mbps to 100Gbps, e.g. 5Mbps");
      *out = uint32_t(*bps / 1'000'000);
    }
}

}  // namespace

void read_hca_dcqcn(const Reader& r, const YAML::Node& v, Hca& h) {
  EthQos q;
  read_dcqcn(r, v, q);
  Hca::DcqcnOverride& o = h.dcqcn;
  if (v.IsScalar()) {
    o.enabled = q.dcqcn;
    return;
  }
  o.enabled = true;  // a mapping turns it on, as in the fabric's qos
  if (v["min_time_between_cnps"]) o.cnp_interval_ns = q.cnp_interval_ns;
  if (v["rpg_time_reset"]) o.rate_timer_ns = q.rate_timer_ns;
  if (v["rpg_ai_rate"]) o.ai_rate_mbps = q.ai_rate_mbps;
  if (v["rpg_hai_rate"]) o.hai_rate_mbps = q.hai_rate_mbps;
}

EthQos read_eth_qos(const Reader& r, const YAML::Node& v, const std::string& what) {
  r.expect_map(v, what, {"trust", "pfc", "dscp2prio", "roce_tclass", "pause_quanta", "pfc_response", "pfc_watchdog",
                         "xoff", "xon", "headroom", "reserved", "buffer_alpha", "ecn", "dcqcn", "prio_tc", "tsa", "tc_bw"});
  EthQos q;
  if (const auto t = v["trust"]) {
    const std::string s = units::lower(r.scalar(t, "trust", "trust: dscp"));
    if (s == "dscp") q.trust_dscp = true;
    else if (s == "pcp") q.trust_dscp = false;
    else {
      const std::string hint = units::did_you_mean(s, {"dscp", "pcp"});
      r.fail(t, fmt::format("trust {} is not a trust mode", quote(t.Scalar())),
             hint.empty() ? "use dscp (the IP DSCP picks the priority) or pcp (the 802.1Q tag does)"
                          : fmt::format("did you mean '{}'?", hint));
    }
  }
  if (const auto p = v["pfc"]) q.pfc = read_pfc(r, p);
  if (const auto m = v["dscp2prio"]) read_dscp_map(r, m, q);
  if (const auto t = v["roce_tclass"]) {
    const auto n = units::parse_uint(r.scalar(t, "roce_tclass", "roce_tclass: 106"), 255);
    if (!n)
      r.fail(t, fmt::format("roce_tclass {} is not a traffic class", quote(t.Scalar())),
             "use 0 to 255 (DSCP << 2 | ECN; 106 = DSCP 26 with ECT(0); 0 = what each application sets)");
    q.roce_tclass = uint8_t(*n);
  }
  if (const auto t = v["pause_quanta"]) {
    const auto n = units::parse_uint(r.scalar(t, "pause_quanta", "pause_quanta: 65535"), 65535);
    if (!n || *n == 0)
      r.fail(t, fmt::format("pause_quanta {} is out of range", quote(t.Scalar())),
             "use 1 to 65535 (units of 512 bit times at the link's speed)");
    q.pause_quanta = uint16_t(*n);
  }
  if (const auto t = v["pfc_response"]) q.pfc_response_ns = read_time(r, t, "pfc_response", kMaxResponseNs, false);
  if (const auto t = v["pfc_watchdog"]) q.pfc_watchdog_ns = read_time(r, t, "pfc_watchdog", kMaxWatchdogNs, true);
  if (const auto t = v["xoff"]) q.xoff_bytes = read_threshold(r, t, "xoff");
  if (const auto t = v["xon"]) q.xon_bytes = read_threshold(r, t, "xon");
  if (const auto t = v["headroom"]) q.headroom_bytes = read_threshold(r, t, "headroom");
  if (const auto t = v["buffer_alpha"]) q.buffer_alpha_log2 = read_alpha(r, t);
  if (const auto t = v["reserved"]) q.reserved_bytes = read_threshold(r, t, "reserved");
  if (const auto e = v["ecn"]) read_ecn(r, e, q);
  if (const auto d = v["dcqcn"]) read_dcqcn(r, d, q);
  read_ets(r, v, q);
  if (q.xon_bytes && q.xoff_bytes && q.xon_bytes > q.xoff_bytes)
    r.fail(v["xon"], fmt::format("xon ({} bytes) is above xoff ({} bytes)", q.xon_bytes, q.xoff_bytes),
           "XON must be at or below XOFF, or the port would resume a sender it is still full for");
  if (q.xon_bytes && !q.xoff_bytes)
    r.fail(v["xon"], "xon without xoff", "give xoff too (xon alone is relative to a computed xoff)");
  return q;
}

void check_switch_buffers(const Reader& r, const Fabric& f, const std::vector<Pos>& buffer_pos) {
  const EthQos& q = f.eth_qos;
  const unsigned lossless = unsigned(std::popcount(q.pfc));
  for (std::size_t i = 0; i < f.switches.size(); ++i) {
    const Switch& s = f.switches[i];
    if (!s.buffer_bytes && q.buffer_alpha_log2 != EthQos::kStaticBuffer)
      r.fail(buffer_pos[i],
             fmt::format("switch '{}' has no buffer size, which qos buffer_alpha needs (alpha is a share of "
                         "the free shared buffer)", s.name),
             "give every switch of the fabric a buffer, e.g. buffer: 16MiB, or set buffer_alpha: off");
    if (!s.buffer_bytes) continue;
    if (q.xoff_bytes > s.buffer_bytes)
      r.fail(buffer_pos[i],
             fmt::format("switch '{}' has a {} byte buffer, less than the qos xoff threshold of {} bytes", s.name,
                         s.buffer_bytes, q.xoff_bytes),
             "make the buffer larger or xoff smaller");
    uint64_t need = 0;
    unsigned ports = 0;
    for (const Link& l : f.links)
      for (const Endpoint* e : {&l.a, &l.b})
        if (e->is_switch && e->node == s.name) {
          const uint32_t frame = eth_max_frame(l.mtu);
          const uint64_t h = q.headroom_bytes ? q.headroom_bytes
                                              : pfc_headroom({l.rate_bps, l.delay_ns, frame, frame,
                                                              q.pfc_response_ns, 0}).total;
          need += h * lossless + uint64_t(q.reserved_bytes) * 8;
          ++ports;
        }
    if (need > s.buffer_bytes)
      r.fail(buffer_pos[i],
             fmt::format("switch '{}': the PFC headroom of its {} linked ports ({} lossless priorit{} each){} "
                         "needs {} bytes, more than its {} byte buffer",
                         s.name, ports, lossless, lossless == 1 ? "y" : "ies",
                         q.reserved_bytes ? fmt::format(" and 8 reserved parts of {} bytes per port", q.reserved_bytes)
                                          : std::string(),
                         need, s.buffer_bytes),
             "make the buffer larger, or shorten the links' delay, or set qos headroom smaller "
             "(which allows drops under load)");
  }
}

}  // namespace vf::config::detail
