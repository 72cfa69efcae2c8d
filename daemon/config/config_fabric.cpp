// One fabric: its switches, HCAs and links, and every check that needs the
// whole fabric (endpoints exist, ports are in range and cabled once, every HCA
// has exactly one link).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <map>

#include "daemon/config/config_detail.hpp"
#include "daemon/config/units.hpp"

namespace vf::config::detail {
namespace {

constexpr uint64_t kMaxLatencyNs = 1'000'000;       // 1 ms per switch hop
constexpr uint64_t kMaxSwitchBufferBytes = 1ULL << 30;

struct SpeedName {
  const char* name;
  IbSpeed speed;
};
constexpr std::array<SpeedName, 8> kIbSpeeds{{{"SDR", IbSpeed::SDR}, {"DDR", IbSpeed::DDR},
                                              {"QDR", IbSpeed::QDR}, {"FDR10", IbSpeed::FDR10},
                                              {"FDR", IbSpeed::FDR}, {"EDR", IbSpeed::EDR},
                                              {"HDR", IbSpeed::HDR}, {"NDR", IbSpeed::NDR}}};
constexpr std::array<uint32_t, 8> kEthGbps{1, 10, 25, 40, 50, 100, 200, 400};

// Per-lane data rate after line coding: 8b/10b up to QDR, 64b/66b for
// FDR10..EDR, PAM4 with RS-FEC (quoted as the data rate) for HDR/NDR.
uint64_t lane_bps(IbSpeed s) {
  switch (s) {
    case IbSpeed::SDR: return 2'000'000'000ULL;     // 2.5 Gbaud x 8/10
    case IbSpeed::DDR: return 4'000'000'000ULL;
    case IbSpeed::QDR: return 8'000'000'000ULL;
    case IbSpeed::FDR10: return 10'000'000'000ULL;  // 10.3125 Gbaud x 64/66
    case IbSpeed::FDR: return 13'636'363'636ULL;    // 14.0625 Gbaud x 64/66
    case IbSpeed::EDR: return 25'000'000'000ULL;    // 25.78125 Gbaud x 64/66
    case IbSpeed::HDR: return 50'000'000'000ULL;
    case IbSpeed::NDR: return 100'000'000'000ULL;
  }
  return 0;
}

// What mlx5 reports in ibv_port_attr for a RoCE port of this Ethernet speed
// (drivers/infiniband/hw/mlx5/main.c, translate_eth_*_proto_oper), so the
// familiar "100 Gb/sec (4X EDR)" shows up in ibv_devinfo and sysfs.
std::pair<IbWidth, IbSpeed> mlx5_eth_encoding(uint32_t gbps) {
  switch (gbps) {
    case 1: return {IbWidth::X1, IbSpeed::SDR};
    case 10: return {IbWidth::X1, IbSpeed::QDR};
    case 25: return {IbWidth::X1, IbSpeed::EDR};
    case 40: return {IbWidth::X4, IbSpeed::QDR};
    case 50: return {IbWidth::X1, IbSpeed::HDR};   // 50GBASE-CR2 and 50GAUI-1 both map here
    case 100: return {IbWidth::X4, IbSpeed::EDR};  // 100GBASE-CR4
    case 200: return {IbWidth::X4, IbSpeed::HDR};  // 200GAUI-4
    case 400: return {IbWidth::X4, IbSpeed::NDR};  // 400GAUI-4
    default: return {IbWidth::X4, IbSpeed::EDR};
  }
}

struct NodeRef {
  bool is_switch;
  std::size_t idx;
};

class FabricReader {
 public:
  FabricReader(const Reader& r, Registry& reg, FabricExtras& ex) : r_(r), reg_(reg), ex_(ex) {}

  Fabric read(const YAML::Node& n, std::size_t fabric_no) {
    std::string what = fmt::format("fabric {}", fabric_no + 1);
    r_.expect_map(n, what, {"name", "link_layer", "subnet_prefix", "sm", "qos", "adaptive_routing", "topology", "switches",
                            "hcas", "links"});
    f_.name = read_name(r_, r_.required(n, "name", what, "name: ib"), "fabric", reg_);
    what_ = fmt::format("fabric '{}'", f_.name);
    read_link_layer(r_.required(n, "link_layer", what_, "link_layer: infiniband"));
    if (const auto v = n["subnet_prefix"]) read_subnet_prefix(n, v);

    // Generated nodes have no position in the file: a problem with them (a
    // name or address another fabric took, a limit) points at `topology`.
    const YAML::Node topology = n["topology"];
    try {
      read_body(n, topology);
    } catch (const ConfigError& e) {
      if (!topology || e.line() != 0) throw;
      r_.fail(topology, fmt::format("in the topology generated for {}: {}", what_, e.problem()), e.fix());
    }
    return std::move(f_);
  }

