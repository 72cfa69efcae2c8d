// Generated topologies: the switches, HCAs and links of a fat tree, a
// leaf-spine or a rail-optimized GPU cluster, from a handful of numbers
// (a fabric's `topology:` key, docs/configuration.md). Pure: the config
// reader turns the result into the same switches/hcas/links it reads from a
// hand-written config, so every check and default applies unchanged.
//
// Ports are cabled in a fixed, documented order so a generated fabric reads
// like a hand-cabled one: a leaf's hosts on its lowest ports, then its
// uplinks in order of the switch above; a switch's downlinks in order of the
// switch (or pod) below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vf::config::gen {

enum class Kind : uint8_t {
  FatTree,        // k-ary, 2 or 3 levels (Al-Fares et al.), oversubscribed at the leaves
  LeafSpine,      // L leaves with H hosts each, every leaf to every spine (P parallel links)
  RailOptimized,  // servers with R HCAs; HCA r of every server on rail r's leaves; spines over all leaves
};

struct Spec {
  Kind kind = Kind::FatTree;
  // fat_tree
  uint32_t k = 0;             // switch radix: even, >= 4
  uint32_t levels = 2;        // 2 or 3
  uint32_t oversubscription = 1;  // leaf down:up ports; k % (oversubscription + 1) == 0
  // leaf_spine (and rail_optimized's spines)
  uint32_t leaves = 0, spines = 0, hosts_per_leaf = 0, parallel_links = 1;
  // rail_optimized
  uint32_t servers = 0, rails = 0, servers_per_leaf = 0;
  std::string hca_prefix = "vib";  // HCAs are <hca_prefix><n>, n from 0
  std::string switch_prefix;       // switches are <switch_prefix>leaf0, ...spine0, core0
};

// A node's port: `port` 0 for an HCA (its single port), 1.. for a switch.
struct End {
  std::string node;
  uint32_t port = 0;
};

struct Link {
  End a, b;  // a is the lower node (the HCA, or the lower switch)
  bool host = false;  // an HCA's link, else between switches
};

struct Switch {
  std::string name;
  uint32_t ports = 0;
  uint32_t level = 0;  // 0: leaves (edge), 1: spines (aggregation), 2: cores
  uint32_t pod = 0;    // 3-level fat tree: its pod (cores: 0); rail-optimized leaves: their rail
};

struct Hca {
  std::string name;
  uint32_t server = 0;  // which server (rail-optimized: R HCAs per server; else one each)
  uint32_t leaf = 0;    // index into Topology::switches of its leaf
};

struct Topology {
  std::vector<Switch> switches;  // leaves first, then each level above
  std::vector<Hca> hcas;         // rail-optimized: server by server, rail by rail
  std::vector<Link> links;       // host links first
  std::vector<std::string> roots;  // the top level: Up/Down's roots
  uint32_t hcas_per_server = 1;
  std::string summary;  // "3-level fat tree, k=16: 1024 hosts, 128 leaves, ..."
};

struct Problem {
  std::string key;  // the spec's key at fault ("k", "servers_per_leaf")
  std::string what, fix;
};
// The first problem with `s`, if any.
std::optional<Problem> problem(const Spec& s);
// Requires !problem(s); throws std::invalid_argument otherwise.
Topology generate(const Spec& s);

}  // namespace vf::config::gen
