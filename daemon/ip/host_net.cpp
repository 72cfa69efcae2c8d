#include "daemon/ip/host_net.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "daemon/config/addr.hpp"

namespace vf {
namespace {

bool overlap(uint32_t a, uint8_t alen, uint32_t b, uint8_t blen) {
  const uint32_t m = addr::ipv4_mask(std::min(alen, blen));
  return (a & m) == (b & m);
}

// /proc/net/route prints each field as the raw big-endian word in %08X.
uint32_t route_word(const std::string& hex) { return ntohl(uint32_t(std::stoul(hex, nullptr, 16))); }

void read_routes(HostNet& h) {
  std::ifstream in("/proc/net/route");
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string ifname, dst, gw, flags, refcnt, use, metric, mask;
    if (!(f >> ifname >> dst >> gw >> flags >> refcnt >> use >> metric >> mask)) continue;
    try {
      const uint8_t len = uint8_t(std::popcount(route_word(mask)));
      if (len > 0) h.routes.push_back({ifname, route_word(dst), len});
    } catch (const std::exception&) {
      continue;  // not a route line
    }
  }
}

}  // namespace

HostNet read_host_net() {
  HostNet h;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> guard(list, &::freeifaddrs);
    for (ifaddrs* a = list; a; a = a->ifa_next) {
      if (a->ifa_name && std::find(h.ifnames.begin(), h.ifnames.end(), a->ifa_name) == h.ifnames.end())
        h.ifnames.emplace_back(a->ifa_name);
      if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
      const uint32_t ip = ntohl(reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr);
      const uint32_t m =
          a->ifa_netmask ? ntohl(reinterpret_cast<const sockaddr_in*>(a->ifa_netmask)->sin_addr.s_addr) : ~0u;
      h.addrs.push_back({a->ifa_name, ip, uint8_t(std::popcount(m))});
    }
  }
  read_routes(h);
  return h;
}

std::string host_clash(const NetdevSpec& w, const HostNet& host) {
  const std::string who = fmt::format("vHCA {} ({} on interface {})", w.hca, addr::format_prefix(w.ipv4, w.prefix_len), w.name);
  const std::string fix =
      "give the vHCA an address of a network this host does not use (labs use 198.18.0.0/15, RFC 2544's "
      "benchmarking range), or remove the host's";
  for (const std::string& n : host.ifnames)
    if (n == w.name)
      return fmt::format("{}: this host already has an interface named {}; set netdev: NAME on the HCA, or delete "
                         "the interface if it is a leftover (ip link del {})",
                         who, n, n);
  for (const auto& a : host.addrs)
    if (overlap(w.ipv4, w.prefix_len, a.ip, a.len))
      return fmt::format("{} overlaps the host's address {} on {}; {}", who, addr::format_prefix(a.ip, a.len), a.ifname, fix);
  for (const auto& r : host.routes)
    if (overlap(w.ipv4, w.prefix_len, r.ip, r.len))
      return fmt::format("{} overlaps the host's route to {} via {}; {}", who, addr::format_prefix(r.ip, r.len), r.ifname,
                         fix);
  return {};
}

}  // namespace vf
