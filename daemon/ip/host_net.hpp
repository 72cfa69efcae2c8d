// The host's own IPv4 networks, read before fabricd adds the vHCAs'
// interfaces: an emulated address that is also the host's (or inside a
// network the host routes) would capture or leak real traffic, so fabricd
// refuses to start on it and names both sides.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/ip/netdev.hpp"

namespace vf {

struct HostNet {
  struct Prefix {
    std::string ifname;
    uint32_t ip = 0;  // host byte order; an address (addrs) or a network (routes)
    uint8_t len = 32;
  };
  std::vector<Prefix> addrs;        // every interface's IPv4 addresses
  std::vector<Prefix> routes;       // the main table's routes, default routes left out
  std::vector<std::string> ifnames; // every interface
};

// getifaddrs(3) and /proc/net/route of the calling process's network namespace.
HostNet read_host_net();

// The first clash of `want` with the host, as a message naming both sides
// and what to do; empty when there is none.
std::string host_clash(const NetdevSpec& want, const HostNet& host);

// The interfaces the config asks for (daemon.netdevs on), in vHCA order.
namespace config { struct Config; }
std::vector<NetdevSpec> netdev_specs(const config::Config& cfg);

}  // namespace vf
