// A vHCA's Linux network interface: what rxe's netdev or an mlx5 port's
// Ethernet function is to a real RoCE device, and ib0 (IPoIB) to an IB one.
// RDMA stacks take it for granted: UCX and libibverbs read a RoCE GID's
// netdev (sysfs gid_attrs/ndevs) and its addresses, MTU and link state;
// launchers open TCP side channels to the vHCA's address.
//
// The interface is a tun/tap device fabricd holds open and never makes
// persistent, so the kernel deletes it when fabricd's descriptor closes, on
// every exit path, SIGKILL included: nothing is left for the next start to
// clean up. RoCE vHCAs get a tap (Ethernet, the vHCA's MAC, so the kernel's
// fe80:: address is GID 0); IB vHCAs a tun (no link-layer address, as IPoIB
// has none an Ethernet stack understands). Traffic the host's stack sends
// through it (ARP, neighbour discovery, packets to other addresses of the
// subnet) reaches only fabricd, which counts and discards it: nothing to the
// emulated addresses ever leaves the machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "daemon/config/addr.hpp"

namespace vf {

struct NetdevSpec {
  std::string name;                // the interface ("vroce0")
  std::string hca;                 // the vHCA it belongs to, for messages
  bool ethernet = false;           // tap (RoCE) or tun (IB)
  addr::Mac mac{};                 // ethernet only
  uint32_t ipv4 = 0;               // host byte order
  uint8_t prefix_len = 32;         // the host's subnet; 32 when none is configured
  uint32_t mtu = 1500;             // IP MTU
};

struct NetdevStats {
  uint64_t discarded_packets = 0;  // what the host's stack sent into the interface
  uint64_t discarded_bytes = 0;
};

class Netdev {
 public:
  // Creates, addresses and brings up the interface; throws std::runtime_error
  // naming the interface, the step and the cause.
  explicit Netdev(const NetdevSpec& spec);
  ~Netdev();  // closing the descriptor deletes the interface
  Netdev(const Netdev&) = delete;
  Netdev& operator=(const Netdev&) = delete;

  const NetdevSpec& spec() const { return spec_; }
  int fd() const { return fd_; }
  int ifindex() const { return ifindex_; }
  // Link state as the port's: carrier off is what `ip link` shows as
  // NO-CARRIER / state DOWN for a NIC whose cable is out. Returns 0 or errno.
  int set_carrier(bool up);
  // Reads and discards what the host's stack queued to the interface
  // (non-blocking; call when fd() is readable).
  void drain();
  const NetdevStats& stats() const { return stats_; }

 private:
  NetdevSpec spec_;
  int fd_ = -1;
  int ifindex_ = 0;
  NetdevStats stats_;
};

// The IP MTU of an IB vHCA's interface for an IB MTU: IPoIB datagram mode
// carries a 4-byte encapsulation header inside the IB MTU (2044 for 2048).
uint32_t ipoib_mtu(uint32_t ib_mtu);

}  // namespace vf
