#include "daemon/mad/agents.hpp"

#include <algorithm>

#include "daemon/mad/route.hpp"
#include "daemon/mad/sa.hpp"
#include "daemon/mad/sma.hpp"

namespace vf::mad {
namespace {

bool is_smp(uint8_t cls) { return cls == kClassSmiLid || cls == kClassSmiDr; }

// A LID-routed response goes back to the requester's LID the way the
// switches route it (with Up/Down not always the way it came).
bool reaches_back(const MadModel& model, size_t from, size_t src, bool smp) {
  const ModelNode& requester = model.nodes[src];
  if (from == src) return true;
  const auto back = walk_lid(model, from, requester.lid, smp);
  return back && back->node == src;
}

}  // namespace

MadOutcome answer_mad(const MadModel& model, size_t src, uint32_t qpn, uint16_t dlid, const Mad& req,
                      SaGroups* groups) {
  MadOutcome out;
  out.why = NoAnswer::kNoAgent;
  const uint8_t cls = mgmt_class(req);
  if (is_smp(cls) != (qpn == 0) || src >= model.nodes.size()) return out;  // SMPs on QP0 only
  Mad m = req;
  std::optional<Arrival> at;
  if (cls == kClassSmiDr)
    at = walk_directed(model, src, m);
  else if (cls == kClassSmiLid || cls == kClassPerf || cls == kClassSubnAdm)
    at = walk_lid(model, src, dlid, cls == kClassSmiLid);
  else
    return out;
  if (!at) {
    out.why = NoAnswer::kUnroutable;
    return out;
  }
  Verdict v = Verdict::kDrop;
  if (is_smp(cls)) {
    v = sma_process(model, at->node, at->in_port, m);
  } else if (cls == kClassPerf) {
    v = pma_process(model, at->node, m, out.reset);
  } else if (int(at->node) == model.sm_node) {  // the SA lives with the SM
    out.table = sa_process(model, src, m, groups, out.mcast);
    v = out.table.empty() ? Verdict::kDrop : Verdict::kRespond;
    std::fill(m.begin(), m.end(), 0);
    std::copy_n(out.table.begin(), std::min(out.table.size(), m.size()), m.begin());
    if (out.table.size() == kMadSize) out.table.clear();
  } else {
    return out;  // no SA on that node
  }
  if (v == Verdict::kDrop) {
    out.why = NoAnswer::kRefused;
    return out;
  }
  // A directed-route response retraces the request's hops, which were up a
  // moment ago; a LID-routed one needs a route back.
  if (cls != kClassSmiDr && !reaches_back(model, at->node, src, cls == kClassSmiLid)) {
    out.why = NoAnswer::kUnroutable;
    return out;
  }
  out.slid = cls == kClassSmiDr ? kPermissiveLid : model.nodes[at->node].lid;
  out.response = m;
  out.why = NoAnswer::kNone;
  return out;
}

}  // namespace vf::mad
