// Identifiers a config may leave out: HCA indices, MACs and GUIDs. Derived
// values depend only on the node's name (not on its position), so adding a
// node never renames the others; collisions are resolved by deterministic
// re-hashing and never with a configured value.
#include <fmt/format.h>

#include "daemon/config/config_detail.hpp"

namespace vf::config::detail {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t name_hash(std::string_view name, uint32_t salt) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  return splitmix64(h ^ (uint64_t{salt} << 32));
}

// Locally administered (0x02 bit) with "VF" in the OUI bytes: recognisable in
// captures and never a real vendor's.
constexpr uint64_t kGuidBase = 0x025646ULL << 40;
constexpr uint8_t kMacOui[3] = {0x02, 0x56, 0x46};
constexpr uint32_t kMaxProbes = 4096;

uint64_t derive_guid(std::string_view name, Registry& reg) {
  for (uint32_t salt = 0; salt < kMaxProbes; ++salt) {
    uint64_t g = kGuidBase | (name_hash(name, salt) & 0xffffffffffULL);
    if (!reg.guids.count(g)) return g;
  }
  return 0;  // unreachable in practice: 2^40 values, at most a few hundred taken
}

addr::Mac derive_mac(std::string_view name, Registry& reg) {
  for (uint32_t salt = 0; salt < kMaxProbes; ++salt) {
    uint64_t h = name_hash(name, salt);
    addr::Mac m{kMacOui[0], kMacOui[1], kMacOui[2], static_cast<uint8_t>(h >> 16),
                static_cast<uint8_t>(h >> 8), static_cast<uint8_t>(h)};
    if (!reg.macs.count(m)) return m;
  }
  return {};
}

}  // namespace

void derive_identifiers(const Reader& r, std::vector<Fabric>& fabrics,
                        const std::vector<FabricExtras>& extras, Registry& reg) {
  uint32_t index = 0;
  for (std::size_t fi = 0; fi < fabrics.size(); ++fi) {
    Fabric& f = fabrics[fi];
    const FabricExtras& ex = extras[fi];
    for (std::size_t i = 0; i < f.switches.size(); ++i) {
      Switch& s = f.switches[i];
      if (ex.switch_guid_given[i]) continue;
      s.node_guid = derive_guid(s.name, reg);
      reg.guids.emplace(s.node_guid, std::make_pair(s.name, Pos{}));
    }
    for (std::size_t i = 0; i < f.hcas.size(); ++i) {
      Hca& h = f.hcas[i];
      h.index = index++;
      if (f.link_layer == LinkLayer::Ethernet && !ex.hca_mac_given[i]) {
        h.mac = derive_mac(h.name, reg);
        reg.macs.emplace(h.mac, std::make_pair(h.name, Pos{}));
      }
      if (ex.hca_guid_given[i]) continue;
      // RoCE: the GUID is the MAC's EUI-64, as for the fe80:: GID, so the two
      // agree the way they do on a NIC. IB: hashed from the name.
      h.node_guid = f.link_layer == LinkLayer::Ethernet ? addr::eui64_from_mac(h.mac) : derive_guid(h.name, reg);
      if (auto prev = reg.guids.find(h.node_guid); prev != reg.guids.end())
        r.fail(prev->second.second,
               fmt::format("node_guid of '{}' equals the GUID derived for '{}' from its MAC", prev->second.first,
                           h.name),
               fmt::format("set node_guid or mac of '{}' explicitly", h.name));
      reg.guids.emplace(h.node_guid, std::make_pair(h.name, Pos{}));
    }
    // Routers last, so hosts keep the MACs they had before routing existed.
    for (Switch& s : f.switches)
      if (s.router) {
        s.router->mac = derive_mac(s.name, reg);
        reg.macs.emplace(s.router->mac, std::make_pair(s.name, Pos{}));
      }
  }
}

}  // namespace vf::config::detail
