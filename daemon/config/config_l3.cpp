// The Ethernet L3 keys of a fabric: a switch's `router` (routed ports, a
// gateway, static routes), a host's prefix, and the rules that tie them to
// the links: routed ports face routed ports, one gateway per bridged domain,
// hosts inside their gateway's subnet.
#include <fmt/format.h>

#include <map>
#include <numeric>
#include <set>

#include "daemon/config/config_detail.hpp"
#include "daemon/config/units.hpp"

namespace vf::config::detail {
namespace {

struct Prefix {
  uint32_t ip = 0;
  uint8_t len = 0;
};

constexpr std::size_t kMaxEcmpMembers = 64;  // dp::Ipv4Routes::kMaxHops
constexpr std::size_t kMaxStaticRoutes = 4095;  // dp::Ipv4Routes::kMaxRoutes, less the connected route

// "A.B.C.D/LEN" with LEN in min..max; nullopt when malformed.
std::optional<Prefix> parse_prefix(std::string_view t, unsigned min, unsigned max) {
  const auto slash = t.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto ip = addr::parse_ipv4(t.substr(0, slash));
  const auto len = units::parse_uint(t.substr(slash + 1), 32);
  if (!ip || !len || *len < min || *len > max) return std::nullopt;
  return Prefix{*ip, uint8_t(*len)};
}

uint32_t read_port(const Reader& r, const YAML::Node& v, const Switch& s, std::string_view what) {
  const std::string t = r.scalar(v, "port", "routed_ports: [7, 8]");
  const auto p = units::parse_uint(t, kMaxSwitchPorts);
  if (!p || *p == 0 || *p > s.ports)
    r.fail(v, fmt::format("port {} in {} is not a port of switch '{}'", quote(t), what, s.name),
           fmt::format("use ports from 1 to {}", s.ports));
  return uint32_t(*p);
}

void read_gateway(const Reader& r, const YAML::Node& v, Switch::Router& rt, const std::string& what) {
  const std::string t = r.scalar(v, "gateway", "gateway: 198.18.0.1/26");
  const auto g = parse_prefix(t, 1, 30);
  if (!g)
    r.fail(v, fmt::format("gateway {} of {} is not an address with a prefix length", quote(t), what),
           "write the router's address on its hosts' subnet, e.g. 198.18.0.1/26 (prefix 1 to 30)");
  const uint32_t host = g->ip & ~addr::ipv4_mask(g->len);
  if (host == 0 || host == ~addr::ipv4_mask(g->len))
    r.fail(v, fmt::format("gateway {} of {} is its subnet's network or broadcast address", t, what),
           fmt::format("pick a host address of {}, e.g. {}", addr::format_prefix(g->ip & addr::ipv4_mask(g->len), g->len),
                       addr::format_ipv4((g->ip & addr::ipv4_mask(g->len)) + 1)));
  if (std::string why = addr::ipv4_unusable_reason(g->ip); !why.empty())
    r.fail(v, fmt::format("gateway {} of {} cannot be a router address: {}", t, what, why),
           "use a unicast address, e.g. from 198.18.0.0/24 or 10.0.0.0/8");
  rt.gateway = g->ip;
  rt.prefix_len = g->len;
}

void read_routes(const Reader& r, const YAML::Node& v, const Switch& s, Switch::Router& rt,
                 const std::string& what) {
  r.expect_seq(v, what + " routes", "routes: [{dst: 198.18.0.64/26, via: [7, 8]}]");
  std::vector<Switch::StaticRoute> routes;
  std::set<std::pair<uint32_t, uint8_t>> seen;
  for (const auto& e : v) {
    const std::string ew = fmt::format("route {} of {}", routes.size() + 1, what);
    r.expect_map(e, ew, {"dst", "via"});
    const auto d = r.required(e, "dst", ew, "dst: 198.18.0.64/26");
    const std::string dt = r.scalar(d, "dst", "dst: 198.18.0.64/26");
    const auto p = parse_prefix(dt, 0, 32);
    if (!p) r.fail(d, fmt::format("dst {} of {} is not a prefix", quote(dt), ew), "write A.B.C.D/LEN, e.g. 198.18.0.64/26");
    if (p->ip & ~addr::ipv4_mask(p->len))
      r.fail(d, fmt::format("dst {} of {} has host bits set", dt, ew),
             fmt::format("write the network address: {}", addr::format_prefix(p->ip & addr::ipv4_mask(p->len), p->len)));
    if (rt.gateway && p->len == rt.prefix_len && p->ip == (rt.gateway & addr::ipv4_mask(rt.prefix_len)))
      r.fail(d, fmt::format("{} of {} is the gateway's own subnet", dt, ew),
             "remove it: the gateway's subnet is a connected route");
    if (!seen.emplace(p->ip, p->len).second)
      r.fail(d, fmt::format("{} is routed twice by {}", dt, what), "give each prefix one route (one ECMP group)");
    Switch::StaticRoute sr{p->ip, p->len, {}};
    const auto via = r.required(e, "via", ew, "via: [7, 8]");
    r.expect_seq(via, ew + " via", "via: [7, 8]");
    for (const auto& pv : via) {
      const uint32_t port = read_port(r, pv, s, ew + " via");
      if (std::find(rt.routed_ports.begin(), rt.routed_ports.end(), port) == rt.routed_ports.end())
        r.fail(pv, fmt::format("the ECMP group of {} names port {}, which is not an L3 (routed) port of '{}'", ew,
                               port, s.name),
               "add the port to routed_ports, or route via routed ports only");
      if (std::find(sr.via.begin(), sr.via.end(), port) != sr.via.end())
        r.fail(pv, fmt::format("port {} is twice in the ECMP group of {}", port, ew), "list each port once");
      sr.via.push_back(port);
    }
    if (sr.via.empty()) r.fail(via, fmt::format("{} has an empty ECMP group", ew), "list at least one routed port");
    if (sr.via.size() > kMaxEcmpMembers)
      r.fail(via, fmt::format("the ECMP group of {} has {} members", ew, sr.via.size()),
             fmt::format("a group holds at most {} next hops", kMaxEcmpMembers));
    routes.push_back(std::move(sr));
    if (routes.size() > kMaxStaticRoutes)
      r.fail(e, fmt::format("{} has more than {} static routes", what, kMaxStaticRoutes),
             "aggregate prefixes, or leave routes out and let fabricd compute them");
  }
  rt.routes = std::move(routes);
}

const Switch::Router* router_of(const Fabric& f, const Endpoint& e) {
  if (!e.is_switch) return nullptr;
  const Switch* s = f.find_switch(e.node);
  return s && s->router ? &*s->router : nullptr;
}

}  // namespace

void read_switch_router(const Reader& r, const YAML::Node& v, Switch& s) {
  const std::string what = fmt::format("switch '{}' router", s.name);
  r.expect_map(v, what, {"gateway", "vlan", "routed_ports", "routes"});
  Switch::Router rt;
  if (const auto g = v["gateway"]) read_gateway(r, g, rt, what);
  if (const auto vl = v["vlan"]) {
    const std::string t = r.scalar(vl, "vlan", "vlan: 10");
    const auto n = units::parse_uint(t, 4095);
    if (!n || *n == 0 || *n == 4095) r.fail(vl, fmt::format("vlan {} of {} is not a VLAN ID", t, what), "use 1 to 4094");
    if (!rt.gateway) r.fail(vl, fmt::format("{} has a vlan but no gateway", what), "add gateway: A.B.C.D/LEN, or remove vlan");
    rt.vlan = uint16_t(*n);
  }
  if (const auto rp = v["routed_ports"]) {
    r.expect_seq(rp, what + " routed_ports", "routed_ports: [7, 8]");
    for (const auto& pv : rp) {
      const uint32_t port = read_port(r, pv, s, what + " routed_ports");
      if (std::find(rt.routed_ports.begin(), rt.routed_ports.end(), port) != rt.routed_ports.end())
        r.fail(pv, fmt::format("port {} is twice in {} routed_ports", port, what), "list each port once");
      rt.routed_ports.push_back(port);
    }
    // Computed routes make every equal-cost routed link an ECMP member.
    if (rt.routed_ports.size() > kMaxEcmpMembers)
      r.fail(rp, fmt::format("{} has {} routed ports; an ECMP group holds at most {}", what, rt.routed_ports.size(),
                             kMaxEcmpMembers),
             fmt::format("route through at most {} ports", kMaxEcmpMembers));
  }
  if (const auto ro = v["routes"]) read_routes(r, ro, s, rt, what);
  if (!rt.gateway && rt.routed_ports.empty())
    r.fail(v, fmt::format("{} has neither a gateway nor routed ports", what),
           "give it routed_ports (links to other routers) and/or a gateway for its hosts");
  s.router = std::move(rt);
}

bool routed_end(const Fabric& f, const Endpoint& e) {
  const Switch::Router* rt = router_of(f, e);
  return rt && std::find(rt->routed_ports.begin(), rt->routed_ports.end(), e.port) != rt->routed_ports.end();
}

void check_l3(const Reader& r, Fabric& f, const std::vector<Pos>& link_pos, const std::vector<Pos>& switch_pos,
              const std::vector<Pos>& hca_pos) {
  // Routed ports face routed ports of another switch.
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    const Link& l = f.links[i];
    const bool a = routed_end(f, l.a), b = routed_end(f, l.b);
    if (a == b) continue;
    const Endpoint& routed = a ? l.a : l.b;
    const Endpoint& other = a ? l.b : l.a;
    r.fail(link_pos.at(i),
           fmt::format("link {} joins routed port {} to {}, which {}", i + 1, routed.text(), other.text(),
                       other.is_switch ? "bridges" : "is a host"),
           other.is_switch ? fmt::format("list port {} in {}'s router routed_ports too, or make both ends bridged",
                                         other.port, other.node)
                           : "attach hosts to bridged ports; the router reaches them through its gateway");
  }
  // Bridged domains: switches joined by bridged links.
  std::vector<std::size_t> up(f.switches.size());
  std::iota(up.begin(), up.end(), 0);
  auto root = [&](std::size_t i) {
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
  };
  auto index = [&](const std::string& n) { return std::size_t(f.find_switch(n) - f.switches.data()); };
  for (const Link& l : f.links)
    if (l.a.is_switch && l.b.is_switch && !routed_end(f, l.a)) up[root(index(l.a.node))] = root(index(l.b.node));
  // One gateway per domain, and no two gateway subnets overlapping.
  std::map<std::size_t, std::size_t> gateway_of;  // domain root -> switch
  for (std::size_t i = 0; i < f.switches.size(); ++i) {
    const auto& rt = f.switches[i].router;
    if (!rt || !rt->gateway) continue;
    if (const auto [it, fresh] = gateway_of.emplace(root(i), i); !fresh)
      r.fail(switch_pos.at(i),
             fmt::format("switches '{}' and '{}' both have a gateway in one bridged domain", f.switches[it->second].name,
                         f.switches[i].name),
             "give each bridged domain one router gateway (or join the switches with routed ports)");
    for (std::size_t j = 0; j < i; ++j) {
      const auto& o = f.switches[j].router;
      if (!o || !o->gateway) continue;
      const uint32_t m = addr::ipv4_mask(std::min(rt->prefix_len, o->prefix_len));
      if ((rt->gateway & m) == (o->gateway & m))
        r.fail(switch_pos.at(i),
               fmt::format("the gateway subnet {} of '{}' overlaps {} of '{}'",
                           addr::format_prefix(rt->gateway & addr::ipv4_mask(rt->prefix_len), rt->prefix_len), f.switches[i].name,
                           addr::format_prefix(o->gateway & addr::ipv4_mask(o->prefix_len), o->prefix_len), f.switches[j].name),
               "give every routed subnet its own prefix");
    }
  }
  // Hosts take their gateway (and, unless given, prefix) from their domain's.
  for (std::size_t i = 0; i < f.hcas.size(); ++i) {
    Hca& h = f.hcas[i];
    const Link* l = f.link_of(h.name);
    if (!l || !h.ipv4) continue;
    const Endpoint& sw = l->a.is_switch ? l->a : l->b;
    if (!sw.is_switch) continue;
    const auto g = gateway_of.find(root(index(sw.node)));
    if (g == gateway_of.end()) continue;
    const Switch& gs = f.switches[g->second];
    const Switch::Router& rt = *gs.router;
    if ((h.vlan ? h.vlan : 1) != rt.vlan) continue;  // another VLAN: the gateway does not serve it
    const uint32_t m = addr::ipv4_mask(rt.prefix_len);
    const std::string subnet = addr::format_prefix(rt.gateway & m, rt.prefix_len);
    if ((*h.ipv4 & m) != (rt.gateway & m))
      r.fail(hca_pos.at(i), fmt::format("ip {} of HCA '{}' is outside {}'s gateway subnet {}",
                                        addr::format_ipv4(*h.ipv4), h.name, gs.name, subnet),
             fmt::format("give it an address in {} (its bridged domain's subnet)", subnet));
    if (*h.ipv4 == rt.gateway)
      r.fail(hca_pos.at(i), fmt::format("ip {} of HCA '{}' is {}'s gateway address", addr::format_ipv4(*h.ipv4), h.name, gs.name),
             "give the host another address of " + subnet);
    if (h.prefix_len && h.prefix_len != rt.prefix_len)
      r.fail(hca_pos.at(i), fmt::format("HCA '{}' has prefix /{}, its gateway's subnet is {}", h.name, h.prefix_len, subnet),
             fmt::format("write /{} or leave the prefix out", rt.prefix_len));
    h.prefix_len = rt.prefix_len;
    h.gateway = rt.gateway;
  }
}

}  // namespace vf::config::detail
