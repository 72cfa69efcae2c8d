// MADs as a hostile app may send them through its umad port, straight into
// the management agents (daemon/mad/agents.hpp) over a small two-level
// fabric: 4 CAs under 2 leaves and a spine, one cable down, LFTs set, and
// SA multicast groups that persist from input to input as they do in
// fabricd. Input: byte 0 picks the sender and the QP, bytes 1-2 the DLID,
// the rest is the MAD (zero-padded to 256 bytes, as ib_umad pads it).
// Whatever comes back must look like a response the requester can parse.
// A directed-route SMP is also carried hop by hop as fabricd's switches carry
// the packet (dr_smp.hpp): it must stay on real ports, end, reach the node
// the model's walk reaches, and its response must come back to the sender.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "daemon/mad/agents.hpp"
#include "daemon/mad/dr_smp.hpp"
#include "daemon/mad/route.hpp"
#include "daemon/mad/sa.hpp"

namespace {

using namespace vf::mad;

ModelPort cable(int peer, uint8_t peer_port, bool up = true) {
  ModelPort p;
  p.linked = true;
  p.state = up ? vf::PortState::kActive : vf::PortState::kDown;
  p.phys = up ? vf::PhysState::kLinkUp : vf::PhysState::kPolling;
  p.width = 2;
  p.speed = 4;
  p.speed_ext = 2;
  p.peer_node = peer;
  p.peer_port = peer_port;
  return p;
}

// ca0..ca3 (LIDs 1-4), leaf0 (5): ca0 ca1 on ports 1-2, spine on 3;
// leaf1 (6): ca2 ca3 on 1-2, spine on 3; spine (7, the SM): leaf0 on 1,
// leaf1 on 2. ca3's cable is down.
MadModel build() {
  MadModel m;
  for (int i = 0; i < 4; ++i) {
    ModelNode n;
    n.name = "ca" + std::to_string(i);
    n.desc = "host " + n.name;
    n.guid = 0x1000 + uint64_t(i);
    n.lid = uint16_t(i + 1);
    n.pkeys = {0xFFFF, 0x8001};
    n.pkey_table_len = 64;
    n.ports.push_back(cable(4 + i / 2, uint8_t(1 + i % 2), i != 3));
    m.nodes.push_back(n);
  }
  for (int s = 0; s < 3; ++s) {
    ModelNode n;
    n.is_switch = true;
    n.name = s == 2 ? "spine" : "leaf" + std::to_string(s);
    n.desc = n.name;
    n.guid = 0x2000 + uint64_t(s);
    n.lid = uint16_t(5 + s);
    n.ports.resize(8);
    n.lft.assign(8, 0xFF);
    m.nodes.push_back(n);
  }
  for (int i = 0; i < 4; ++i) m.nodes[size_t(4 + i / 2)].ports[size_t(i % 2)] = cable(i, 1, i != 3);
  m.nodes[4].ports[2] = cable(6, 1);
  m.nodes[5].ports[2] = cable(6, 2);
  m.nodes[6].ports[0] = cable(4, 3);
  m.nodes[6].ports[1] = cable(5, 3);
  auto& l0 = m.nodes[4].lft;
  auto& l1 = m.nodes[5].lft;
  auto& sp = m.nodes[6].lft;
  l0 = {0xFF, 1, 2, 3, 3, 0, 3, 3};
  l1 = {0xFF, 3, 3, 1, 2, 3, 0, 3};
  sp = {0xFF, 1, 1, 2, 2, 1, 2, 0};
  m.sm_lid = 7;
  m.sm_node = 6;
  m.sm_activity = 3;
  return m;
}

// Carries `m` out of `node`'s `port` over the model's cables that are up, as
// each node's dr_receive says, until a node keeps it. Returns that node, or
// -1 when it is dropped on the way.
int carry(const MadModel& model, size_t node, uint8_t port, Mad& m) {
  for (int hops = 0; hops <= 2 * int(kMaxHops) + 2; ++hops) {
    const ModelNode& here = model.nodes[node];
    const ModelPort* out = here.port(port);
    if (!out || !out->linked || out->phys != vf::PhysState::kLinkUp || out->peer_node < 0) return -1;
    node = size_t(out->peer_node);
    const ModelNode& there = model.nodes[node];
    const DrAction a = dr_receive(m, there.is_switch, out->peer_port, there.num_ports());
    if (a.step == DrStep::kDrop) return -1;
    if (a.step == DrStep::kLocal) return int(node);
    if (a.port < 1 || a.port > there.num_ports()) std::abort();  // never a port the node lacks
    port = a.port;
  }
  std::abort();  // a directed route always ends
}

// The packet path of a pure directed-route SMP against the model's walk.
void directed_route_as_packets(const MadModel& model, size_t src, const Mad& req) {
  Mad m = req;
  m[4] &= 0x7F;  // what an app sends: D clear, hop pointer 0
  m[6] = 0;
  Mad walked = m;
  const auto model_end = walk_directed(model, src, walked);
  const DrAction start = dr_start(m);
  if (start.step == DrStep::kDrop || (start.step == DrStep::kOut && start.port != 1)) {
    if (model_end && hop_cnt(req) > 0 && initial_path(req, 1) == 1) std::abort();  // the model went on
    return;
  }
  const int end = start.step == DrStep::kLocal ? int(src) : carry(model, src, start.port, m);
  // Where both say it arrives, they agree (the model also crosses links in Init).
  if (end >= 0 && model_end && size_t(end) != model_end->node) std::abort();
  if (end < 0) return;
  if (hop_ptr(m) != hop_cnt(m) + 1) std::abort();
  m[3] = kGetResp;
  set_status(m, kStatusDrDirection);
  const DrAction back = dr_respond(m);
  if (back.step == DrStep::kDrop) std::abort();  // what arrived can always answer
  const int home = back.step == DrStep::kLocal ? end : carry(model, size_t(end), back.port, m);
  if (home != int(src) || hop_ptr(m) != 0) std::abort();  // the response retraces the path
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const MadModel model = build();
  static SaGroups groups;
  if (size < 3) return 0;
  const size_t src = data[0] % 4;
  const uint32_t qpn = (data[0] >> 2) & 1;
  const uint16_t dlid = uint16_t(data[1] << 8 | data[2]);
  Mad m{};
  std::memcpy(m.data(), data + 3, std::min(size - 3, m.size()));
  if (m[1] == kClassSmiDr && dr_slid(m) == kPermissiveLid && dr_dlid(m) == kPermissiveLid && hop_cnt(m) <= kMaxHops)
    directed_route_as_packets(model, src, m);
  const MadOutcome out = answer_mad(model, src, qpn, dlid, m, &groups);
  if (out.response) {
    const Mad& r = *out.response;
    if (!(r[3] & kResponseBit)) std::abort();          // a response method
    if (r[1] != m[1] || r[16] != m[16] || r[17] != m[17]) std::abort();  // class and attribute kept
    if (!out.table.empty() && (out.table.size() < kSaData || out.table.size() > kSaMaxResponse)) std::abort();
  } else if (!out.table.empty()) {
    std::abort();
  }
  if (out.reset && (out.reset->node >= model.nodes.size() || !model.nodes[out.reset->node].port(out.reset->port)))
    std::abort();  // a reset names a real port (fabricd would throw on the lcore otherwise)
  if (groups.groups().size() > SaGroups::kMaxGroups) std::abort();
  return 0;
}
