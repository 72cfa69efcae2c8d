#include "daemon/mad/sa_mcast.hpp"

#include "daemon/mad/path_record.hpp"

#include <algorithm>
#include <cstring>

namespace vf::mad {
namespace {

// MCMemberRecord components (ComponentMask bits) and where they are.
enum : unsigned {
  kMgid = 0, kPortGid = 1, kQkey = 2, kMlid = 3, kMtuSel = 4, kMtu = 5, kTclass = 6, kPkey = 7,
  kRateSel = 8, kRate = 9, kLifeSel = 10, kLife = 11, kSl = 12, kFlow = 13, kHop = 14, kScope = 15,
  kJoinState = 16, kProxyJoin = 17,
};
constexpr struct {
  uint16_t off, width;
} kFields[] = {{0, 128},  {128, 128}, {256, 32}, {288, 16}, {304, 2},  {306, 6},  {312, 8},  {320, 16}, {336, 2},
               {338, 6},  {344, 2},   {346, 6},  {352, 4},  {356, 20}, {376, 8},  {384, 4},  {388, 4},  {392, 1}};

bool has(uint64_t mask, unsigned bit) { return (mask >> bit & 1) != 0; }

Gid16 gid_at(const uint8_t* p) {
  Gid16 g;
  std::memcpy(g.data(), p, 16);
  return g;
}

Gid16 port_gid(const MadModel& m, const ModelNode& n) {
  Gid16 g{};
  put_be(g.data(), 8, m.subnet_prefix);
  put_be(g.data() + 8, 8, n.guid);
  return g;
}

// The vHCA whose port GID this is ("" if none).
std::string node_of(const MadModel& m, const Gid16& gid) {
  for (const ModelNode& n : m.nodes)
    if (!n.is_switch && port_gid(m, n) == gid) return n.name;
  return {};
}

bool same_field(const uint8_t* a, const uint8_t* b, unsigned bit) {
  for (unsigned at = 0; at < kFields[bit].width; at += 64) {
    const unsigned w = std::min(64u, unsigned(kFields[bit].width - at));
    if (get_bits(a, kFields[bit].off + at, w) != get_bits(b, kFields[bit].off + at, w)) return false;
  }
  return true;
}

}  // namespace

std::vector<uint8_t> SaGroups::record(const McGroup& g, const Gid16& port, uint8_t join_state) const {
  std::vector<uint8_t> r(kMcMemberRecordSize, 0);
  uint8_t* b = r.data();
  std::memcpy(b, g.mgid.data(), 16);
  std::memcpy(b + 16, port.data(), 16);
  put_be(b + 32, 4, g.qkey);
  put_be(b + 36, 2, g.mlid);
  b[38] = uint8_t(2 << 6 | g.mtu);
  b[39] = g.tclass;
  put_be(b + 40, 2, g.pkey);
  b[42] = uint8_t(2 << 6 | g.rate);
  b[43] = uint8_t(2 << 6 | 0x12);  // PacketLifeTime, opensm's default
  put_bits(b, 352, 4, g.sl);
  put_bits(b, 356, 20, g.flow_label);
  b[47] = g.hop_limit;
  put_bits(b, 384, 4, g.mgid[1] & 0x0F);  // Scope, from the MGID
  put_bits(b, 388, 4, join_state);
  return r;
}

uint16_t SaGroups::free_mlid() const {
  for (uint32_t mlid = 0xC000; mlid <= 0xFFFE; ++mlid)
    if (std::none_of(groups_.begin(), groups_.end(), [&](const McGroup& g) { return g.mlid == mlid; }) &&
        !(in_use_ && in_use_(uint16_t(mlid))))
      return uint16_t(mlid);
  return 0;
}

uint16_t SaGroups::join(const MadModel& model, const uint8_t* q, uint64_t mask, const Gid16& port,
                        std::vector<std::vector<uint8_t>>& out, std::vector<McChange>& changes,
                        const std::string& node) {
  const uint8_t state = uint8_t(get_bits(q, kFields[kJoinState].off, 4));
  if (!has(mask, kJoinState) || state == 0) return kSaInsufficientComponents;
  Gid16 mgid = has(mask, kMgid) ? gid_at(q) : Gid16{};
  const bool create_mgid = mgid == Gid16{};
  auto it = create_mgid ? groups_.end()
                        : std::find_if(groups_.begin(), groups_.end(), [&](const McGroup& g) { return g.mgid == mgid; });
  if (it == groups_.end()) {
    // Creating: the group's parameters must all be given (opensm's rule).
    for (unsigned bit : {kQkey, kPkey, kSl, kFlow, kTclass})
      if (!has(mask, bit)) return kSaInsufficientComponents;
    if (!create_mgid && mgid[0] != 0xFF) return kSaInvalidGid;
    if (groups_.size() >= kMaxGroups) return kSaNoResources;
    const uint16_t mlid = free_mlid();
    if (!mlid) return kSaNoResources;
    McGroup g;
    if (create_mgid) {  // ff12:601b:ffff::<n>, link-local scope like IPoIB's
      mgid = Gid16{0xFF, 0x12, 0x60, 0x1B, 0xFF, 0xFF};
      put_be(mgid.data() + 12, 4, next_mgid_++);
    }
    g.mgid = mgid;
    g.mlid = mlid;
    g.qkey = uint32_t(get_be(q + 32, 4));
    g.pkey = uint16_t(get_be(q + 40, 2));
    g.tclass = q[39];
    g.sl = uint8_t(get_bits(q, 352, 4));
    g.flow_label = uint32_t(get_bits(q, 356, 20));
    g.hop_limit = q[47];
    for (const ModelNode& n : model.nodes)
      if (!n.is_switch && port_gid(model, n) == port && n.port(1)) {
        g.mtu = n.port(1)->mtu;
        g.rate = rate_code(n.port(1)->width, n.port(1)->speed, n.port(1)->speed_ext);
      }
    groups_.push_back(g);
    it = groups_.end() - 1;
  } else {
    // Joining: what the joiner states about the group must be true of it.
    const std::vector<uint8_t> mine = record(*it, port, state);
    for (unsigned bit : {kQkey, kPkey, kSl, kTclass, kFlow, kMlid})
      if (has(mask, bit) && !same_field(q, mine.data(), bit)) return kSaReqInvalid;
  }
  uint8_t& joined = it->members[port];
  const bool was_member = joined != 0;
  joined |= state;
  if (!was_member) changes.push_back({node, it->mlid, true});
  out.push_back(record(*it, port, joined));
  return 0;
}

uint16_t SaGroups::leave(const uint8_t* q, uint64_t mask, const Gid16& port, std::vector<std::vector<uint8_t>>& out,
                         std::vector<McChange>& changes, const std::string& node) {
  if (!has(mask, kMgid) || !has(mask, kJoinState)) return kSaInsufficientComponents;
  const Gid16 mgid = gid_at(q);
  auto it = std::find_if(groups_.begin(), groups_.end(), [&](const McGroup& g) { return g.mgid == mgid; });
  if (it == groups_.end()) return kSaReqInvalid;
  auto m = it->members.find(port);
  if (m == it->members.end()) return kSaReqInvalid;
  const uint8_t state = uint8_t(get_bits(q, kFields[kJoinState].off, 4));
  m->second &= uint8_t(~state);
  out.push_back(record(*it, port, m->second));
  if (m->second == 0) {
    it->members.erase(m);
    changes.push_back({node, it->mlid, false});
  }
  if (it->members.empty()) groups_.erase(it);
  return 0;
}

uint16_t SaGroups::process(const MadModel& model, size_t requester, uint8_t method, const uint8_t* query,
                           uint64_t mask, std::vector<std::vector<uint8_t>>& records,
                           std::vector<McChange>& changes) {
  if (mask >> 18) return kSaReqInvalid;  // beyond ProxyJoin: no such component
  if (method == kSet || method == kSaDelete) {
    if (requester >= model.nodes.size()) return kSaReqInvalid;
    const Gid16 mine = port_gid(model, model.nodes[requester]);
    // A port joins or leaves for itself: proxy joins are not allowed here.
    if (!has(mask, kPortGid) || gid_at(query + 16) != mine) return kSaReqInvalid;
    const std::string node = node_of(model, mine);
    return method == kSet ? join(model, query, mask, mine, records, changes, node)
                          : leave(query, mask, mine, records, changes, node);
  }
  for (const McGroup& g : groups_)
    for (const auto& [port, state] : g.members) {
      std::vector<uint8_t> r = record(g, port, state);
      bool match = true;
      for (unsigned bit = 0; bit < 18 && match; ++bit)
        if (has(mask, bit) && bit != kMtuSel && bit != kRateSel && bit != kLifeSel) match = same_field(query, r.data(), bit);
      if (match) records.push_back(std::move(r));
    }
  return 0;
}

}  // namespace vf::mad
