// The IBA QP state machine (Vol. 1 10.3 / the kernel's qp_state_table):
// which transitions exist, which attributes each requires or allows per QP
// type, value checks, the side effects of entering a state, and the error
// state's flush of every posted WQE.
#include <cerrno>
#include <cstring>

#include "device/engine/hca_impl.hpp"
#include "device/engine/opcodes.hpp"

namespace vf::engine {

namespace {

enum TypeIdx { kRC = 0, kUC = 1, kUD = 2, kTypes = 3 };

struct Transition {
  bool valid;
  uint32_t req[kTypes];
  uint32_t opt[kTypes];
};

constexpr uint32_t kAllKnownMask =
    IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_ACCESS_FLAGS |
    IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT |
    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
    IBV_QP_ALT_PATH | IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
    IBV_QP_PATH_MIG_STATE | IBV_QP_CAP | IBV_QP_DEST_QPN | IBV_QP_RATE_LIMIT;

constexpr unsigned kStates = IBV_QPS_ERR + 1;

struct Table {
  Transition t[kStates][kStates];
};

// table.t[cur][next]
Table build_table() {
  Table tab{};
  auto& t = tab.t;
  for (unsigned s = 0; s < kStates; ++s) {
    t[s][IBV_QPS_RESET].valid = true;
    t[s][IBV_QPS_ERR].valid = true;
  }
  // RESET -> INIT
  t[IBV_QPS_RESET][IBV_QPS_INIT] = {
      true,
      {IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
       IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
       IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY},
      {0, 0, 0}};
  // RESET -> ERR is not in the IBA table; the kernel table has RESET->RESET only
  t[IBV_QPS_RESET][IBV_QPS_ERR].valid = false;
  // INIT -> INIT
  t[IBV_QPS_INIT][IBV_QPS_INIT] = {
      true,
      {0, 0, 0},
      {IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
       IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
       IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY}};
  // INIT -> RTR
  t[IBV_QPS_INIT][IBV_QPS_RTR] = {
      true,
      {IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
       IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN, 0},
      {IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
       IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
       IBV_QP_PKEY_INDEX | IBV_QP_QKEY}};
  // RTR -> RTS
  t[IBV_QPS_RTR][IBV_QPS_RTS] = {
      true,
      {IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
           IBV_QP_MAX_QP_RD_ATOMIC,
       IBV_QP_SQ_PSN, IBV_QP_SQ_PSN},
      {IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
           IBV_QP_PATH_MIG_STATE,
       IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE,
       IBV_QP_CUR_STATE | IBV_QP_QKEY}};
  // RTS -> RTS
  t[IBV_QPS_RTS][IBV_QPS_RTS] = {
      true,
      {0, 0, 0},
      {IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
           IBV_QP_MIN_RNR_TIMER,
       IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE,
       IBV_QP_CUR_STATE | IBV_QP_QKEY}};
  // RTS -> SQD
  t[IBV_QPS_RTS][IBV_QPS_SQD] = {true,
                                 {0, 0, 0},
                                 {IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_EN_SQD_ASYNC_NOTIFY,
                                  IBV_QP_EN_SQD_ASYNC_NOTIFY}};
  // SQD -> RTS
  t[IBV_QPS_SQD][IBV_QPS_RTS] = {
      true,
      {0, 0, 0},
      {IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
           IBV_QP_PATH_MIG_STATE,
       IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE,
       IBV_QP_CUR_STATE | IBV_QP_QKEY}};
  // SQD -> SQD
  t[IBV_QPS_SQD][IBV_QPS_SQD] = {
      true,
      {0, 0, 0},
      {IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
           IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH |
           IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
       IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
           IBV_QP_PATH_MIG_STATE,
       IBV_QP_PKEY_INDEX | IBV_QP_QKEY}};
  // SQE -> RTS (UC/UD only; an RC QP never enters SQE)
  t[IBV_QPS_SQE][IBV_QPS_RTS] = {
      true, {0, 0, 0}, {0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS, IBV_QP_CUR_STATE | IBV_QP_QKEY}};
  return tab;
}

const Table& transitions() {
  static const Table table = build_table();
  return table;
}

TypeIdx type_idx(ibv_qp_type t) {
  switch (t) {
    case IBV_QPT_UC: return kUC;
    case IBV_QPT_UD: return kUD;
    default: return kRC;
  }
}

}  // namespace

static bool qp_transition_ok(ibv_qp_state cur, ibv_qp_state next, ibv_qp_type type, uint32_t mask) {
  if (unsigned(cur) >= kStates || unsigned(next) >= kStates) return false;
  if ((mask & IBV_QP_CUR_STATE) && cur != IBV_QPS_RTR && cur != IBV_QPS_RTS &&
      cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
    return false;
  const Transition& t = transitions().t[cur][next];
  if (!t.valid) return false;
  if (cur == IBV_QPS_SQE && next == IBV_QPS_RTS && type == IBV_QPT_RC) return false;
  const TypeIdx ti = type_idx(type);
  if ((mask & t.req[ti]) != t.req[ti]) return false;
  if (mask & ~(t.req[ti] | t.opt[ti] | IBV_QP_STATE)) return false;
  return true;
}

namespace {

// Enum fields of a request are read as integers: the app may put any value
// there, and loading an out-of-range enum is undefined behaviour.
template <class E>
uint32_t raw(const E& e) {
  static_assert(sizeof(E) == sizeof(uint32_t));
  uint32_t v;
  std::memcpy(&v, &e, sizeof(v));
  return v;
}

bool ah_ok(const PortInfo& port, const ibv_ah_attr& ah) {
  if (ah.port_num > 1) return false;  // 0 is taken as the only port
  if (ah.sl > 15) return false;
  if (port.link_layer == LinkLayer::kEthernet) {
    if (!ah.is_global) return false;  // RoCE needs a GRH
  } else if (ah.dlid == 0 || ah.dlid >= 0xC000) {
    return false;  // unicast LID required
  }
  if (ah.is_global && ah.grh.sgid_index >= port.gids.size()) return false;
  return static_rate_mbps(ah.static_rate) != kBadRate;
}

}  // namespace

int Hca::Impl::modify_qp(ClientId id, const vhca_modify_qp_req& req) {
  Qp* qpp = eng_.owned<Qp>(id, req.qp_handle);
  if (!qpp) return EINVAL;
  Qp& qp = *qpp;
  // The QP's state is the one after every payload that arrived is placed.
  place_.flush();
  const ibv_qp_attr a = req.attr;  // one copy, then only the copy is looked at
  const uint32_t mask = req.attr_mask;
  if (mask & ~kAllKnownMask) return EINVAL;
  const ibv_qp_state cur = qp.state;
  if ((mask & IBV_QP_CUR_STATE) && raw(a.cur_qp_state) != uint32_t(cur)) return EINVAL;
  ibv_qp_state next = cur;
  if (mask & IBV_QP_STATE) {
    const uint32_t v = raw(a.qp_state);
    if (v > IBV_QPS_ERR) return EINVAL;
    next = ibv_qp_state(v);
  }
  if (!qp_transition_ok(cur, next, qp.type, mask)) return EINVAL;

  // Values.
  const DeviceLimits& l = eng_.cfg.limits;
  // An index into the port's P_Key table, naming a valid entry.
  const std::vector<uint16_t>& pkeys = eng_.io.info().pkeys;
  auto pkey_valid = [&](uint16_t i) { return i < pkeys.size() && (pkeys[i] & 0x7FFF) != 0; };
  if ((mask & IBV_QP_PKEY_INDEX) && !pkey_valid(a.pkey_index)) return EINVAL;
  if ((mask & IBV_QP_PORT) && a.port_num != 1) return EINVAL;
  if ((mask & IBV_QP_QKEY) && (a.qkey & 0x80000000u) && !qp.client->controlled_qkeys) return EPERM;
  if ((mask & IBV_QP_ACCESS_FLAGS) &&
      (a.qp_access_flags & ~uint32_t(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
    return EINVAL;
  if ((mask & IBV_QP_PATH_MTU) && mtu_bytes(raw(a.path_mtu)) == 0) return EINVAL;
  if ((mask & IBV_QP_AV) && !ah_ok(eng_.io.info(), a.ah_attr)) return EINVAL;
  if ((mask & IBV_QP_TIMEOUT) && a.timeout > 31) return EINVAL;
  if ((mask & IBV_QP_RETRY_CNT) && a.retry_cnt > 7) return EINVAL;
  if ((mask & IBV_QP_RNR_RETRY) && a.rnr_retry > 7) return EINVAL;
  if ((mask & IBV_QP_MIN_RNR_TIMER) && a.min_rnr_timer > 31) return EINVAL;
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a.max_rd_atomic > l.max_qp_init_rd_atom) return EINVAL;
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a.max_dest_rd_atomic > l.max_qp_rd_atom)
    return EINVAL;
  if ((mask & IBV_QP_DEST_QPN) && a.dest_qp_num > vf::wire::kQpnMask) return EINVAL;
  if ((mask & IBV_QP_PATH_MIG_STATE) && raw(a.path_mig_state) > IBV_MIG_ARMED) return EINVAL;
  if ((mask & IBV_QP_SQ_PSN) && a.sq_psn > vf::wire::kPsnMask) return EINVAL;
  if ((mask & IBV_QP_RQ_PSN) && a.rq_psn > vf::wire::kPsnMask) return EINVAL;
  if (mask & IBV_QP_ALT_PATH) {
    if (!ah_ok(eng_.io.info(), a.alt_ah_attr) || a.alt_port_num != 1 || !pkey_valid(a.alt_pkey_index) ||
        a.alt_timeout > 31)
      return EINVAL;
  }

  // Apply (all checks passed: a failed modify changes nothing).
  ibv_qp_attr& s = qp.attr;
  if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) s.en_sqd_async_notify = a.en_sqd_async_notify;
  if (mask & IBV_QP_ACCESS_FLAGS) s.qp_access_flags = a.qp_access_flags;
  if (mask & IBV_QP_PKEY_INDEX) {
    s.pkey_index = a.pkey_index;
    qp.pkey = pkeys[a.pkey_index];
  }
  if (mask & IBV_QP_PORT) s.port_num = a.port_num;
  if (mask & IBV_QP_QKEY) s.qkey = a.qkey;
  if (mask & IBV_QP_AV) {
    s.ah_attr = a.ah_attr;
    s.ah_attr.port_num = 1;
    // RoCE: the kernel resolves a QP's path through the IP stack
    // (ib_resolve_eth_dmac) and keeps the route's hop limit, not the app's:
    // ibv_rc_pingpong's hop_limit 1 leaves with TTL 64 and crosses routers.
    const uint8_t* dgid = s.ah_attr.grh.dgid.raw;
    const bool v4_mapped = std::memcmp(dgid, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0;
    const bool multicast = dgid[0] == 0xff || (v4_mapped && (dgid[12] & 0xF0) == 0xE0);
    if (eng_.io.info().link_layer == LinkLayer::kEthernet && !multicast)
      s.ah_attr.grh.hop_limit = kRoceDefaultHopLimit;
    qp.route = route_of(s.ah_attr);
  }
  if (mask & IBV_QP_PATH_MTU) {
    s.path_mtu = a.path_mtu;
    const uint32_t m = mtu_bytes(a.path_mtu);
    qp.mtu = m < eng_.port_mtu() ? m : eng_.port_mtu();
  }
  if (mask & IBV_QP_TIMEOUT) {
    s.timeout = a.timeout;
    qp.timeout_ns = ack_timeout_ns(a.timeout);
  }
  if (mask & IBV_QP_RETRY_CNT) {
    s.retry_cnt = a.retry_cnt;
    qp.retry_left = a.retry_cnt;
  }
  if (mask & IBV_QP_RNR_RETRY) {
    s.rnr_retry = a.rnr_retry;
    qp.rnr_retry_left = a.rnr_retry;
  }
  if (mask & IBV_QP_RQ_PSN) s.rq_psn = a.rq_psn;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) s.max_rd_atomic = a.max_rd_atomic;
  if (mask & IBV_QP_ALT_PATH) {
    s.alt_ah_attr = a.alt_ah_attr;
    s.alt_port_num = a.alt_port_num;
    s.alt_pkey_index = a.alt_pkey_index;
    s.alt_timeout = a.alt_timeout;
  }
  if (mask & IBV_QP_MIN_RNR_TIMER) s.min_rnr_timer = a.min_rnr_timer;
  if (mask & IBV_QP_SQ_PSN) s.sq_psn = a.sq_psn;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) s.max_dest_rd_atomic = a.max_dest_rd_atomic;
  if (mask & IBV_QP_PATH_MIG_STATE) s.path_mig_state = a.path_mig_state;
  if (mask & IBV_QP_DEST_QPN) s.dest_qp_num = a.dest_qp_num;

  // Enter the new state.
  if (next == IBV_QPS_RESET) {
    const ibv_qp_cap cap = qp.cap;
    qp.attr = ibv_qp_attr{};
    qp.attr.cap = cap;
    qp.mtu = 256;
    qp.timeout_ns = 0;
    qp.state = IBV_QPS_RESET;
    qp_reset_state(qp);
    return 0;
  }
  if (next == IBV_QPS_ERR) {
    eng_.qp_to_error(qp, false);
    return 0;
  }
  if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) {
    qp.epsn = s.rq_psn;
    qp.msn = 0;
    qp.nak_outstanding = false;
    qp.in_message = false;
    qp.rwqe_valid = false;
    qp.comm_est_reported = false;
  }
  if (cur == IBV_QPS_SQE && next == IBV_QPS_RTS) {
    // IBA 10.3.1: every WQE posted to a SQ in error completes flushed,
    // including those the poll loop has not reached yet.
    comp_.flush_sq(qp, UINT32_MAX);
  }
  if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS) {
    qp.psn = qp.snd_una = qp.psn_hi = s.sq_psn;
    qp.retry_left = s.retry_cnt;
    qp.rnr_retry_left = s.rnr_retry;
    qp.pkts_since_ackreq = 0;
  }
  qp.state = next;
  if (next == IBV_QPS_SQD && cur != IBV_QPS_SQD) {
    qp.sq_drained_reported = false;
    comp_.check_sq_drained(qp);
  }
  return 0;
}

