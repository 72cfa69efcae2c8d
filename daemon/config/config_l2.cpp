// The Ethernet L2 keys of a fabric: a switch's FDB ageing time and static
// entries, a host's VLAN, and the rule that a bridged domain is a tree.
#include <fmt/format.h>

#include <numeric>
#include <set>

#include "daemon/config/config_detail.hpp"
#include "daemon/config/units.hpp"

namespace vf::config::detail {
namespace {

constexpr uint64_t kSecond = 1'000'000'000ULL;
constexpr uint64_t kMaxAgeingNs = 1'000'000 * kSecond;  // Linux accepts up to ~1e6 s

uint16_t read_vid(const Reader& r, const YAML::Node& v, std::string_view what) {
  const std::string t = r.scalar(v, "vlan", "vlan: 10");
  const auto n = units::parse_uint(t, 4095);
  if (!n || *n == 0 || *n == 4095)
    r.fail(v, fmt::format("vlan {} of {} is not a VLAN ID", t, what),
           "use 1 to 4094 (0 is a priority tag, 4095 is reserved)");
  return uint16_t(*n);
}

}  // namespace

void read_switch_l2(const Reader& r, const YAML::Node& n, Switch& s) {
  const std::string what = fmt::format("switch '{}'", s.name);
  if (const auto v = n["ageing"]) {
    const std::string t = r.scalar(v, "ageing", "ageing: 300s");
    const auto d = units::parse_delay_ns(t, kMaxAgeingNs);
    if (!d || *d < kSecond)
      r.fail(v, fmt::format("ageing {} of {} is not an FDB ageing time", t, what),
             "write a time from 1s to 1000000s, e.g. 300s (the Linux bridge default)");
    s.ageing_ns = *d;
  }
  const auto fdb = n["fdb"];
  if (!fdb) return;
  r.expect_seq(fdb, what + " fdb", "fdb: [{mac: 02:00:00:00:00:01, port: 3}]");
  std::set<std::pair<uint16_t, addr::Mac>> seen;
  for (const auto& e : fdb) {
    const std::string ew = fmt::format("an fdb entry of {}", what);
    r.expect_map(e, ew, {"mac", "port", "vlan"});
    Switch::StaticFdb entry;
    const auto m = r.required(e, "mac", ew, "mac: 02:00:00:00:00:01");
    const std::string mt = r.scalar(m, "mac", "mac: 02:00:00:00:00:01");
    const auto mac = addr::parse_mac(mt);
    if (!mac || ((*mac)[0] & 1) || *mac == addr::Mac{})
      r.fail(m, fmt::format("mac {} of {} is not a station address", mt, ew),
             "write a unicast MAC as six hex pairs, e.g. 02:00:00:00:00:01");
    entry.mac = *mac;
    const auto p = r.required(e, "port", ew, "port: 3");
    const std::string pt = r.scalar(p, "port", "port: 3");
    const auto port = units::parse_uint(pt, kMaxSwitchPorts);
    if (!port || *port == 0 || *port > s.ports)
      r.fail(p, fmt::format("port {} of {} is not one of its ports", pt, ew),
             fmt::format("use a port from 1 to {}", s.ports));
    entry.port = uint32_t(*port);
    if (const auto v = e["vlan"]) entry.vlan = read_vid(r, v, ew);
    if (!seen.emplace(entry.vlan, entry.mac).second)
      r.fail(e, fmt::format("{} is in {}'s fdb twice for VLAN {}", mt, what, entry.vlan),
             "give each (MAC, VLAN) one port");
    s.fdb.push_back(entry);
  }
}

void read_hca_vlan(const Reader& r, const YAML::Node& v, Hca& h) {
  h.vlan = read_vid(r, v, fmt::format("HCA '{}'", h.name));
}

void check_l2_loops(const Reader& r, const Fabric& f, const std::vector<Pos>& link_pos) {
  std::vector<std::size_t> up(f.switches.size());
  std::iota(up.begin(), up.end(), 0);
  auto root = [&](std::size_t i) {
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
  };
  auto index = [&](const Endpoint& e) { return std::size_t(f.find_switch(e.node) - f.switches.data()); };
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    const Link& l = f.links[i];
    if (!l.a.is_switch || !l.b.is_switch || routed_end(f, l.a)) continue;  // routers split L2 domains
    const std::size_t a = root(index(l.a)), b = root(index(l.b));
    if (a != b) {
      up[a] = b;
      continue;
    }
    r.fail(link_pos.at(i),
           fmt::format("link {} ({} - {}) closes a loop among the Ethernet switches of fabric '{}'", i + 1,
                       l.a.text(), l.b.text(), f.name),
           "a bridged Ethernet domain must be a tree (nothing here runs a spanning tree): remove this link");
  }
}

}  // namespace vf::config::detail