 private:
  void read_body(const YAML::Node& n, const YAML::Node& topology) {
    if (topology)
      read_generated(n, topology);
    else
      read_nodes(n["switches"], n["hcas"], n["links"]);

    for (std::size_t i = 0; i < f_.hcas.size(); ++i)
      if (!hca_link_line_.count(f_.hcas[i].name))
        r_.fail(hca_pos_[i], fmt::format("HCA '{}' is not connected to anything", f_.hcas[i].name),
                fmt::format("add a link to {}'s links, e.g. {{a: {}, b: <switch>/<port>}}", what_,
                            f_.hcas[i].name));
    check_connected(r_, f_, switch_pos_, hca_pos_);
    if (!ib()) {
      check_l3(r_, f_, link_pos_, switch_pos_, hca_pos_);
      check_l2_loops(r_, f_, link_pos_);
    }
    if (const auto v = n["sm"]) read_sm(n, v);
    // A generated fat tree's roots are its top level, not every switch
    // without hosts (which would include a 3-level tree's spines).
    if (!generated_roots_.empty() && ib() && (!n["sm"] || (f_.sm.routing == Routing::UpDown && f_.sm.roots.empty()))) {
      f_.sm.routing = Routing::UpDown;
      f_.sm.roots = generated_roots_;
    }
    if (const auto v = n["adaptive_routing"]) read_adaptive_routing(r_, v, f_, what_);
    if (const auto v = n["qos"])
      read_qos(v);
    else if (!ib())
      check_switch_buffers(r_, f_, switch_buffer_pos_);
  }

  bool ib() const { return f_.link_layer == LinkLayer::Infiniband; }
  const char* other_ll() const { return ib() ? "ethernet" : "infiniband"; }

  // Keys valid only for the other link layer get a targeted message rather
  // than "unknown key".
  void only_for(const YAML::Node& map, std::string_view key, LinkLayer ll, std::string_view why) {
    if (map[std::string(key)].IsDefined() && f_.link_layer != ll)
      r_.fail(r_.key_pos(map, key),
              fmt::format("'{}' applies to {} fabrics, and {} is {}", key, to_string(ll), what_,
                          to_string(f_.link_layer)),
              fmt::format("remove it ({})", why));
  }

  void read_nodes(const YAML::Node& sw, const YAML::Node& hc, const YAML::Node& li) {
    r_.expect_seq(sw, what_ + " switches", "switches: [{name: sw0, ports: 8}]");
    if (sw.IsSequence())
      for (const auto& s : sw) read_switch(s);
    r_.expect_seq(hc, what_ + " hcas", "hcas: [{name: vib0}]");
    if (hc.IsSequence())
      for (const auto& h : hc) read_hca(h);
    r_.expect_seq(li, what_ + " links", "links: [{a: vib0, b: sw0/1, ...}]");
    if (li.IsSequence())
      for (const auto& l : li) read_link(l);
  }

  void read_generated(const YAML::Node& n, const YAML::Node& t) {
    for (const char* key : {"switches", "hcas", "links"})
      if (n[key])
        r_.fail(r_.key_pos(n, key), fmt::format("{} has both a topology and {}", what_, key),
                "generate the fabric with topology, or write its switches, hcas and links by hand");
    GeneratedLists g = read_topology(r_, t, f_.link_layer, what_);
    read_nodes(g.switches, g.hcas, g.links);
    generated_roots_ = std::move(g.roots);
    f_.generated = std::move(g.summary);
  }

  void read_link_layer(const YAML::Node& v) {
    std::string s = units::lower(r_.scalar(v, "link_layer", "link_layer: infiniband"));
    if (s == "infiniband") f_.link_layer = LinkLayer::Infiniband;
    else if (s == "ethernet") f_.link_layer = LinkLayer::Ethernet;
    else {
      std::string hint = units::did_you_mean(s, {"infiniband", "ethernet"});
      r_.fail(v, fmt::format("unknown link_layer {}", quote(v.Scalar())),
              hint.empty() ? "use infiniband or ethernet (RoCEv2)" : fmt::format("did you mean '{}'?", hint));
    }
  }

  void read_sm(const YAML::Node& map, const YAML::Node& v) {
    only_for(map, "sm", LinkLayer::Infiniband, "an Ethernet fabric has no subnet manager: its switches learn");
    const std::string what = what_ + " sm";
    r_.expect_map(v, what, {"routing", "roots"});
    if (const auto r = v["routing"]) {
      const std::string t = units::lower(r_.scalar(r, "routing", "routing: updn"));
      if (t == "minhop") f_.sm.routing = Routing::MinHop;
      else if (t == "updn") f_.sm.routing = Routing::UpDown;
      else {
        const std::string hint = units::did_you_mean(t, {"minhop", "updn"});
        r_.fail(r, fmt::format("unknown routing {}", quote(r.Scalar())),
                hint.empty() ? "use minhop or updn" : fmt::format("did you mean '{}'?", hint));
      }
    }
    if (const auto roots = v["roots"]) {
      r_.expect_seq(roots, what + " roots", "roots: [spine0, spine1]");
      if (f_.sm.routing != Routing::UpDown)
        r_.fail(roots, "roots are for routing: updn", "add routing: updn, or remove roots");
      for (const auto& e : roots) {
        const std::string name = r_.scalar(e, "root", "roots: [spine0]");
        if (!f_.find_switch(name)) {
          std::vector<std::string> names;
          for (const auto& s : f_.switches) names.push_back(s.name);
          const std::string hint = units::did_you_mean(name, names);
          r_.fail(e, fmt::format("root '{}' is not a switch of {}", name, what_),
                  hint.empty() ? "name one of its switches" : fmt::format("did you mean '{}'?", hint));
        }
        f_.sm.roots.push_back(name);
      }
    }
  }

