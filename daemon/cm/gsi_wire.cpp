#include "daemon/cm/gsi_wire.hpp"

#include <infiniband/verbs.h>

#include <boost/asio/post.hpp>
#include <cstring>

#include "daemon/cm/cm_mad.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/fabric/topology.hpp"
#include "device/engine/hca.hpp"

namespace vf::cm {
namespace {
constexpr uint8_t kIpHopLimit = 64;

// The address vector from `from`'s QP1 to `to`'s.
ibv_ah_attr av_to(const Port& from, const Port& to) {
  ibv_ah_attr a{};
  a.port_num = 1;
  if (from.infiniband) {
    a.dlid = to.lid;
    return a;
  }
  a.is_global = 1;
  std::memcpy(a.grh.dgid.raw, to.gid.data(), 16);
  a.grh.sgid_index = from.gid_index;
  a.grh.hop_limit = kIpHopLimit;
  return a;
}
}  // namespace

GsiWire::GsiWire(boost::asio::io_context& io, Lcore& lcore, Topology& topo, const std::vector<Port>& ports)
    : io_(io),
      lcore_(lcore),
      topo_(topo),
      ports_(ports),
      unsent_(std::make_unique<std::atomic<uint64_t>[]>(ports.size())),
      dropped_(std::make_unique<std::atomic<uint64_t>[]>(ports.size())) {}

void GsiWire::add_drops(size_t vhca, CmStats& s) const {
  if (vhca >= ports_.size()) return;
  s.mad_unsent += unsent_[vhca].load(std::memory_order_relaxed);
  s.mad_dropped += dropped_[vhca].load(std::memory_order_relaxed);
}

void GsiWire::attach(Service& svc) {
  svc_ = &svc;
  svc.set_wire(this);
  for (size_t i = 0; i < ports_.size(); ++i)
    topo_.engine(i).on_gsi([this, i](const uint8_t* mad, const engine::GsiSource& from) {
      std::array<uint8_t, 256> copy;
      std::memcpy(copy.data(), mad, copy.size());
      boost::asio::post(io_, [this, i, copy, from] { arrived(i, copy, from); });
    });
}

void GsiWire::send(size_t from, size_t to, const Msg& m) {
  const CmMad mad = encode(m, ports_[from].node_guid, tid_++);
  const ibv_ah_attr av = av_to(ports_[from], ports_[to]);
  Topology* topo = &topo_;
  std::atomic<uint64_t>* unsent = &unsent_[from];
  if (!lcore_.post([topo, unsent, from, mad, av] {
        if (!topo->engine(from).send_gsi(mad.data(), av)) unsent->fetch_add(1, std::memory_order_relaxed);
      }))
    unsent->fetch_add(1, std::memory_order_relaxed);  // the lcore is swamped
}

void GsiWire::arrived(size_t at, const std::array<uint8_t, 256>& mad, const engine::GsiSource& from) {
  std::optional<Msg> m = decode(mad);
  const Port& here = ports_[at];
  const Port* sender = nullptr;
  for (const Port& p : ports_) {
    if (p.fabric != here.fabric) continue;
    if (here.infiniband ? p.lid == from.slid
                        : from.has_grh && std::memcmp(p.gid.data(), from.sgid, 16) == 0)
      sender = &p;
  }
  if (!m || !sender || !svc_) {
    dropped_[at].fetch_add(1, std::memory_order_relaxed);
    return;
  }
  m->from_vhca = sender->vhca;
  svc_->receive(at, *m);
}

}  // namespace vf::cm
