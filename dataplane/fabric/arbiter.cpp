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
}  // namespace

ArbiterPick arbitrate(ArbiterState& st, const std::array<EgressQueue, kNumClasses>& q,
                      const EgressGate& gate, Nanos now) {
  ArbiterPick p;
  for (unsigned c : {kCtrlClass, kMgmtClass}) {
    if (head_ready(q[c], now, p)) {
      p.cls = int(c);
      return p;
    }
  }
  for (unsigned i = 0; i < kNumDataClasses; ++i) {
    const unsigned c = (st.rr_next + i) % kNumDataClasses;
    if (!head_ready(q[c], now, p)) continue;
    if (!gate.open(c, q[c].front_meta().bytes)) {
      p.gated = true;
      continue;
    }
    p.cls = int(c);
    p.gated = false;
    st.rr_next = uint8_t((c + 1) % kNumDataClasses);
    return p;
  }
  return p;
}

}  // namespace vf::dp
