// What each vHCA's Linux interface is, from the config (netdev.hpp).
#include "daemon/config/config.hpp"
#include "daemon/ip/host_net.hpp"

namespace vf {
namespace {

uint32_t link_mtu(const config::Fabric& f, const std::string& hca) {
  const config::Link* l = f.link_of(hca);
  return l ? l->mtu : 0;
}

}  // namespace

std::vector<NetdevSpec> netdev_specs(const config::Config& cfg) {
  std::vector<NetdevSpec> out;
  if (!cfg.daemon.netdevs) return out;
  for (const config::Fabric& f : cfg.fabrics)
    for (const config::Hca& h : f.hcas) {
      if (h.netdev.empty() || !h.ipv4) continue;
      NetdevSpec s;
      s.name = h.netdev;
      s.hca = h.name;
      s.ethernet = f.link_layer == config::LinkLayer::Ethernet;
      s.mac = h.mac;
      s.ipv4 = *h.ipv4;
      s.prefix_len = h.prefix_len ? h.prefix_len : 32;
      const uint32_t mtu = link_mtu(f, h.name);
      s.mtu = s.ethernet ? (mtu ? mtu : 1500) : ipoib_mtu(mtu ? mtu : 4096);
      out.push_back(std::move(s));
    }
  return out;
}

}  // namespace vf
