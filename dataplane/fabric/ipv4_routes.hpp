// A router's IPv4 forwarding table (what `ip route` shows on it): longest
// prefix match, each prefix either connected (the router's own subnet: the
// destination itself is the next hop) or an ECMP group of next hops on
// routed ports.
//
// A lab's table holds a few prefixes per leaf, so lookup is a scan of an
// array kept sorted longest prefix first: a few cache lines, where DPDK's
// DIR-24-8 (rte_lpm) would take 64 MiB per switch. Tables are replaced
// whole, on the lcore, between packets.
//
// ECMP picks a group member by a hash of the flow's 5-tuple: a RoCEv2 QP
// keeps one UDP source port, so it keeps one path (in order), and different
// QPs spread (the entropy RoCE puts there). A member whose link is down is
// skipped, as a switch's hardware drops a dead member before its routing
// protocol reconverges: its flows move to the live ones, the others stay
// where they were (Router::pick).
#pragma once

#include <cstdint>
#include <vector>

#include "dataplane/fabric/types.hpp"

namespace vf::dp {

struct NextHop {
  uint16_t port = 0;  // a routed port of this switch
  Mac mac{};          // the neighbouring router's MAC on that link
  friend bool operator==(const NextHop&, const NextHop&) = default;
};

struct Ipv4Route {
  uint32_t prefix = 0;  // host byte order, host bits zero
  uint8_t len = 0;      // 0..32
  bool connected = false;
  std::vector<NextHop> hops;  // ECMP members (not connected)
  friend bool operator==(const Ipv4Route&, const Ipv4Route&) = default;
};

inline uint32_t prefix_mask(uint8_t len) { return len ? ~0u << (32 - len) : 0; }

class Ipv4Routes {
 public:
  static constexpr size_t kMaxRoutes = 4096;
  static constexpr size_t kMaxHops = 64;

  // Replaces the table. Throws std::invalid_argument on a prefix with host
  // bits, a length over 32, a duplicate prefix, a group with no or too many
  // members, or too many routes; the table is unchanged then.
  void set(std::vector<Ipv4Route> routes);
  // The longest prefix holding `dst`, or null.
  const Ipv4Route* lookup(uint32_t dst) const {
    for (const Ipv4Route& r : routes_)
      if (((dst ^ r.prefix) & prefix_mask(r.len)) == 0) return &r;
    return nullptr;
  }
  const std::vector<Ipv4Route>& routes() const { return routes_; }

 private:
  std::vector<Ipv4Route> routes_;  // longest prefix first
};

// The flow hash ECMP picks by: addresses, protocol and, for UDP and TCP,
// ports, seeded per switch (one seed everywhere polarises multi-tier
// fabrics). `ip` points at an IPv4 header of `len` readable bytes.
uint32_t ecmp_hash(const uint8_t* ip, unsigned len, uint32_t seed);

}  // namespace vf::dp
