// An HCA's `netdev`: the Linux interface that holds its address (netdev.hpp),
// named as `ip link` shows it. Names follow the kernel's rules for interface
// names (dev_valid_name: at most IFNAMSIZ - 1 bytes, no '/', ':' or space),
// narrowed to the characters udev and scripts expect.
#include <fmt/format.h>

#include "daemon/config/config_detail.hpp"

namespace vf::config::detail {
namespace {

constexpr size_t kMaxIfName = 15;  // IFNAMSIZ - 1

bool valid_ifname(std::string_view s) {
  if (s.empty() || s.size() > kMaxIfName || s == "." || s == "..") return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

}  // namespace

void read_hca_netdev(const Reader& r, const YAML::Node& v, const YAML::Node& name_node, Registry& reg, Hca& h) {
  if (!reg.netdevs_on) {
    if (v) r.fail(v, fmt::format("netdev of HCA '{}' is set but daemon.netdevs is off", h.name),
                  "remove the key, or turn daemon.netdevs on");
    return;
  }
  if (!h.ipv4)
    r.fail(v, fmt::format("netdev of HCA '{}' is set but the HCA has no ip", h.name),
           "give the HCA an ip (its interface holds it), or remove the key");
  const YAML::Node& at = v ? v : name_node;
  std::string name = v ? r.scalar(v, "netdev", "netdev: ib0") : h.name;
  if (!valid_ifname(name))
    r.fail(at,
           v ? fmt::format("netdev {} of HCA '{}' is not a Linux interface name", quote(name), h.name)
             : fmt::format("HCA name '{}' is too long for the Linux interface that holds its address", h.name),
           v ? "use 1 to 15 letters, digits, '_', '-' or '.', e.g. netdev: ib0"
             : "add netdev: NAME (1 to 15 letters, digits, '_', '-' or '.') to the HCA, e.g. netdev: ib0");
  if (auto prev = reg.netdevs.find(name); prev != reg.netdevs.end())
    r.fail(at, fmt::format("netdev {} of HCA '{}' is already the interface of '{}' (line {})", name, h.name,
                           prev->second.first, prev->second.second.line),
           "every HCA needs an interface of its own; set netdev: NAME on one of them");
  reg.netdevs.emplace(name, std::make_pair(h.name, pos_of(at)));
  h.netdev = std::move(name);
}

}  // namespace vf::config::detail
