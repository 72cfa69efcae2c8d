// An app's address vector (ibv_ah_attr) in the port's vocabulary. Converted
// once, when a QP's AV is set or an AH is created, so the per-packet path
// hands the port a ready dp::Route.
#pragma once

#include <infiniband/verbs.h>

#include <cstring>

#include "dataplane/fabric/host_port.hpp"

namespace vf::engine {

// The hop limit (IPv4 TTL) of a RoCE QP's packets: Linux's default TTL, which
// the kernel's path resolution puts in a RoCE QP's address vector.
inline constexpr uint8_t kRoceDefaultHopLimit = 64;

inline dp::Route route_of(const ibv_ah_attr& a) {
  dp::Route r;
  r.dlid = a.dlid;
  r.sl = a.sl;
  r.src_path_bits = a.src_path_bits;
  r.is_global = a.is_global != 0;
  r.sgid_index = a.grh.sgid_index;
  r.hop_limit = a.grh.hop_limit;
  r.traffic_class = a.grh.traffic_class;
  r.flow_label = a.grh.flow_label;
  std::memcpy(r.dgid.data(), a.grh.dgid.raw, 16);
  return r;
}

}  // namespace vf::engine