  void read_qos(const YAML::Node& v) {
    const std::string what = what_ + " qos";
    if (!ib()) {
      f_.eth_qos = read_eth_qos(r_, v, what);
      check_switch_buffers(r_, f_, switch_buffer_pos_);
      return;
    }
    r_.expect_map(v, what, {"data_vls", "sl2vl", "vlarb_high", "vlarb_low", "high_limit"});
    Qos& q = f_.qos;
    if (const auto d = v["data_vls"]) {
      const auto n = units::parse_uint(r_.scalar(d, "data_vls", "data_vls: 4"), 8);
      if (!n || (*n != 1 && *n != 2 && *n != 4 && *n != 8))
        r_.fail(d, fmt::format("data_vls {} is not an operational VL count", quote(d.Scalar())),
                "use 1, 2, 4 or 8 (VL0..VL7; VL15 is always there for management)");
      q.data_vls = uint8_t(*n);
    }
    if (const auto t = v["sl2vl"]) {
      r_.expect_seq(t, what + " sl2vl", "sl2vl: [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]");
      if (t.size() != kNumSls)
        r_.fail(t, fmt::format("sl2vl has {} entries", t.size()), "give one VL for each of the 16 SLs, SL0 first");
      std::array<uint8_t, kNumSls> m{};
      for (std::size_t sl = 0; sl < kNumSls; ++sl) {
        const auto vl = units::parse_uint(r_.scalar(t[sl], "sl2vl", "sl2vl: [0, 1, ...]"), 15);
        if (!vl || (*vl >= q.data_vls && *vl != 15))
          r_.fail(t[sl], fmt::format("SL{} maps to VL {}, which is not one of the {} data VLs", sl,
                                     quote(t[sl].Scalar()), q.data_vls),
                  fmt::format("use a VL from 0 to {} (or 15: the SL may not be used)", q.data_vls - 1));
        m[sl] = uint8_t(*vl);
      }
      q.sl2vl = m;
    }
    for (const char* key : {"vlarb_high", "vlarb_low"}) {
      const auto t = v[key];
      if (!t) continue;
      r_.expect_seq(t, what + " " + key, fmt::format("{}: [{{vl: 0, weight: 64}}]", key));
      if (t.size() > 8)
        r_.fail(t, fmt::format("{} has {} entries", key, t.size()), "use at most 8 (one per data VL)");
      VlArbTable entries;
      for (const auto& e : t) {
        r_.expect_map(e, fmt::format("an entry of {}", key), {"vl", "weight"});
        const auto vl = units::parse_uint(r_.scalar(r_.required(e, "vl", key, "vl: 0"), "vl", "vl: 0"), 15);
        const auto w = units::parse_uint(r_.scalar(r_.required(e, "weight", key, "weight: 64"), "weight", "weight: 64"), 1000);
        if (!vl || *vl >= q.data_vls)
          r_.fail(e["vl"], fmt::format("{} names VL {}, which is not one of the {} data VLs", key,
                                       quote(e["vl"].Scalar()), q.data_vls),
                  fmt::format("use a VL from 0 to {}", q.data_vls - 1));
        if (!w || *w > 255)
          r_.fail(e["weight"], fmt::format("weight {} is out of range", quote(e["weight"].Scalar())),
                  "use 0 to 255 (units of 64 bytes; 0 skips the entry)");
        entries.add({uint8_t(*vl), uint8_t(*w)});  // at most 8: checked above
      }
      (std::string_view(key) == "vlarb_high" ? q.vlarb_high : q.vlarb_low) = entries;
    }
    if (const auto h = v["high_limit"]) {
      const auto n = units::parse_uint(r_.scalar(h, "high_limit", "high_limit: 4"), 255);
      if (!n)
        r_.fail(h, fmt::format("high_limit {} is out of range", quote(h.Scalar())),
                "use 0 to 255 (4 KiB units the high table may send before a low packet; 255 = unbounded)");
      q.high_limit = uint8_t(*n);
    }
  }

