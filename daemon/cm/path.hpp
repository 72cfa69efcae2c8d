// A route as the connection manager keeps it: the path record's fields
// (IBA 15.2.5.16) an InfiniBand path comes with from the SA, or a RoCE path
// is made of, and how they become the kernel ABI's structures librdmacm
// reads (ib_user_path_rec, ib_uverbs_ah_attr).
#pragma once

#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include <cstdint>
#include <functional>
#include <optional>

#include "core/types.hpp"

namespace vf::cm {

struct Path {
  Gid sgid{}, dgid{};
  uint16_t slid = 0, dlid = 0;
  uint16_t pkey = 0xFFFF;
  uint8_t sl = 0;
  uint8_t mtu = 5;        // IBA code
  uint8_t rate = 0;       // IBA rate code; 0: the port's own
  uint8_t packet_life = 18;
  uint8_t hop_limit = 0;
  uint8_t tclass = 0;
  uint32_t flow_label = 0;
  bool global = false;    // the packets carry a GRH (always on RoCE)
};

// The same path seen from its other end.
Path reversed(const Path& p);
ib_user_path_rec to_user_path(const Path& p);
// The address vector of a QP or AH sending along `p` from port 1.
ib_uverbs_ah_attr to_ah_attr(const Path& p, uint8_t sgid_index);
// The local ACK timeout an RC QP on `p` gets (IBA 12.7.34: twice the packet
// lifetime plus the CA's ACK delay, as ib_cm computes it).
uint8_t ack_timeout(const Path& p);

// Finds the path between two vHCA ports: the SA's answer on InfiniBand, the
// Ethernet topology's on RoCE. `done` runs on the control thread, once.
class RouteResolver {
 public:
  virtual ~RouteResolver() = default;
  virtual void resolve(size_t src_vhca, size_t dst_vhca, std::function<void(std::optional<Path>)> done) = 0;
};

}  // namespace vf::cm
