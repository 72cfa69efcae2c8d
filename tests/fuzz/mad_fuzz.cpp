// MADs as a hostile app may send them through its umad port, straight into
// the management agents (daemon/mad/agents.hpp) over a small two-level
// fabric: 4 CAs under 2 leaves and a spine, one cable down, LFTs set, and
// SA multicast groups that persist from input to input as they do in
// fabricd. Input: byte 0 picks the sender and the QP, bytes 1-2 the DLID,
// the rest is the MAD (zero-padded to 256 bytes, as ib_umad pads it).
// Whatever comes back must look like a response the requester can parse.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "daemon/mad/agents.hpp"
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