  void read_subnet_prefix(const YAML::Node& map, const YAML::Node& v) {
    only_for(map, "subnet_prefix", LinkLayer::Infiniband, "RoCE GIDs come from the MAC and IP address");
    // Unquoted `fe80::` ends in ": ", which YAML reads as a nested mapping.
    if (v.IsMap())
      r_.fail(v, "subnet_prefix is not a single value (an unquoted trailing ':' starts a YAML mapping)",
              "quote it: subnet_prefix: \"fe80::\"");
    std::string s = r_.scalar(v, "subnet_prefix", "subnet_prefix: \"fe80::\"");
    std::optional<uint64_t> prefix;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
      prefix = addr::parse_guid(s);
    } else if (auto g = addr::parse_ipv6(s)) {
      uint64_t hi = 0, lo = 0;
      for (int i = 0; i < 8; ++i) {
        hi = hi << 8 | (*g)[i];
        lo = lo << 8 | (*g)[8 + i];
      }
      if (lo != 0)
        r_.fail(v, fmt::format("subnet_prefix {} sets bits in the lower 64 bits", quote(s)),
                "the lower 64 bits of a GID are the port GUID; write only the prefix, e.g. fe80::");
      prefix = hi;
    }
    if (!prefix)
      r_.fail(v, fmt::format("subnet_prefix {} is not an IPv6 prefix", quote(s)),
              "write it like fe80:: or 0xfe80000000000000");
    f_.subnet_prefix = *prefix;
  }

  std::optional<uint64_t> read_guid(const YAML::Node& v, std::string_view owner) {
    std::string s = r_.scalar(v, "node_guid", "node_guid: 0x0002c90300a1b2c3");
    auto g = addr::parse_guid(s);
    if (!g)
      r_.fail(v, fmt::format("node_guid {} of '{}' is not a GUID", quote(s), owner),
              "write 16 hex digits, e.g. 0x0002c90300a1b2c3 or 0002:c903:00a1:b2c3");
    if (*g == 0 || *g == ~0ULL)
      r_.fail(v, fmt::format("node_guid of '{}' must not be all zeros or all ones", owner),
              "pick another GUID or leave node_guid out to derive one");
    if (auto prev = reg_.guids.find(*g); prev != reg_.guids.end())
      r_.fail(v, fmt::format("node_guid {} of '{}' is already used by '{}' (line {})", s, owner,
                             prev->second.first, prev->second.second.line),
              "GUIDs must be unique; change one or leave node_guid out to derive one");
    reg_.guids.emplace(*g, std::make_pair(std::string(owner), pos_of(v)));
    return g;
  }

  uint32_t read_vl_buffer(const YAML::Node& v, const std::string& what) const {
    std::string t = r_.scalar(v, "vl_buffer", "vl_buffer: 32KiB");
    auto b = units::parse_size_bytes(t, kMaxVlBufferBytes);
    if (!b || *b == 0)
      r_.fail(v, fmt::format("vl_buffer {} of {} is not a buffer size", quote(t), what),
              "write a size with a unit, at most 16MiB, e.g. 32KiB or 64kB");
    return static_cast<uint32_t>(*b);
  }

  void read_switch(const YAML::Node& n) {
    std::string what = fmt::format("switch {} of {}", f_.switches.size() + 1, what_);
    r_.expect_map(n, what, {"name", "ports", "latency", "node_guid", "vl_buffer", "buffer", "ageing", "fdb", "router"});
    only_for(n, "vl_buffer", LinkLayer::Infiniband, "an Ethernet switch has one shared buffer: use buffer");
    only_for(n, "ageing", LinkLayer::Ethernet, "IB switches forward by the SM's LFT; nothing is learned");
    only_for(n, "fdb", LinkLayer::Ethernet, "IB switches forward by the SM's LFT");
    only_for(n, "router", LinkLayer::Ethernet, "IB subnets are joined by the SM's routing, not IP routers");
    only_for(n, "buffer", LinkLayer::Ethernet, "IB buffers are per VL and port: use vl_buffer");
    Switch s;
    YAML::Node name = r_.required(n, "name", what, "name: sw0");
    s.name = read_name(r_, name, "switch", reg_);
    what = fmt::format("switch '{}'", s.name);
    if (++reg_.switch_count > reg_.limits.max_switches)
      r_.fail(name, fmt::format("more than {} switches", reg_.limits.max_switches), "split the lab into smaller configs");

    YAML::Node ports = r_.required(n, "ports", what, "ports: 8");
    auto p = units::parse_uint(r_.scalar(ports, "ports", "ports: 8"), kMaxSwitchPorts);
    if (!p || *p == 0)
      r_.fail(ports, fmt::format("ports {} of {} is not a port count", quote(ports.Scalar()), what),
              fmt::format("use a whole number from 1 to {}", kMaxSwitchPorts));
    s.ports = static_cast<uint32_t>(*p);

    // Defaults model current cut-through switch ASICs: ~100 ns for IB
    // (Quantum class), ~300 ns for Ethernet (Spectrum class).
    s.latency_ns = ib() ? 100 : 300;
    if (const auto v = n["latency"]) {
      std::string t = r_.scalar(v, "latency", "latency: 100ns");
      auto d = units::parse_delay_ns(t, kMaxLatencyNs);
      if (!d)
        r_.fail(v, fmt::format("latency {} of {} is not a delay", quote(t), what),
                "write a whole number of nanoseconds with a unit, up to 1ms, e.g. 100ns or 0.3us");
      s.latency_ns = *d;
    }
    switch_buffer_pos_.push_back(pos_of(name));
    if (const auto v = n["buffer"]) {
      const std::string t = r_.scalar(v, "buffer", "buffer: 16MiB");
      const auto b = units::parse_size_bytes(t, kMaxSwitchBufferBytes);
      if (!b || *b == 0)
        r_.fail(v, fmt::format("buffer {} of {} is not a buffer size", quote(t), what),
                "write a size with a unit, at most 1GiB, e.g. 16MiB");
      s.buffer_bytes = *b;
      switch_buffer_pos_.back() = pos_of(v);
    }
    switch_vlbuf_pos_.push_back(pos_of(name));
    if (const auto v = n["vl_buffer"]) {
      s.vl_buffer_bytes = read_vl_buffer(v, what);
      switch_vlbuf_pos_.back() = pos_of(v);
    }
    bool guid_given = false;
    if (const auto v = n["node_guid"]) {
      s.node_guid = *read_guid(v, s.name);
      guid_given = true;
    }
    if (!ib()) read_switch_l2(r_, n, s);
    if (const auto v = n["router"]) read_switch_router(r_, v, s);
    ex_.switch_guid_given.push_back(guid_given);
    switch_pos_.push_back(pos_of(name));
    f_.switches.push_back(std::move(s));
  }

