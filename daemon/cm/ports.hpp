// What the connection manager knows of each vHCA port: the addresses an app
// names it by (its IP: IPoIB-style on InfiniBand, the RoCE address on
// Ethernet), its GID, LID and MTU, and which other ports an IP packet from
// it can reach. Taken once from the config and the ports fabricd built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace vf::cm {

struct Port {
  size_t vhca = 0;          // index in the topology's vHCAs
  std::string name;         // the ibdev name
  size_t fabric = 0;        // config index
  bool infiniband = true;
  std::optional<uint32_t> ipv4;  // host byte order
  uint8_t prefix_len = 0;   // 0: every address is on the link
  uint32_t gateway = 0;     // Ethernet: a router serves the subnet
  uint64_t node_guid = 0;   // host byte order
  Gid gid{};                // the GID rdma_cm uses: IB index 0, RoCE ::ffff:ip
  uint8_t gid_index = 0;
  uint16_t lid = 0;         // InfiniBand
  uint16_t sm_lid = 0;
  uint8_t mtu = 5;          // IBA code: 1 = 256 .. 5 = 4096
};

// Which port owns `ip`, if any.
const Port* port_by_ip(const std::vector<Port>& ports, uint32_t ip);
// Whether `from` can reach `to` by IP: the same fabric, and `to` on from's
// subnet or behind its gateway.
bool reachable(const Port& from, const Port& to);

}  // namespace vf::cm
