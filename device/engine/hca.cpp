// Hca front end: clients, device/port queries, PDs, and the fast-path loop
// (poll + receive dispatch). See hca_impl.hpp for the file map.
//
// Fast path in one paragraph: receive() accepts in-order requests into the
// placement queue; poll() first places what is due there (one DMA write per
// app, then the receive completions and ACKs that waited for it), sends the
// responses (ACK/NAK) left owed, then visits every QP round-robin with a
// small quantum: in RTS/SQD it runs the requester (reads the app's SQ
// producer, copies and validates new WQEs, segments them to the path MTU,
// DMA-reads a burst of payloads straight into the mbufs with one call); in
// ERR it flushes SQ and RQ. Timers (retransmit, RNR) only rewind state; the
// next poll() sends. poll() returns false only when none of that had anything
// to do.
#include "device/engine/hca.hpp"

#include <endian.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "device/engine/congestion.hpp"
#include "device/engine/hca_impl.hpp"
#include "device/engine/opcodes.hpp"
#include "device/engine/route.hpp"
#include "core/multicast.hpp"

namespace vf::engine {

Qp::Qp()
    : retrans_timer(&Completer::retrans_timer_fired),
      rnr_timer(&Completer::rnr_timer_fired),
      pace_timer(&Completer::pace_timer_fired) {
  retrans_timer.qp = this;
  pace_timer.qp = this;
  rnr_timer.qp = this;
}

Hca::Impl::Impl(const HcaConfig& cfg, vf::Scheduler& sched, dp::HostPort& io)
    : eng_(cfg, sched, io) {
  qp_gen_.assign(size_t(eng_.cfg.limits.max_qp) + 1, 0);
  const DeviceLimits& l = eng_.cfg.limits;
  eng_.mcast.set_limits({l.max_mcast_grp, l.max_mcast_qp_attach, l.max_total_mcast_qp_attach});
  active_.reserve(eng_.cfg.limits.max_qp);
  if (getrandom(&rng_, sizeof(rng_), 0) != sizeof(rng_)) rng_ = uint64_t(getpid()) * 0x9E3779B97F4A7C15ull;
  rng_ |= 1;
}

Hca::Impl::~Impl() {
  place_.drop();  // a dying device places nothing more; no queued mbuf outlives it
  for (ClientId id : eng_.objs.client_ids()) close_client(id);
}

uint32_t Hca::Impl::random32() {
  // xorshift64*: keys need to be unpredictable to other apps, not crypto.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return uint32_t((rng_ * 0x2545F4914F6CDD1Dull) >> 32);
}

// ------------------------------------------------------------------ clients

int Hca::Impl::open_client(ClientId id, pid_t pid, int mem_fd, vhca_open_context_rsp& rsp) {
  if (eng_.client(id)) {
    if (mem_fd >= 0) close(mem_fd);
    return EEXIST;
  }
  auto c = std::make_unique<Client>();
  c->id = id;
  if (int err = c->mem.open(pid, mem_fd)) return err;
  eng_.objs.add_client(std::move(c));
  rsp.num_comp_vectors = 1;
  rsp.reserved = 0;
  return 0;
}

void Hca::allow_controlled_qkeys(ClientId id) {
  if (Client* c = impl_->eng_.client(id)) c->controlled_qkeys = true;
}

int Hca::copy_in_process(ClientId id) {
  Client* c = impl_->eng_.client(id);
  return c && c->mem.copy_in_process() ? 0 : EINVAL;
}

void Hca::Impl::close_client(ClientId id) {
  Client* c = eng_.client(id);
  if (!c) return;
  place_.flush();  // the queue points at QPs about to go
  destroy_all(c, TeardownOrder{});
  eng_.objs.erase_client(id);
}

// ---------------------------------------------------------------- queries

int Hca::Impl::query_device(ClientId id, vhca_query_device_rsp& rsp) {
  if (!eng_.client(id)) return EINVAL;
  const DeviceLimits& l = eng_.cfg.limits;
  ibv_device_attr& a = rsp.attr;
  std::memset(&a, 0, sizeof(a));
  std::strncpy(a.fw_ver, eng_.cfg.fw_ver.c_str(), sizeof(a.fw_ver) - 1);
  a.node_guid = htobe64(eng_.cfg.node_guid);
  a.sys_image_guid = htobe64(eng_.cfg.sys_image_guid);
  a.max_mr_size = l.max_mr_size;
  a.page_size_cap = 0xFFFFF000;  // any page size from 4 KiB: we never pin
  a.vendor_id = eng_.cfg.vendor_id;
  a.vendor_part_id = eng_.cfg.vendor_part_id;
  a.hw_ver = eng_.cfg.hw_ver;
  a.max_qp = int(l.max_qp);
  a.max_qp_wr = int(l.max_qp_wr);
  // Memory windows of both types (2B: tied to a QP) and the base memory
  // management extensions they come with (LOCAL_INV, SEND_WITH_INV), as rxe.
  a.device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID |
                       IBV_DEVICE_CHANGE_PHY_PORT | IBV_DEVICE_PORT_ACTIVE_EVENT |
                       IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B |
                       IBV_DEVICE_MEM_MGT_EXTENSIONS;
  a.max_sge = VHCA_MAX_SGE;
  a.max_sge_rd = VHCA_MAX_SGE;
  a.max_cq = int(l.max_cq);
  a.max_cqe = int(l.max_cqe);
  a.max_mr = int(l.max_mr);
  a.max_pd = int(l.max_pd);
  a.max_qp_rd_atom = l.max_qp_rd_atom;
  a.max_ee_rd_atom = 0;
  a.max_res_rd_atom = int(l.max_qp_rd_atom * l.max_qp);
  a.max_qp_init_rd_atom = l.max_qp_init_rd_atom;
  a.max_ee_init_rd_atom = 0;
  // Atomic against every atomic of this device: one lcore executes them all
  // (rd_atomic_responder.cpp), not against the app's own CPU stores.
  a.atomic_cap = IBV_ATOMIC_HCA;
  a.max_ee = 0;
  a.max_rdd = 0;
  a.max_mw = int(l.max_mw);
  a.max_raw_ipv6_qp = 0;
  a.max_raw_ethy_qp = 0;
  a.max_mcast_grp = int(l.max_mcast_grp);
  a.max_mcast_qp_attach = int(l.max_mcast_qp_attach);
  a.max_total_mcast_qp_attach = int(l.max_total_mcast_qp_attach);
  a.max_ah = int(l.max_ah);
  a.max_fmr = 0;
  a.max_map_per_fmr = 0;
  a.max_srq = int(l.max_srq);
  a.max_srq_wr = int(l.max_srq_wr);
  a.max_srq_sge = int(l.max_srq_sge);
  a.max_pkeys = uint16_t(eng_.io.info().pkey_table_len());
  a.local_ca_ack_delay = 15;
  a.phys_port_cnt = 1;
  return 0;
}

int Hca::Impl::query_clock(ClientId id, vhca_query_clock_rsp& rsp) {
  if (!eng_.client(id)) return EINVAL;
  rsp.now_ns = uint64_t(eng_.sched.now());
  return 0;
}

int Hca::Impl::query_port(ClientId id, const vhca_query_port_req& req, vhca_query_port_rsp& rsp) {
  if (!eng_.client(id)) return EINVAL;
  if (req.port_num != 1) return EINVAL;
  const PortInfo& p = eng_.io.info();
  const bool eth = p.link_layer == LinkLayer::kEthernet;
  ibv_port_attr& a = rsp.attr;
  std::memset(&a, 0, sizeof(a));
  a.state = ibv_port_state(p.state);
  a.max_mtu = IBV_MTU_4096;
  a.active_mtu = ibv_mtu(mtu_code(eng_.port_mtu()));
  // Entries past gids.size() are empty, as on hardware; sgid_index is
  // checked against the populated ones.
  a.gid_tbl_len = int(p.gid_tbl_len ? p.gid_tbl_len : p.gids.size());
  a.port_cap_flags = p.port_cap_flags ? p.port_cap_flags
                     : eth ? uint32_t(IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS)
                         : uint32_t(IBV_PORT_CM_SUP | IBV_PORT_TRAP_SUP | IBV_PORT_SYS_IMAGE_GUID_SUP);
  a.max_msg_sz = eng_.cfg.limits.max_msg_sz;
  a.bad_pkey_cntr = uint32_t(eng_.ctr.pkey_violations > 0xFFFF ? 0xFFFF : eng_.ctr.pkey_violations);
  a.qkey_viol_cntr = uint32_t(eng_.ctr.qkey_violations > 0xFFFF ? 0xFFFF : eng_.ctr.qkey_violations);
  a.pkey_tbl_len = uint16_t(p.pkey_table_len());
  a.lid = eth ? 0 : p.lid;
  a.sm_lid = eth ? 0 : p.sm_lid;
  a.lmc = p.lmc;
  // IBA encoding of the operational data VLs: 1 = VL0, 2 = VL0-1, 3 = VL0-3, 4 = VL0-7.
  a.max_vl_num = p.qos.data_vls >= 8 ? 4 : p.qos.data_vls >= 4 ? 3 : p.qos.data_vls >= 2 ? 2 : 1;
  a.sm_sl = p.sm_sl;
  a.subnet_timeout = 18;
  a.init_type_reply = 0;
  a.active_width = p.active_width;
  a.active_speed = p.active_speed;
  a.phys_state = uint8_t(p.phys_state);
  a.link_layer = eth ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
  a.flags = 0;
  a.port_cap_flags2 = 0;
  return 0;
}

// ------------------------------------------------------------------- PDs

int Hca::Impl::alloc_pd(ClientId id, vhca_alloc_pd_rsp& rsp) {
  Client* c = eng_.client(id);
  if (!c) return EINVAL;
  auto pd = std::make_unique<Pd>();
  pd->client = c;
  Pd* raw = eng_.objs.adopt(std::move(pd));
  if (!raw) return ENOMEM;
  rsp.pd_handle = raw->handle;
  rsp.reserved = 0;
  return 0;
}

int Hca::Impl::dealloc_pd(ClientId id, const vhca_handle_req& req) {
  return destroy_unused<Pd>(id, req.handle);
}

// -------------------------------------------------------------- fast path

bool Hca::Impl::poll(unsigned budget) {
  bool did = false;
  // Payloads whose completion or ACK is due: place them, one DMA call per
  // app, before either goes out. Middle packets may wait for more.
  if (eng_.rxq.due) did = place_.flush();
  // Owed ACKs/NAKs first: they were coalesced over the last receive burst.
  did |= resp_.send_owed(budget);
  const size_t n = active_.size();
  for (size_t k = 0; k < n && budget; ++k) {
    if (rr_ >= active_.size()) rr_ = 0;
    Qp& qp = *active_[rr_++];
    unsigned q = budget < kQpQuantum ? budget : kQpQuantum;
    unsigned used = 0;
    // READ responses / atomic ACKs owed (also by a QP that failed on a later
    // request: they precede its NAK).
    if (qp.res_pending && (qp.state == IBV_QPS_RTR || qp.state == IBV_QPS_RTS ||
                           qp.state == IBV_QPS_SQD || (qp.state == IBV_QPS_ERR && qp.resp_pending)))
      used = resp_.rd_atomic_respond(qp, q);
    q -= used;
    switch (qp.state) {
      case IBV_QPS_RTS:
      case IBV_QPS_SQD:
        used += qp.type == IBV_QPT_UD ? req_.run_ud(qp, q) : req_.run(qp, q);
        break;
      case IBV_QPS_SQE: used += comp_.flush_sq(qp, q); break;  // UD: the receive side runs on
      case IBV_QPS_ERR: used += flush(qp, q); break;
      default: break;
    }
    if (used) {
      did = true;
      budget -= used < budget ? used : budget;
    }
  }
  return did;
}

namespace {

bool to_group(const RxMeta& meta) {
  return is_multicast_lid(meta.dlid) || (meta.has_grh && is_multicast_gid(meta.dgid));
}

bool source_matches(const PortInfo& port, const Qp& qp, const RxMeta& meta) {
  const ibv_ah_attr& ah = qp.attr.ah_attr;
  if (port.link_layer == LinkLayer::kEthernet) {
    return meta.has_grh && std::memcmp(meta.sgid, ah.grh.dgid.raw, 16) == 0;
  }
  if (meta.slid != ah.dlid) return false;
  if (ah.is_global) return meta.has_grh && std::memcmp(meta.sgid, ah.grh.dgid.raw, 16) == 0;
  return true;
}

}  // namespace

// A transport packet for a QP that cannot take it, counted by why: an
// operator reading a retransmission needs to know whether its packets
// reached a QP that was already gone (issue: every retransmission explained).
void Hca::Impl::drop_unprocessed(rte_mbuf* m, uint32_t dqpn, const Qp* qp) {
  ++eng_.ctr.rx_dropped;
  rte_pktmbuf_free(m);
  if (qp && (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT || qp->state == IBV_QPS_ERR)) {
    ++eng_.ctr.rx_qp_not_ready;
  } else if (qp) {
    ++eng_.ctr.rx_qp_mismatch;
  } else {
    // QPN = generation << 16 | slot: a generation the slot has already
    // handed out is a QP that existed and was destroyed.
    const uint32_t slot = dqpn & 0xFFFF, gen = dqpn >> 16;
    const bool had = slot < qp_gen_.size() && gen != 0 && gen <= qp_gen_[slot];
    ++(had ? eng_.ctr.rx_qp_destroyed : eng_.ctr.rx_qp_unknown);
  }
}

void Hca::Impl::receive(rte_mbuf* m, const RxMeta& meta) {
  ++eng_.ctr.rx_packets;
  eng_.ctr.rx_bytes += rte_pktmbuf_pkt_len(m);
  if (take_cnp(eng_, m)) return;
  Pkt p;
  const bool ok = (m->nb_segs == 1 || rte_pktmbuf_linearize(m) == 0) && parse_packet(m, p);
  // IBA 10.9.3: a packet whose P_Key does not match its QP's is dropped
  // silently and counted (PortInfo's P_KeyViolations; ibv bad_pkey_cntr).
  auto pkey_ok = [&](const Qp& q) {
    if (pkeys_match(vf::wire::bth_pkey(p.bth), q.pkey)) return true;
    ++eng_.ctr.pkey_violations;
    rte_pktmbuf_free(m);
    return false;
  };
  const vf::wire::Transport tt = ok ? vf::wire::opcode_transport(p.opcode) : vf::wire::Transport::kRD;
  if (tt == vf::wire::Transport::kUD && p.dqpn == kMulticastQpn) [[unlikely]]
    return mcast_receive(p, meta, m);
  if (tt == vf::wire::Transport::kUD && p.dqpn == kGsiQpn) [[unlikely]]
    return gsi_receive(p, meta, m);
  if (tt == vf::wire::Transport::kUD && p.dqpn == kSmiQpn) [[unlikely]]
    return smi_receive(p, meta, m);
  // Only a UD datagram to DestQP 0xFFFFFF may be addressed to a group: a QPN
  // behind a multicast DLID or DGID would reach that QPN on every member.
  if (ok && to_group(meta)) [[unlikely]] {
    ++eng_.ctr.rx_dropped;
    rte_pktmbuf_free(m);
    return;
  }
  if (tt == vf::wire::Transport::kUD) {
    Qp* qp = eng_.qp_by_qpn(p.dqpn);
    // A UD QP receives from RTR on, including SQE (only its SQ failed).
    if (qp && qp->type == IBV_QPT_UD && qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_INIT &&
        qp->state != IBV_QPS_ERR) {
      if (pkey_ok(*qp)) resp_.ud_receive(*qp, p, meta, m);
      return;
    }
    return drop_unprocessed(m, p.dqpn, qp);
  }
  if (tt != vf::wire::Transport::kRC && tt != vf::wire::Transport::kUC) {
    ++eng_.ctr.rx_dropped;
    rte_pktmbuf_free(m);
    return;
  }
  Qp* qp = eng_.qp_by_qpn(p.dqpn);
  const ibv_qp_type want = tt == vf::wire::Transport::kRC ? IBV_QPT_RC : IBV_QPT_UC;
  if (!qp || qp->type != want || qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT ||
      qp->state == IBV_QPS_ERR || !source_matches(eng_.io.info(), *qp, meta))
    return drop_unprocessed(m, p.dqpn, qp);
  if (!pkey_ok(*qp)) return;
  const bool response = !(p.flags & vf::wire::kIsRequest);
  if (!response) note_congestion(eng_, *qp, meta);
  if (response &&
      (qp->type != IBV_QPT_RC || !(p.flags & (vf::wire::kIsRead | vf::wire::kIsAtomic)))) {
    // An ACK/NAK. Its completions and state changes come after the placement
    // of the packets that arrived before it.
    place_.flush();
    if (qp->type == IBV_QPT_RC)
      comp_.on_ack(*qp, p);
    else
      ++eng_.ctr.rx_dropped;
    rte_pktmbuf_free(m);
    return;
  }
  // A request, READ response or atomic ACK: accepted into the placement
  // queue when it is in order and its target checks out. Anything it answers
  // or completes needs the queue placed first; if that placement fails its
  // QP, the packet is dropped as it would have been on arrival at a QP in
  // error.
  auto place_queue = [&] {
    place_.flush();
    if (qp->state != IBV_QPS_ERR) return true;
    ++eng_.ctr.rx_dropped;
    rte_pktmbuf_free(m);
    return false;
  };
  auto offer = [&](bool ordered) {
    return response ? comp_.on_rd_atomic_response(*qp, p, m, ordered)
                    : resp_.on_request(*qp, p, meta, m, ordered);
  };
  if (eng_.rxq.n == kRxBatch && !place_queue()) return;
  Rx r = offer(eng_.rxq.n == 0);
  if (r == Rx::kUnordered) {
    if (!place_queue()) return;
    r = offer(true);
  }
  if (r != Rx::kQueued) rte_pktmbuf_free(m);
}

// ------------------------------------------------------------ public API

Hca::Hca(const HcaConfig& cfg, vf::Scheduler& sched, dp::HostPort& io)
    : impl_(std::make_unique<Impl>(cfg, sched, io)) {}
Hca::~Hca() = default;
void Hca::set_event_sink(EventSink* s) { impl_->eng_.sink = s; }
const HcaConfig& Hca::config() const { return impl_->eng_.cfg; }
void Hca::set_dcqcn(const DcqcnConfig& c) { impl_->eng_.cfg.dcqcn = c; }
int Hca::open_client(ClientId id, pid_t pid, int mem_fd, vhca_open_context_rsp& rsp) {
  return impl_->open_client(id, pid, mem_fd, rsp);
}
void Hca::close_client(ClientId id) { impl_->close_client(id); }
int Hca::query_device(ClientId id, vhca_query_device_rsp& rsp) { return impl_->query_device(id, rsp); }
int Hca::query_port(ClientId id, const vhca_query_port_req& req, vhca_query_port_rsp& rsp) {
  return impl_->query_port(id, req, rsp);
}
int Hca::alloc_pd(ClientId id, vhca_alloc_pd_rsp& rsp) { return impl_->alloc_pd(id, rsp); }
int Hca::dealloc_pd(ClientId id, const vhca_handle_req& req) { return impl_->dealloc_pd(id, req); }
int Hca::reg_mr(ClientId id, const vhca_reg_mr_req& req, vhca_reg_mr_rsp& rsp) {
  return impl_->reg_mr(id, req, rsp);
}
int Hca::dereg_mr(ClientId id, const vhca_handle_req& req) { return impl_->dereg_mr(id, req); }
int Hca::create_cq(ClientId id, const vhca_create_cq_req& req, vhca_create_cq_rsp& rsp, Fd& fd) {
  return impl_->create_cq(id, req, rsp, fd);
}
int Hca::destroy_cq(ClientId id, const vhca_handle_req& req) { return impl_->destroy_cq(id, req); }
int Hca::rereg_mr(ClientId id, const vhca_rereg_mr_req& req, vhca_rereg_mr_rsp& rsp) {
  return impl_->rereg_mr(id, req, rsp);
}
int Hca::query_clock(ClientId id, vhca_query_clock_rsp& rsp) { return impl_->query_clock(id, rsp); }
int Hca::alloc_mw(ClientId id, const vhca_alloc_mw_req& req, vhca_alloc_mw_rsp& rsp) {
  return impl_->alloc_mw(id, req, rsp);
}
int Hca::dealloc_mw(ClientId id, const vhca_handle_req& req) { return impl_->dealloc_mw(id, req); }
int Hca::resize_cq(ClientId id, const vhca_resize_cq_req& req, vhca_resize_cq_rsp& rsp, Fd& fd) {
  return impl_->resize_cq(id, req, rsp, fd);
}
int Hca::create_qp(ClientId id, const vhca_create_qp_req& req, vhca_create_qp_rsp& rsp, Fd& sq,
                   Fd& rq) {
  return impl_->create_qp(id, req, rsp, sq, rq);
}
int Hca::modify_qp(ClientId id, const vhca_modify_qp_req& req) { return impl_->modify_qp(id, req); }
int Hca::query_qp(ClientId id, const vhca_query_qp_req& req, vhca_query_qp_rsp& rsp) {
  return impl_->query_qp(id, req, rsp);
}
int Hca::destroy_qp(ClientId id, const vhca_handle_req& req, vhca_destroy_qp_rsp& rsp) {
  return impl_->destroy_qp(id, req, rsp);
}
bool Hca::poll(unsigned budget) { return impl_->poll(budget); }
void Hca::resolve_route(const ibv_ah_attr& av, std::function<void(int err)> done) {
  impl_->eng_.io.resolve(route_of(av), std::move(done));
}
void Hca::receive(rte_mbuf* m, const RxMeta& meta) {
  impl_->receive(m, meta);
  impl_->eng_.wake();
}
void Hca::on_transmit_space() {
  // Requesters re-check can_transmit() on every poll; nothing is parked.
  impl_->eng_.wake();
}
void Hca::set_wake(void (*fn)(void*), void* ctx) {
  impl_->eng_.on_wake = fn;
  impl_->eng_.wake_ctx = ctx;
}
Hca::ObjectCounts Hca::counts() const { return impl_->counts(); }
const Counters& Hca::counters() const { return impl_->eng_.ctr; }

}  // namespace vf::engine
