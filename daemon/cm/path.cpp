#include "daemon/cm/path.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace vf::cm {

Path reversed(const Path& p) {
  Path r = p;
  std::swap(r.sgid, r.dgid);
  std::swap(r.slid, r.dlid);
  return r;
}

ib_user_path_rec to_user_path(const Path& p) {
  ib_user_path_rec r{};
  std::memcpy(r.dgid, p.dgid.data(), 16);
  std::memcpy(r.sgid, p.sgid.data(), 16);
  r.dlid = htons(p.dlid);
  r.slid = htons(p.slid);
  r.flow_label = htonl(p.flow_label);
  r.reversible = 1;
  r.mtu = p.mtu;
  r.pkey = htons(p.pkey);
  r.hop_limit = p.hop_limit;
  r.traffic_class = p.tclass;
  r.numb_path = 1;
  r.sl = p.sl;
  r.mtu_selector = 2;  // exactly
  r.rate_selector = 2;
  r.rate = p.rate;
  r.packet_life_time_selector = 2;
  r.packet_life_time = p.packet_life;
  return r;
}

ib_uverbs_ah_attr to_ah_attr(const Path& p, uint8_t sgid_index) {
  ib_uverbs_ah_attr a{};
  a.dlid = p.dlid;
  a.sl = p.sl;
  a.static_rate = p.rate;
  a.port_num = 1;
  a.is_global = p.global ? 1 : 0;
  if (p.global) {
    std::memcpy(a.grh.dgid, p.dgid.data(), 16);
    a.grh.flow_label = p.flow_label;
    a.grh.sgid_index = sgid_index;
    a.grh.hop_limit = p.hop_limit;
    a.grh.traffic_class = p.tclass;
  }
  return a;
}

uint8_t ack_timeout(const Path& p) {
  // ib_cm: packet lifetime + 1 (twice it, in the exponent), and the CA's ACK
  // delay (ours is 15, as rxe reports) when that is larger; 31 at most.
  return uint8_t(std::min(31, std::max(p.packet_life + 1, 15)));
}

}  // namespace vf::cm
