// UD multicast: the verbs (attach/detach with the kernel's checks), the group
// table, and the MLID membership the subnet manager hears about.
#include "device/engine/mcast.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/multicast.hpp"
#include "dataplane/wire/transport.hpp"
#include "device/engine/hca_impl.hpp"
#include "device/engine/packet.hpp"

namespace vf::engine {

int McastTable::attach(Qp& qp, const McastGid& gid, uint16_t lid) {
  auto it = groups_.find(gid);
  if (it != groups_.end()) {
    McastGroup& g = it->second;
    // One MLID per group, as an SA assigns it: a QP cannot make the SM keep
    // a tree per MLID it invents, nor hold places under several.
    if (g.lid != lid) return EINVAL;
    for (const McastMember& e : g.members)
      if (e.qp == &qp) return 0;  // uverbs: attaching twice is a no-op
    if (g.members.size() >= limits_.qps_per_group) return ENOMEM;
  } else if (groups_.size() >= limits_.groups) {
    return ENOMEM;
  }
  if (total_ >= limits_.total) return ENOMEM;
  McastGroup& g = groups_[gid];
  const bool created = g.members.empty();
  g.lid = lid;
  g.members.push_back(McastMember{&qp});
  ++total_;
  ++qp.mcast_attached;
  if (created) lid_ref(lid, +1);
  return 0;
}

int McastTable::detach(Qp& qp, const McastGid& gid, uint16_t lid) {
  auto it = groups_.find(gid);
  if (it == groups_.end() || it->second.lid != lid) return EINVAL;
  auto& m = it->second.members;
  const auto e = std::find_if(m.begin(), m.end(), [&](const McastMember& x) { return x.qp == &qp; });
  if (e == m.end()) return EINVAL;
  m.erase(e);
  --total_;
  --qp.mcast_attached;
  if (m.empty()) {
    groups_.erase(it);
    lid_ref(lid, -1);
  }
  return 0;
}

void McastTable::detach_all(Qp& qp) {
  for (auto it = groups_.begin(); it != groups_.end() && qp.mcast_attached;) {
    auto& m = it->second.members;
    const auto e = std::find_if(m.begin(), m.end(), [&](const McastMember& x) { return x.qp == &qp; });
    if (e != m.end()) {
      m.erase(e);
      --total_;
      --qp.mcast_attached;
    }
    if (!m.empty()) {
      ++it;
      continue;
    }
    lid_ref(it->second.lid, -1);
    it = groups_.erase(it);
  }
}

bool McastTable::loops_back(const Qp& sender, const uint8_t* dgid) const {
  const McastGroup* g = find(dgid);
  if (!g) return false;
  for (const McastMember& e : g->members)
    if (e.qp != &sender || !sender.block_self_mcast_lb) return true;
  return false;
}

// Groups per MLID: an MLID may carry several MGIDs (IPoIB maps many groups
// onto few MLIDs); the port is a member while any of them has a member here.
void McastTable::lid_ref(uint16_t lid, int delta) {
  if (!is_multicast_lid(lid)) return;  // Ethernet: no MLID, no SM
  const uint32_t n = lid_refs_[lid] += uint32_t(delta);
  if (n == 0) lid_refs_.erase(lid);
  if ((delta > 0 && n == 1) || (delta < 0 && n == 0))
    if (membership_) membership_(lid, delta > 0);
}

// ------------------------------------------------------------------- verbs

namespace {

// uverbs' and ib_core's checks, common to attach and detach.
int check_mcast_args(const Engine& eng, const Qp* qp, const vhca_mcast_req& req, McastGid& gid) {
  if (!qp || qp->type != IBV_QPT_UD) return EINVAL;
  if (!is_multicast_gid(req.gid)) return EINVAL;
  std::memcpy(gid.data(), req.gid, 16);
  if (eng.io.info().link_layer == LinkLayer::kInfiniBand && !is_multicast_lid(req.lid)) return EINVAL;
  return 0;
}

uint16_t mcast_lid(const Engine& eng, const vhca_mcast_req& req) {
  return eng.io.info().link_layer == LinkLayer::kInfiniBand ? req.lid : 0;  // ignored on RoCE
}

// A UD QP receives from RTR on, including SQE (only its SQ failed).
bool may_receive(const Qp& q) {
  return q.state != IBV_QPS_RESET && q.state != IBV_QPS_INIT && q.state != IBV_QPS_ERR;
}

}  // namespace

int Hca::Impl::attach_mcast(ClientId id, const vhca_mcast_req& req) {
  Qp* qp = eng_.owned<Qp>(id, req.qp_handle);
  McastGid gid;
  if (int err = check_mcast_args(eng_, qp, req, gid)) return err;
  return eng_.mcast.attach(*qp, gid, mcast_lid(eng_, req));
}

int Hca::Impl::detach_mcast(ClientId id, const vhca_mcast_req& req) {
  Qp* qp = eng_.owned<Qp>(id, req.qp_handle);
  McastGid gid;
  if (int err = check_mcast_args(eng_, qp, req, gid)) return err;
  return eng_.mcast.detach(*qp, gid, mcast_lid(eng_, req));
}

// ----------------------------------------------------------------- receive

// A datagram to a group: one copy per attached QP that may take it (its
// state, its P_Key; a QP created with BLOCK_SELF_MCAST_LB never gets its own
// packets back), each then received like any UD datagram (Q_Key, WQE, GRH).
// Without a GRH the packet names no group (IBA 8.4.1): dropped.
void Hca::Impl::mcast_receive(const Pkt& p, const RxMeta& meta, rte_mbuf* m) {
  // Addressed to a group throughout: on IB the DLID is an MLID too.
  const bool ib = eng_.io.info().link_layer == LinkLayer::kInfiniBand;
  const McastGroup* g = meta.has_grh && (!ib || is_multicast_lid(meta.dlid)) ? eng_.mcast.find(meta.dgid) : nullptr;
  Qp* to[kMaxMcastQpAttach];
  unsigned n = 0;
  if (g) {
    const bool from_us = sent_by_this_port(meta);
    const uint32_t sqpn = vf::wire::deth_sqpn(p.ext);
    for (const McastMember& e : g->members) {
      Qp* q = e.qp;
      if (!may_receive(*q)) continue;
      if (from_us && q->block_self_mcast_lb && q->qpn == sqpn) continue;
      if (!pkeys_match(vf::wire::bth_pkey(p.bth), q->pkey)) {
        ++eng_.ctr.pkey_violations;
        continue;
      }
      to[n++] = q;
    }
  }
  if (n == 0) {
    ++eng_.ctr.mcast_rx_no_member;
    ++eng_.ctr.rx_dropped;
    rte_pktmbuf_free(m);
    return;
  }
  ++eng_.ctr.mcast_rx_packets;
  // Copies first: ud_receive writes the GRH over the original's headers.
  // Delivering to one member may place earlier datagrams and so fail a later
  // member's QP: each is checked again just before its turn.
  for (unsigned i = 0; i + 1 < n; ++i) {
    if (!may_receive(*to[i])) continue;
    rte_mbuf* c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
    Pkt pc;
    if (!c || !parse_packet(c, pc)) {
      ++eng_.ctr.mcast_copy_failures;
      ++eng_.ctr.rx_dropped;
      if (c) rte_pktmbuf_free(c);
      continue;
    }
    resp_.ud_receive(*to[i], pc, meta, c);
  }
  if (!may_receive(*to[n - 1])) {
    ++eng_.ctr.rx_dropped;
    rte_pktmbuf_free(m);
    return;
  }
  resp_.ud_receive(*to[n - 1], p, meta, m);
}

bool Hca::Impl::sent_by_this_port(const RxMeta& meta) const {
  const PortInfo& port = eng_.io.info();
  if (port.link_layer == LinkLayer::kInfiniBand) {
    const uint16_t mask = uint16_t(~((1u << port.lmc) - 1));
    return port.lid != 0 && (meta.slid & mask) == (port.lid & mask);
  }
  for (const Gid& g : port.gids)
    if (g != Gid{} && std::memcmp(g.data(), meta.sgid, 16) == 0) return true;  // empty slots name no one
  return false;
}

int Hca::attach_mcast(ClientId id, const vhca_mcast_req& req) { return impl_->attach_mcast(id, req); }
int Hca::detach_mcast(ClientId id, const vhca_mcast_req& req) { return impl_->detach_mcast(id, req); }
void Hca::on_mcast_membership(McastMembershipFn fn) { impl_->eng_.mcast.on_membership(std::move(fn)); }

}  // namespace vf::engine
