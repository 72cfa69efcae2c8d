#include "daemon/mad/route.hpp"

#include <algorithm>

namespace vf::mad {
namespace {

bool carries(const ModelPort& p, bool smp) {
  if (!p.linked || p.peer_node < 0 || p.phys != PhysState::kLinkUp) return false;
  return smp || p.state == PortState::kActive;
}

// Leaves `node` by `port`; the node and port it arrives at.
std::optional<Arrival> cross(const MadModel& model, size_t node, uint8_t port, bool smp) {
  const ModelPort* p = model.nodes[node].port(port);
  if (!p || !carries(*p, smp)) return std::nullopt;
  const ModelPort* q = model.nodes[size_t(p->peer_node)].port(p->peer_port);
  if (!q || !carries(*q, smp)) return std::nullopt;
  return Arrival{size_t(p->peer_node), p->peer_port, 0, 5, 1e9};
}

bool owns_lid(const ModelNode& n, uint16_t lid) {
  if (n.lid == 0) return false;
  const uint32_t span = 1u << n.lmc;
  return lid >= n.lid && uint32_t(lid) < uint32_t(n.lid) + span;
}

}  // namespace

double port_gbps(const ModelPort& p) {
  double lane = 2.5;
  switch (p.speed_ext) {
    case 1: lane = 14; break;
    case 2: lane = 25; break;
    case 4: lane = 50; break;
    case 8: lane = 100; break;
    default: lane = p.speed >= 4 ? 10 : p.speed >= 2 ? 5 : 2.5;
  }
  unsigned lanes = 1;
  switch (p.width) {
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: lanes = 1;
  }
  return lane * lanes;
}

std::optional<Arrival> walk_directed(const MadModel& model, size_t src, Mad& m) {
  if (dr_slid(m) != kPermissiveLid || dr_dlid(m) != kPermissiveLid) return std::nullopt;
  const unsigned cnt = hop_cnt(m);
  if (cnt > kMaxHops) return std::nullopt;
  Arrival at{src, 1, 0, 5, 1e9};
  for (unsigned hop = 1; hop <= cnt; ++hop) {
    const ModelNode& here = model.nodes[at.node];
    if (hop > 1 && !here.is_switch) return std::nullopt;  // a CA does not forward
    const auto next = cross(model, at.node, initial_path(m, hop), true);
    if (!next) return std::nullopt;
    set_return_path(m, hop, next->in_port);
    at = Arrival{next->node, next->in_port, hop, 5, 1e9};
  }
  set_hop_ptr(m, uint8_t(cnt));
  return at;
}

std::optional<Arrival> walk_lid(const MadModel& model, size_t src, uint16_t dlid, bool smp) {
  if (dlid == 0 || dlid >= 0xC000) return std::nullopt;  // unicast LIDs only
  Arrival at{src, 1, 0, 5, 1e9};
  for (unsigned hop = 0; hop <= 64; ++hop) {
    const ModelNode& here = model.nodes[at.node];
    if (owns_lid(here, dlid)) return at;
    uint8_t out = 1;
    if (here.is_switch) {
      if (dlid >= here.lft.size() || here.lft[dlid] == 0xFF || here.lft[dlid] == 0) return std::nullopt;
      out = here.lft[dlid];
    } else if (hop > 0) {
      return std::nullopt;  // reached a CA that is not the destination
    }
    const auto next = cross(model, at.node, out, smp);
    if (!next) return std::nullopt;
    const ModelPort& link = *model.nodes[at.node].port(out);
    at = Arrival{next->node, next->in_port, hop + 1, std::min(at.mtu, link.mtu), std::min(at.gbps, port_gbps(link))};
  }
  return std::nullopt;  // a routing loop
}

std::optional<size_t> MadModel::node_by_lid(uint16_t lid) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (owns_lid(nodes[i], lid)) return i;
  return std::nullopt;
}

}  // namespace vf::mad