  void read_hca(const YAML::Node& n) {
    std::string what = fmt::format("HCA {} of {}", f_.hcas.size() + 1, what_);
    r_.expect_map(n, what, {"name", "ip", "mac", "node_guid", "vlan", "dcqcn", "rx_rate", "pkeys", "netdev"});
    Hca h;
    YAML::Node name = r_.required(n, "name", what, "name: vib0");
    h.name = read_name(r_, name, "HCA", reg_);
    if (++reg_.hca_count > reg_.limits.max_hcas)
      r_.fail(name, fmt::format("more than {} HCAs", reg_.limits.max_hcas), std::string(reg_.limits.why_hcas));
    only_for(n, "mac", LinkLayer::Ethernet, "IB ports have no MAC address");
    only_for(n, "vlan", LinkLayer::Ethernet, "IB partitions are P_Keys, not VLANs");
    if (const auto v = n["vlan"]) read_hca_vlan(r_, v, h);
    only_for(n, "pkeys", LinkLayer::Infiniband, "RoCE ports have the default P_Key 0xffff only, as mlx5's");
    if (const auto v = n["pkeys"]) read_hca_pkeys(r_, v, h);
    only_for(n, "dcqcn", LinkLayer::Ethernet, "IB has no ECN/DCQCN here: credits keep it lossless");
    if (const auto v = n["dcqcn"]) read_hca_dcqcn(r_, v, h);
    if (const auto v = n["rx_rate"]) {
      const std::string t = r_.scalar(v, "rx_rate", "rx_rate: 10Gbps");
      const auto bps = units::parse_rate_bps(t);
      if (!bps || *bps < kMinRateBps)
        r_.fail(v, fmt::format("rx_rate {} of HCA '{}' is not a rate", quote(t), h.name),
                "write a rate of at least 1Mbps with a unit, e.g. 10Gbps: how fast the host takes received "
                "frames off its NIC");
      h.rx_rate_bps = *bps;
    }

    // RoCE needs the address its GIDs are made of; on InfiniBand it is the
    // IPoIB-style address rdma_cm resolves, as a lab assigns one (optional).
    YAML::Node ipn = ib() ? n["ip"]
                          : r_.required(n, "ip", fmt::format("HCA '{}' of ethernet {}", h.name, what_), "ip: 198.18.0.1");
    if (ipn) {
      std::string t = r_.scalar(ipn, "ip", "ip: 198.18.0.1");
      if (const auto slash = t.find('/'); slash != std::string::npos) {
        const auto len = units::parse_uint(std::string_view(t).substr(slash + 1), 32);
        if (!len || *len == 0 || *len > 30)
          r_.fail(ipn, fmt::format("ip {} of HCA '{}' has a bad prefix length", quote(t), h.name),
                  "write the host's subnet as /1 to /30, e.g. 198.18.0.10/26, or leave it out");
        h.prefix_len = uint8_t(*len);
        t.resize(slash);
      }
      auto ip = addr::parse_ipv4(t);
      if (!ip)
        r_.fail(ipn, fmt::format("ip {} of HCA '{}' is not an IPv4 address", quote(t), h.name),
                "write a dotted quad such as 198.18.0.1, optionally with the subnet's prefix length (/26)");
      if (std::string why = addr::ipv4_unusable_reason(*ip); !why.empty())
        r_.fail(ipn, fmt::format("ip {} of HCA '{}' cannot be a host address: {}", t, h.name, why),
                "use a unicast address, e.g. from 198.18.0.0/24 or 10.0.0.0/8");
      if (auto prev = reg_.ipv4s.find(*ip); prev != reg_.ipv4s.end())
        r_.fail(ipn, fmt::format("ip {} of HCA '{}' is already used by '{}' (line {})", t, h.name,
                                 prev->second.first, prev->second.second.line),
                "every HCA needs its own address");
      reg_.ipv4s.emplace(*ip, std::make_pair(h.name, pos_of(ipn)));
      h.ipv4 = *ip;
    }
    if (h.ipv4 || n["netdev"]) read_hca_netdev(r_, n["netdev"], name, reg_, h);
    bool mac_given = false, guid_given = false;
    if (const auto v = n["mac"]) {
      std::string t = r_.scalar(v, "mac", "mac: 02:00:00:00:00:01");
      auto mac = addr::parse_mac(t);
      if (!mac)
        r_.fail(v, fmt::format("mac {} of HCA '{}' is not a MAC address", quote(t), h.name),
                "write six hex pairs, e.g. 02:00:00:00:00:01");
      if ((*mac)[0] & 1)
        r_.fail(v, fmt::format("mac {} of HCA '{}' is a multicast address", t, h.name),
                "the lowest bit of the first byte must be 0; e.g. 02:00:00:00:00:01");
      if (*mac == addr::Mac{})
        r_.fail(v, fmt::format("mac of HCA '{}' is all zeros", h.name), "pick a real address or leave mac out");
      if (auto prev = reg_.macs.find(*mac); prev != reg_.macs.end())
        r_.fail(v, fmt::format("mac {} of HCA '{}' is already used by '{}' (line {})", t, h.name,
                               prev->second.first, prev->second.second.line),
                "MACs must be unique; change one or leave mac out to derive one");
      reg_.macs.emplace(*mac, std::make_pair(h.name, pos_of(v)));
      h.mac = *mac;
      mac_given = true;
    }
    if (const auto v = n["node_guid"]) {
      h.node_guid = *read_guid(v, h.name);
      guid_given = true;
    }
    ex_.hca_mac_given.push_back(mac_given);
    ex_.hca_guid_given.push_back(guid_given);
    hca_pos_.push_back(pos_of(name));
    f_.hcas.push_back(std::move(h));
  }

