// Internals shared by the config loader's files (config.cpp reads the
// document, config_fabric.cpp a fabric, config_derive.cpp fills in derived
// identifiers). Not part of the daemon's API.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/config.hpp"

namespace vf::config::detail {

struct Pos {
  int line = 0, col = 0;  // 1-based
};
Pos pos_of(const YAML::Node& n);

// Typed, position-aware access to YAML nodes. Every failure throws
// ConfigError pointing at the offending node.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  [[noreturn]] void fail(Pos at, std::string problem, std::string fix) const;
  [[noreturn]] void fail(const YAML::Node& at, std::string problem, std::string fix) const {
    fail(pos_of(at), std::move(problem), std::move(fix));
  }

  // `n` must be a mapping whose keys are all strings from `allowed`, each at
  // most once. `what` names it in messages ("fabric 'ib'", "link 2").
  void expect_map(const YAML::Node& n, std::string_view what,
                  std::initializer_list<std::string_view> allowed) const;
  // `n` must be a sequence (or null/absent, meaning empty).
  void expect_seq(const YAML::Node& n, std::string_view what, std::string_view example) const;
  // Value of a required key; fails at the map when missing.
  YAML::Node required(const YAML::Node& map, std::string_view key, std::string_view what,
                      std::string_view example) const;
  // The scalar text of `n`; fails when it is a list, map or null.
  std::string scalar(const YAML::Node& n, std::string_view what, std::string_view example) const;
  // Position of `key`'s key node in `map` (for "this key is not allowed here").
  Pos key_pos(const YAML::Node& map, std::string_view key) const;

 private:
  std::string file_;
};

// Everything that must be unique across the whole config, with where it was
// first defined so duplicates can point back to it.
struct Registry {
  std::map<std::string, Pos, std::less<>> names;  // fabrics, switches, HCAs share one namespace
  std::map<uint32_t, std::pair<std::string, Pos>> ipv4s;
  std::map<addr::Mac, std::pair<std::string, Pos>> macs;
  std::map<uint64_t, std::pair<std::string, Pos>> guids;
  std::map<std::string, std::pair<std::string, Pos>, std::less<>> netdevs;
  bool netdevs_on = true;  // daemon.netdevs, read before the fabrics
  std::size_t hca_count = 0;
  std::size_t switch_count = 0;
  Limits limits;
};

// Which identifiers of a fabric's nodes were configured (the rest are derived).
struct FabricExtras {
  std::vector<bool> hca_mac_given, hca_guid_given, switch_guid_given;
};

// What a fabric's `topology:` key generates, as the YAML a hand-written
// fabric holds (config_topology.cpp); nodes carry no position.
struct GeneratedLists {
  YAML::Node switches{YAML::NodeType::Sequence}, hcas{YAML::NodeType::Sequence}, links{YAML::NodeType::Sequence};
  std::vector<std::string> roots;  // the top level: Up/Down's roots
  std::string summary;
};
GeneratedLists read_topology(const Reader& r, const YAML::Node& t, LinkLayer ll, const std::string& what);

Fabric read_fabric(const Reader& r, const YAML::Node& n, std::size_t fabric_no, Registry& reg,
                   FabricExtras& extras);
// An Ethernet fabric's `qos:` mapping.
// A fabric's adaptive_routing: key, after its nodes and sm: (config_adaptive.cpp).
void read_adaptive_routing(const Reader& r, const YAML::Node& v, Fabric& f, const std::string& what);
EthQos read_eth_qos(const Reader& r, const YAML::Node& v, const std::string& what);
// Fails when a switch's `buffer` cannot hold the PFC headroom of its linked
// ports (`buffer_pos`: where each switch's buffer was given).
void check_switch_buffers(const Reader& r, const Fabric& f, const std::vector<Pos>& buffer_pos);
// The Linux interface of an HCA with an address: its `netdev` key (`v`,
// undefined when absent) or the HCA's name; checked and unique.
void read_hca_netdev(const Reader& r, const YAML::Node& v, const YAML::Node& name_node, Registry& reg, Hca& h);
// An Ethernet HCA's `dcqcn` key: what it sets over the fabric's.
void read_hca_dcqcn(const Reader& r, const YAML::Node& v, Hca& h);
// The ETS keys of an Ethernet fabric's `qos:` (prio_tc, tsa, tc_bw).
void read_ets(const Reader& r, const YAML::Node& qos, EthQos& q);
// An Ethernet switch's `ageing` and `fdb` keys.
void read_switch_l2(const Reader& r, const YAML::Node& n, Switch& s);
// An Ethernet switch's `router` key.
void read_switch_router(const Reader& r, const YAML::Node& v, Switch& s);
// Whether `e` is a routed port of its switch's router.
bool routed_end(const Fabric& f, const Endpoint& e);
// Fails when a routed port faces a bridged port or a host, a bridged domain
// has two gateways, gateway subnets overlap, or a host's address is outside
// its gateway's subnet; then gives every host its prefix and gateway.
void check_l3(const Reader& r, Fabric& f, const std::vector<Pos>& link_pos, const std::vector<Pos>& switch_pos,
              const std::vector<Pos>& hca_pos);
// An Ethernet HCA's `vlan` key.
void read_hca_vlan(const Reader& r, const YAML::Node& v, Hca& h);
// An IB HCA's `pkeys` (config_pkeys.cpp).
void read_hca_pkeys(const Reader& r, const YAML::Node& v, Hca& h);
// Fails when the links between an Ethernet fabric's switches form a loop: a
// bridged domain must be a tree, as nothing here runs a spanning tree
// (`link_pos`: where each link was written).
void check_l2_loops(const Reader& r, const Fabric& f, const std::vector<Pos>& link_pos);
// Fails unless every node of `f` reaches every other over its links
// (positions: where each switch / HCA was named, for the message).
void check_connected(const Reader& r, const Fabric& f, const std::vector<Pos>& switch_pos,
                     const std::vector<Pos>& hca_pos);
// Assigns indices, derives MACs and GUIDs not given, keeping them unique.
void derive_identifiers(const Reader& r, std::vector<Fabric>& fabrics,
                        const std::vector<FabricExtras>& extras, Registry& reg);

// Validated name: [a-z0-9_]{1,63}, unique across the config.
std::string read_name(const Reader& r, const YAML::Node& n, std::string_view what, Registry& reg);

std::string quote(std::string_view s);  // 'x', truncated and made printable for messages

}  // namespace vf::config::detail
