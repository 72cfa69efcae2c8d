#include "dataplane/fabric/arbiter.hpp"

namespace vf::dp {

namespace {

// Eligibility of a queue's head; records when a not-yet-eligible head becomes so.
bool head_ready(const EgressQueue& q, Nanos now, ArbiterPick& p) {
  if (q.empty()) return false;
  const Nanos at = q.front_meta().eligible_at;
  if (at <= now) return true;
  if (at < p.next_eligible) p.next_eligible = at;
  return false;
}

// Whether data class `c` could send its head now (eligible, gate open).
bool sendable(const std::array<EgressQueue, kNumClasses>& q, const EgressGate& gate, unsigned c,
              Nanos now, ArbiterPick& p) {
  if (!head_ready(q[c], now, p)) return false;
  if (gate.open(c, q[c].front_meta().bytes)) return true;
  p.gated = true;
  return false;
}

ArbiterPick round_robin(ArbiterState& st, const std::array<EgressQueue, kNumClasses>& q,
                        const EgressGate& gate, Nanos now, ArbiterPick p) {
  for (unsigned i = 0; i < kNumDataClasses; ++i) {
    const unsigned c = (st.rr_next + i) % kNumDataClasses;
    if (!sendable(q, gate, c, now, p)) continue;
    p.cls = int(c);
    p.gated = false;
    st.rr_next = uint8_t((c + 1) % kNumDataClasses);
    return p;
  }
  return p;
}

// The weighted round robin of one table: the VL of the first entry, from the
// cursor on, that has weight and can send; entries passed over forfeit their
// turn. -1 when none can.
int table_pick(VlArbCursor& cur, const VlArbTable& t, const std::array<EgressQueue, kNumClasses>& q,
               const EgressGate& gate, Nanos now, ArbiterPick& p) {
  if (t.size == 0) return -1;
  if (cur.entry >= t.size) cur = {};
  for (unsigned n = 0; n <= t.size; ++n) {
    const VlArbEntry& e = t.entries[cur.entry];
    if (e.weight && e.vl < kNumDataClasses && sendable(q, gate, e.vl, now, p)) {
      if (cur.left <= 0) cur.left = int32_t(e.weight) * 64;
      return e.vl;
    }
    cur.entry = uint8_t((cur.entry + 1) % t.size);
    cur.left = 0;
  }
  return -1;
}

bool high_may_go(const ArbiterState& st, const PortQos& qos) {
  if (qos.vlarb_high_limit == 255) return true;
  const uint64_t limit = qos.vlarb_high_limit ? uint64_t(qos.vlarb_high_limit) * 4096 : 1;
  return st.high_since_low < limit;
}

ArbiterPick vl_arbitration(ArbiterState& st, const std::array<EgressQueue, kNumClasses>& q,
                           const EgressGate& gate, const PortQos& qos, Nanos now, ArbiterPick p) {
  // The high table first, unless it used up its limit and the low one has
  // something to send.
  VlArbCursor high = st.high;
  const int hv = table_pick(high, qos.vlarb_high, q, gate, now, p);
  if (hv >= 0 && high_may_go(st, qos)) {
    st.high = high;
    st.last_high = true;
    p.cls = hv;
    p.gated = false;
    return p;
  }
  const int lv = table_pick(st.low, qos.vlarb_low, q, gate, now, p);
  if (lv >= 0) {
    st.last_high = false;
    p.cls = lv;
    p.gated = false;
    return p;
  }
  if (hv >= 0) {  // over its limit, but nothing low wants the wire
    st.high = high;
    st.last_high = true;
    p.cls = hv;
    p.gated = false;
  }
  return p;
}

// The priority of class `tc` that sends next (round robin inside the class),
// or -1 when none can.
int class_pick(const EtsCursor& cur, uint8_t prios, const std::array<EgressQueue, kNumClasses>& q,
               const EgressGate& gate, unsigned tc, Nanos now, ArbiterPick& p) {
  for (unsigned i = 0; i < kNumDataClasses; ++i) {
    const unsigned c = (cur.next_prio[tc] + i) % kNumDataClasses;
    if ((prios >> c & 1) && sendable(q, gate, c, now, p)) return int(c);
  }
  return -1;
}

// `tc`: the class the pick belongs to (its round robin moves on); `charged`:
// whether DWRR charges its deficit (strict and 0 % picks are not charged).
ArbiterPick take(EtsCursor& cur, unsigned tc, bool charged, int prio, ArbiterPick p) {
  cur.charged = charged ? int8_t(tc) : int8_t(-1);
  cur.next_prio[tc] = uint8_t((prio + 1) % kNumDataClasses);
  p.cls = prio;
  p.gated = false;
  return p;
}

// One DWRR turn per class with something to send; a class whose head does
// not fit its credit yet passes, keeping the credit. Each full pass adds a
// quantum (>= 1 KiB) to every waiting class, so a pick comes within
// max_frame / 1 KiB passes; the bound only stops a pass that found nothing.
int dwrr(EtsCursor& cur, const EtsPlan& plan, const std::array<EgressQueue, kNumClasses>& q,
         const EgressGate& gate, Nanos now, ArbiterPick& p, int& prio) {
  constexpr unsigned kMaxPasses = 16;
  bool any = false;
  for (unsigned n = 0; n < kNumDataClasses * kMaxPasses; ++n) {
    if (n % kNumDataClasses == 0 && n) {
      if (!any) return -1;
      any = false;
    }
    const unsigned tc = cur.tc;
    if (plan.shared >> tc & 1) {
      prio = class_pick(cur, plan.tc_prios[tc], q, gate, tc, now, p);
      if (prio >= 0) {
        any = true;
        if (!cur.granted) {
          cur.deficit[tc] += plan.quantum[tc];
          cur.granted = true;
        }
        if (int32_t(q[unsigned(prio)].front_meta().bytes) <= cur.deficit[tc]) return int(tc);
      } else {
        cur.deficit[tc] = 0;
      }
    }
    cur.tc = uint8_t((tc + 1) % kNumDataClasses);
    cur.granted = false;
  }
  return -1;
}

ArbiterPick ets(ArbiterState& st, const std::array<EgressQueue, kNumClasses>& q, const EgressGate& gate,
                const EtsPlan& plan, Nanos now, ArbiterPick p) {
  EtsCursor& cur = st.ets;
  for (int tc = kNumDataClasses - 1; tc >= 0; --tc) {
    if (!(plan.strict >> tc & 1)) continue;
    const int prio = class_pick(cur, plan.tc_prios[unsigned(tc)], q, gate, unsigned(tc), now, p);
    if (prio >= 0) return take(cur, unsigned(tc), false, prio, p);
  }
  int prio = -1;
  const int tc = dwrr(cur, plan, q, gate, now, p, prio);
  if (tc >= 0) return take(cur, unsigned(tc), true, prio, p);
  for (unsigned t = 0; t < kNumDataClasses; ++t) {
    if (!(plan.leftover >> t & 1)) continue;
    prio = class_pick(cur, plan.tc_prios[t], q, gate, t, now, p);
    if (prio >= 0) return take(cur, t, false, prio, p);
  }
  return p;
}

void charge(VlArbCursor& cur, const VlArbTable& t, uint32_t bytes) {
  cur.left -= int32_t(bytes);
  if (cur.left <= 0 && t.size) {
    cur.entry = uint8_t((cur.entry + 1) % t.size);
    cur.left = 0;
  }
}

}  // namespace

ArbiterPick arbitrate(ArbiterState& st, const std::array<EgressQueue, kNumClasses>& q,
                      const EgressGate& gate, const PortQos* qos, const EtsPlan* plan, Nanos now) {
  ArbiterPick p;
  for (unsigned c : {kCtrlClass, kMgmtClass}) {
    if (head_ready(q[c], now, p)) {
      p.cls = int(c);
      return p;
    }
  }
  if (qos) return vl_arbitration(st, q, gate, *qos, now, p);
  return plan ? ets(st, q, gate, *plan, now, p) : round_robin(st, q, gate, now, p);
}

void arbiter_sent(ArbiterState& st, const PortQos* qos, unsigned cls, uint32_t bytes) {
  if (cls >= kNumDataClasses) return;
  if (st.ets.charged >= 0) {
    st.ets.deficit[unsigned(st.ets.charged)] -= int32_t(bytes);
    st.ets.charged = -1;
  }
  if (!qos) return;
  if (st.last_high) {
    charge(st.high, qos->vlarb_high, bytes);
    st.high_since_low += bytes;
  } else {
    charge(st.low, qos->vlarb_low, bytes);
    st.high_since_low = 0;
  }
}

}  // namespace vf::dp