  std::vector<std::string> node_names() const {
    std::vector<std::string> out;
    for (const auto& s : f_.switches) out.push_back(s.name);
    for (const auto& h : f_.hcas) out.push_back(h.name);
    return out;
  }

  std::pair<Endpoint, NodeRef> read_endpoint(const YAML::Node& v, std::string_view key) {
    std::string t = r_.scalar(v, std::string("link end ") + std::string(key), "a: vib0 or b: sw0/1");
    Endpoint e;
    std::string_view node = t, port_text;
    bool has_port = false;
    if (auto slash = t.find('/'); slash != std::string::npos) {
      node = std::string_view(t).substr(0, slash);
      port_text = std::string_view(t).substr(slash + 1);
      has_port = true;
    }
    e.node = std::string(node);
    NodeRef ref{};
    bool found = false;
    for (std::size_t i = 0; i < f_.switches.size() && !found; ++i)
      if (f_.switches[i].name == node) ref = {true, i}, found = true;
    for (std::size_t i = 0; i < f_.hcas.size() && !found; ++i)
      if (f_.hcas[i].name == node) ref = {false, i}, found = true;
    if (!found) {
      if (reg_.names.count(node))
        r_.fail(v, fmt::format("link end {} is not part of {}", quote(node), what_),
                "a link joins nodes of one fabric; define the node in this fabric or link it in its own");
      std::string hint = units::did_you_mean(node, node_names());
      r_.fail(v, fmt::format("link end {} names no switch or HCA of {}", quote(node), what_),
              hint.empty() ? fmt::format("define it first; nodes here: {}", fmt::join(node_names(), ", "))
                           : fmt::format("did you mean '{}'?", hint));
    }
    e.is_switch = ref.is_switch;
    if (ref.is_switch) {
      const Switch& s = f_.switches[ref.idx];
      if (!has_port)
        r_.fail(v, fmt::format("link end '{}' is a switch but names no port", s.name),
                fmt::format("write {}/<port>, port 1..{}", s.name, s.ports));
      auto p = units::parse_uint(port_text, 100000);
      if (!p)
        r_.fail(v, fmt::format("link end {}: {} is not a port number", quote(t), quote(port_text)),
                fmt::format("write {}/<port>, port 1..{}", s.name, s.ports));
      if (*p == 0 || *p > s.ports)
        r_.fail(v, fmt::format("switch '{}' has ports 1..{}; port {} does not exist", s.name, s.ports, *p),
                fmt::format("use a port in 1..{} or raise the switch's ports", s.ports));
      e.port = static_cast<uint32_t>(*p);
    } else if (has_port && port_text != "1") {
      r_.fail(v, fmt::format("HCA '{}' has a single port, 1", e.node),
              fmt::format("write {} or {}/1", e.node, e.node));
    }
    return {e, ref};
  }

