// What the stacks tests share: a config with several vHCAs on each fabric,
// the per-fabric names, and the few facts the tests read from fabricd.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "../fabricd_fixture.hpp"

namespace vf::test {

struct StackFabric {
  const char* name;    // test-name suffix
  const char* prefix;  // HCA n is prefix + n
  const char* fabric;  // the config's fabric name
  std::string hca(int n) const { return prefix + std::to_string(n); }
  std::string ip(int n) const;  // HCA n's address (198.18.0.0/15)
};

extern const StackFabric kIbStack, kRoceStack;
inline void PrintTo(const StackFabric& f, std::ostream* os) { *os << f.fabric; }

// Both fabrics, `hcas` vHCAs each on one switch, modelled on default.yaml;
// the RoCE one first (its HCA 0 is device 0) if `roce_first`.
std::string stacks_config(int hcas, bool roce_first = false);

// Whether some socket listens on TCP `port` (a probe connection would be
// the one connection ucx_perftest's server accepts, so it reads /proc).
bool tcp_listening(int port);
// Waits (bounded) until a process listens on `port`.
bool wait_tcp_listening(int port);

// The data a vHCA port sent or took off the fabric, in bytes, and what it
// looped back inside the HCA in packets (Prometheus metrics).
struct PortTraffic {
  uint64_t xmit_bytes = 0, rcv_bytes = 0, loopback_pkts = 0;
};
PortTraffic port_traffic(const Fabricd& d, const StackFabric& f, int hca);

}  // namespace vf::test
