#include "daemon/mad/path_record.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "daemon/mad/mad.hpp"
#include "daemon/mad/route.hpp"

namespace vf::mad {
namespace {

// enum ibv_rate: code -> Gb/s.
constexpr struct {
  uint8_t code;
  double gbps;
} kRates[] = {{2, 2.5},  {5, 5},    {3, 10},   {6, 20},   {4, 30},   {7, 40},   {8, 60},   {9, 80},
              {10, 120}, {11, 14},  {12, 56},  {13, 112}, {14, 168}, {15, 25},  {16, 100}, {17, 200},
              {18, 300}, {19, 28},  {20, 50},  {21, 400}, {22, 600}};

// opensm's default packet_life_time (4.096 us x 2^18, about 1 s).
constexpr uint8_t kPacketLifeTime = 0x12;
constexpr uint8_t kSelectorExactly = 2;

uint8_t code_for(double gbps) {
  uint8_t best = 2;
  double best_gbps = 0;
  for (const auto& r : kRates)
    if (r.gbps <= gbps + 1e-9 && r.gbps > best_gbps) best = r.code, best_gbps = r.gbps;
  return best;
}

uint64_t port_guid(const ModelNode& n) { return n.guid; }

}  // namespace

uint8_t rate_code(uint8_t width, uint8_t speed, uint8_t speed_ext) {
  ModelPort p;
  p.width = width, p.speed = speed, p.speed_ext = speed_ext;
  return code_for(port_gbps(p));
}

double rate_gbps(uint8_t code) {
  for (const auto& r : kRates)
    if (r.code == code) return r.gbps;
  return 0;
}

std::optional<PathRecord> path_record(const MadModel& model, size_t src, size_t dst) {
  const ModelNode& s = model.nodes.at(src);
  const ModelNode& d = model.nodes.at(dst);
  if (!s.lid || !d.lid) return std::nullopt;
  uint8_t mtu = 5;
  double gbps = 1e9;
  if (src != dst) {
    const auto there = walk_lid(model, src, d.lid, false);
    const auto back = walk_lid(model, dst, s.lid, false);
    if (!there || there->node != dst || !back || back->node != src) return std::nullopt;
    mtu = std::min(there->mtu, back->mtu);
    gbps = std::min(there->gbps, back->gbps);
  } else if (const ModelPort* p = s.port(1); p && !s.is_switch) {
    mtu = p->mtu;  // loopback: the port's own
    gbps = port_gbps(*p);
  }
  if (gbps > 1e8) gbps = 2.5;
  PathRecord r{};
  uint8_t* b = r.data();
  put_be(b + 8, 8, model.subnet_prefix);
  put_be(b + 16, 8, port_guid(d));  // DGID
  put_be(b + 24, 8, model.subnet_prefix);
  put_be(b + 32, 8, port_guid(s));  // SGID
  put_be(b + 40, 2, d.lid);
  put_be(b + 42, 2, s.lid);
  // RawTraffic 0, FlowLabel 0, HopLimit 0: inside the subnet.
  b[48] = 0;                         // TClass
  b[49] = 0x80 | 1;                  // Reversible, NumbPath 1
  put_be(b + 50, 2, s.pkeys.empty() ? 0xFFFF : s.pkeys[0]);
  put_be(b + 52, 2, 0);              // QoSClass 0, SL 0
  b[54] = uint8_t(kSelectorExactly << 6 | mtu);
  b[55] = uint8_t(kSelectorExactly << 6 | code_for(gbps));
  b[56] = uint8_t(kSelectorExactly << 6 | kPacketLifeTime);
  b[57] = 0;                         // Preference
  return r;
}

}  // namespace vf::mad