void Hca::Impl::qp_reset_state(Qp& qp) {
  eng_.sched.disarm(qp.retrans_timer);
  eng_.sched.disarm(qp.rnr_timer);
  eng_.sched.disarm(qp.pace_timer);
  qp.eligible_at = 0;
  qp.rp = DcqcnRp{};
  qp.np_cnp_sent = false;
  // RESET discards whatever the rings hold: the engine's indices jump to the
  // app's producers (published as consumers), so the app sees empty queues.
  const uint32_t sp = qp.sq.load_producer();
  qp.sq_cons = qp.sq_next = qp.sq_started = qp.sq_fetched = sp;
  qp.sq.store_consumer(sp);
  const uint32_t rp = qp.rq.load_producer();
  qp.rq_cons = qp.rq_spec = rp;
  qp.rq.store_consumer(rp);
  qp.next_offset = 0;
  qp.psn = qp.snd_una = qp.psn_hi = 0;
  qp.pkts_since_ackreq = 0;
  qp.retry_left = qp.rnr_retry_left = 0;
  qp.rnr_wait = false;
  qp.sq_broken = qp.rq_broken = false;
  qp.sq_drained_reported = false;
  qp.epsn = qp.msn = 0;
  qp.nak_outstanding = qp.in_message = qp.rwqe_valid = false;
  qp.rcv_offset = 0;
  qp.comm_est_reported = false;
  qp.last_wqe_reported = false;
  qp.resp_pending = qp.resp_fatal = false;
  qp.acks_owed = 0;
  reset_rd_atomic_state(qp);
}

}  // namespace vf::engine
