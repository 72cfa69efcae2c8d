#include "daemon/cm/fabric_routes.hpp"

#include <boost/asio/post.hpp>
#include <algorithm>
#include <cstring>

#include "daemon/mad/mad.hpp"
#include "daemon/mad/sa.hpp"
#include "daemon/umad/umad_server.hpp"

namespace vf::cm {
namespace {
constexpr uint8_t kRocePacketLife = 16;  // CMA_IBOE_PACKET_LIFETIME
constexpr uint8_t kIpHopLimit = 64;
constexpr uint64_t kCompDgid = 1u << 2, kCompSgid = 1u << 3;
}  // namespace

Path roce_path(const Port& src, const Port& dst) {
  Path p;
  p.sgid = src.gid;
  p.dgid = dst.gid;
  p.mtu = std::min(src.mtu, dst.mtu);
  p.packet_life = kRocePacketLife;
  p.hop_limit = kIpHopLimit;
  p.global = true;
  return p;
}

std::array<uint8_t, 256> path_query(const Port& src, const Port& dst, uint64_t tid) {
  mad::Mad m{};
  m[0] = 1;  // base version
  m[1] = mad::kClassSubnAdm;
  m[2] = mad::kSaClassVersion;
  m[3] = mad::kGet;
  mad::set_tid(m, tid);
  mad::put_be(&m[16], 2, mad::kAttrPathRecord);
  mad::put_be(&m[48], 8, kCompDgid | kCompSgid);
  std::memcpy(&m[mad::kSaData + 8], dst.gid.data(), 16);   // DGID
  std::memcpy(&m[mad::kSaData + 24], src.gid.data(), 16);  // SGID
  return m;
}

std::optional<Path> path_from_response(const std::array<uint8_t, 256>& r) {
  if (mad::method(r) != mad::kGetResp || mad::status(r) != 0 || mad::attr_id(r) != mad::kAttrPathRecord)
    return std::nullopt;
  const uint8_t* pr = &r[mad::kSaData];
  Path p;
  std::memcpy(p.dgid.data(), pr + 8, 16);
  std::memcpy(p.sgid.data(), pr + 24, 16);
  p.dlid = uint16_t(mad::get_be(pr + 40, 2));
  p.slid = uint16_t(mad::get_be(pr + 42, 2));
  const uint32_t fl_hop = uint32_t(mad::get_be(pr + 44, 4));
  p.flow_label = (fl_hop >> 8) & 0xFFFFF;
  p.hop_limit = uint8_t(fl_hop);
  p.tclass = pr[48];
  p.pkey = uint16_t(mad::get_be(pr + 50, 2));
  p.sl = pr[53] & 0x0F;
  p.mtu = pr[54] & 0x3F;
  p.rate = pr[55] & 0x3F;
  p.packet_life = pr[56] & 0x3F;
  p.global = p.hop_limit > 1;  // off the subnet: a GRH (ib_cm's rule)
  if (p.mtu < 1 || p.mtu > 5 || p.dlid == 0) return std::nullopt;
  return p;
}

FabricRoutes::FabricRoutes(boost::asio::io_context& io, const std::vector<Port>& ports,
                           std::vector<UmadBackend*> mads)
    : io_(io), ports_(ports), mads_(std::move(mads)) {}

void FabricRoutes::resolve(size_t src, size_t dst, std::function<void(std::optional<Path>)> done) {
  const Port& s = ports_.at(src);
  const Port& d = ports_.at(dst);
  if (!s.infiniband) {
    boost::asio::post(io_, [done = std::move(done), p = roce_path(s, d)] { done(p); });
    return;
  }
  const auto q = path_query(s, d, uint64_t(0x434D) << 32 | next_tid_++);  // "CM"
  auto back = [&io = io_, alive = std::weak_ptr<int>(alive_), done = std::move(done)](UmadResult r) mutable {
    // The lcore's thread: back to the control thread with the answer.
    std::optional<Path> p;
    if (r.response) p = path_from_response(*r.response);
    boost::asio::post(io, [alive, done = std::move(done), p] {
      if (alive.lock()) done(p);
    });
  };
  mads_.at(src)->send(1, s.sm_lid, q, std::move(back));
}

}  // namespace vf::cm