  void read_link(const YAML::Node& n) {
    std::string what = fmt::format("link {} of {}", f_.links.size() + 1, what_);
    r_.expect_map(n, what, {"a", "b", "width", "speed", "rate", "delay", "mtu", "vl_buffer"});
    only_for(n, "width", LinkLayer::Infiniband, "an Ethernet link's lanes follow from its speed");
    only_for(n, "vl_buffer", LinkLayer::Infiniband,
             "an Ethernet link's buffers are the switch's buffer and the fabric's qos: xoff/xon/headroom");
    Link l;
    YAML::Node an = r_.required(n, "a", what, "a: vib0");
    YAML::Node bn = r_.required(n, "b", what, "b: sw0/1");
    auto [a, aref] = read_endpoint(an, "a");
    auto [b, bref] = read_endpoint(bn, "b");
    if (!a.is_switch && !b.is_switch)
      r_.fail(bn, fmt::format("{} joins two HCAs ('{}' and '{}')", what, a.node, b.node),
              "a link joins an HCA to a switch port, or two switch ports; connect both HCAs to a switch");
    if (a.is_switch && b.is_switch && a.node == b.node)
      r_.fail(bn, fmt::format("{} loops switch '{}' back to itself", what, a.node), "connect two different switches");
    int line = pos_of(n).line;
    for (const auto& [e, node] : {std::pair{a, an}, std::pair{b, bn}}) {
      if (e.is_switch) {
        auto key = std::make_pair(e.node, e.port);
        if (auto prev = port_used_.find(key); prev != port_used_.end())
          r_.fail(node, fmt::format("port {} is already cabled (link at line {})", e.text(), prev->second),
                  "each switch port takes one link; use a free port");
        port_used_.emplace(key, line);
      } else {
        if (auto prev = hca_link_line_.find(e.node); prev != hca_link_line_.end())
          r_.fail(node, fmt::format("HCA '{}' is already connected (link at line {})", e.node, prev->second),
                  "a vHCA has one port; remove one of the links");
        hca_link_line_.emplace(e.node, line);
      }
    }
    l.a = a;
    l.b = b;

    YAML::Node sp = r_.required(n, "speed", what, ib() ? "speed: EDR" : "speed: 100G");
    std::string st = r_.scalar(sp, "speed", ib() ? "speed: EDR" : "speed: 100G");
    if (ib()) {
      bool ok = false;
      std::vector<std::string> names;
      for (auto [nm, s] : kIbSpeeds) {
        names.emplace_back(nm);
        if (units::lower(st) == units::lower(nm)) l.speed = s, ok = true;
      }
      if (!ok) {
        std::string hint = units::did_you_mean(st, names);
        r_.fail(sp, fmt::format("unknown InfiniBand speed {}", quote(st)),
                hint.empty() ? fmt::format("use one of {}", fmt::join(names, ", "))
                             : fmt::format("did you mean '{}'?", hint));
      }
      l.width = IbWidth::X4;
      if (const auto w = n["width"]) {
        std::string wt = units::lower(r_.scalar(w, "width", "width: 4x"));
        if (wt == "1x") l.width = IbWidth::X1;
        else if (wt == "2x") l.width = IbWidth::X2;
        else if (wt == "4x") l.width = IbWidth::X4;
        else if (wt == "8x") l.width = IbWidth::X8;
        else if (wt == "12x") l.width = IbWidth::X12;
        else
          r_.fail(w, fmt::format("unknown link width {}", quote(w.Scalar())), "use 1x, 2x, 4x, 8x or 12x");
      }
      l.rate_bps = lane_bps(l.speed) * lanes(l.width);
    } else {
      auto bps = units::parse_rate_bps(st);
      bool ok = false;
      for (uint32_t g : kEthGbps)
        if (bps && *bps == uint64_t{g} * 1'000'000'000ULL) l.eth_speed_gbps = g, ok = true;
      if (!ok)
        r_.fail(sp, fmt::format("unknown Ethernet speed {}", quote(st)),
                "use one of 1G, 10G, 25G, 40G, 50G, 100G, 200G, 400G (add rate: to model a slower link)");
      std::tie(l.width, l.speed) = mlx5_eth_encoding(l.eth_speed_gbps);
      l.rate_bps = uint64_t{l.eth_speed_gbps} * 1'000'000'000ULL;
    }

    if (const auto v = n["rate"]) {
      std::string t = r_.scalar(v, "rate", "rate: 40Gbps");
      auto bps = units::parse_rate_bps(t);
      if (!bps)
        r_.fail(v, fmt::format("rate {} is not a bit rate", quote(t)),
                "write a number with a unit, e.g. 40G, 25Gbps or 800Mb/s");
      if (*bps < kMinRateBps)
        r_.fail(v, fmt::format("rate {} is below 1 Mb/s", t), "use at least 1Mbps");
      // rate: models a throttled link; a faster one than the cable carries
      // would make ibv_devinfo's rate and the measured bandwidth disagree.
      if (*bps > l.rate_bps) {
        const uint64_t max = l.rate_bps;
        const std::string cable = ib() ? fmt::format("{} {}", to_string(l.width), to_string(l.speed))
                                       : fmt::format("{}G Ethernet", l.eth_speed_gbps);
        const std::string most = max % 1'000'000'000ULL == 0 ? fmt::format("{}Gbps", max / 1'000'000'000ULL)
                                                             : fmt::format("{}Mbps", max / 1'000'000ULL);
        r_.fail(v, fmt::format("rate {} of {} ({} - {}) is above the {} that {} carries", t, what, a.text(),
                               b.text(), units::format_rate(max), cable),
                fmt::format("use at most rate: {} (rate only slows a link down), or a faster {}", most,
                            ib() ? "speed or a wider width" : "speed"));
      }
      l.rate_bps = *bps;
    }

    if (const auto v = n["delay"]) {
      std::string t = r_.scalar(v, "delay", "delay: 100ns");
      auto d = units::parse_delay_ns(t, kMaxDelayNs);
      if (!d)
        r_.fail(v, fmt::format("delay {} is not a delay", quote(t)),
                "write a whole number of nanoseconds with a unit (ns, us, ms), up to 1s, e.g. 100ns or 1.5us");
      l.delay_ns = *d;
    }

    l.mtu = ib() ? 4096 : 1500;
    if (const auto v = n["mtu"]) {
      std::string t = r_.scalar(v, "mtu", ib() ? "mtu: 4096" : "mtu: 1500");
      auto m = units::parse_uint(t, 1'000'000);
      if (ib()) {
        if (!m || (*m != 256 && *m != 512 && *m != 1024 && *m != 2048 && *m != 4096))
          r_.fail(v, fmt::format("InfiniBand MTU {} is not valid", quote(t)),
                  "use 256, 512, 1024, 2048 or 4096");
      } else if (!m || *m < 576 || *m > 9216) {
        r_.fail(v, fmt::format("Ethernet MTU {} is out of range", quote(t)),
                "use an IP MTU from 576 to 9216, e.g. 1500 or 9000");
      }
      l.mtu = static_cast<uint32_t>(*m);
    }
    if (ib()) check_vl_buffers(n, l, what);
    link_pos_.push_back(pos_of(n));
    f_.links.push_back(std::move(l));
  }

  // Each end's receive buffer per VL must hold one packet of the link's MTU.
  void check_vl_buffers(const YAML::Node& n, Link& l, const std::string& what) {
    const uint32_t need = l.mtu + kMinVlBufferOverhead;
    if (const auto v = n["vl_buffer"]) {
      l.vl_buffer_bytes = read_vl_buffer(v, what);
      if (l.vl_buffer_bytes < need)
        r_.fail(v, fmt::format("vl_buffer {} of {} cannot hold one packet of its MTU {} ({} bytes with headers)",
                               v.Scalar(), what, l.mtu, need),
                fmt::format("use at least vl_buffer: {}B, or a smaller mtu", need));
      return;
    }
    for (const Endpoint* e : {&l.a, &l.b}) {
      if (!e->is_switch) continue;
      const std::size_t i = static_cast<std::size_t>(f_.find_switch(e->node) - f_.switches.data());
      const uint32_t have = f_.switches[i].vl_buffer_bytes;
      if (have && have < need)
        r_.fail(switch_vlbuf_pos_.at(i),
                   fmt::format("vl_buffer of switch '{}' ({} bytes) cannot hold one packet of the MTU {} of {} "
                               "({} bytes with headers)",
                               e->node, have, l.mtu, what, need),
                   fmt::format("use at least vl_buffer: {}B on the switch, or give the link its own vl_buffer",
                               need));
    }
  }

  const Reader& r_;
  Registry& reg_;
  FabricExtras& ex_;
  Fabric f_;
  std::string what_;
  std::vector<Pos> switch_pos_, hca_pos_, link_pos_;
  std::vector<std::string> generated_roots_;  // a topology's top level
  std::vector<Pos> switch_vlbuf_pos_;  // where each switch's vl_buffer is (or its name)
  std::vector<Pos> switch_buffer_pos_;  // where each switch's buffer is (or its name)
  std::map<std::pair<std::string, uint32_t>, int> port_used_;  // switch port -> link line
  std::map<std::string, int, std::less<>> hca_link_line_;      // HCA -> link line
};

}  // namespace

Fabric read_fabric(const Reader& r, const YAML::Node& n, std::size_t fabric_no, Registry& reg,
                   FabricExtras& extras) {
  return FabricReader(r, reg, extras).read(n, fabric_no);
}

}  // namespace vf::config::detail

namespace vf::config {

uint64_t line_rate_bps(const Link& l) {
  return l.eth_speed_gbps ? uint64_t{l.eth_speed_gbps} * 1'000'000'000ULL : detail::lane_bps(l.speed) * lanes(l.width);
}

}  // namespace vf::config
