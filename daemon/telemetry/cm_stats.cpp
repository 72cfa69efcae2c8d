#include "daemon/telemetry/cm_stats.hpp"

namespace vf::cm {
namespace {
#define VF_CM_PAIR(name, what)                                                                          \
  VF_COUNTER(CmStats, name##_sent, "cm_" #name "_sent", "cm_" #name "_sent", kPackets, what " sent"),   \
      VF_COUNTER(CmStats, name##_received, "cm_" #name "_received", "cm_" #name "_received", kPackets, \
                 what " received")
constexpr CounterDef kCmDefs[] = {
    VF_CM_PAIR(req, "CM REQs (connection requests)"),
    VF_CM_PAIR(mra, "CM MRAs (message receipt acknowledgements)"),
    VF_CM_PAIR(rej, "CM REJs (rejects)"),
    VF_CM_PAIR(rep, "CM REPs (replies to a REQ)"),
    VF_CM_PAIR(rtu, "CM RTUs (ready to use)"),
    VF_CM_PAIR(dreq, "CM DREQs (disconnection requests)"),
    VF_CM_PAIR(drep, "CM DREPs (disconnection replies)"),
    VF_CM_PAIR(sidr_req, "CM SIDR_REQs (UD service ID resolution requests)"),
    VF_CM_PAIR(sidr_rep, "CM SIDR_REPs (UD service ID resolution replies)"),
    VF_COUNTER(CmStats, mad_unsent, "cm_mad_unsent", "cm_mad_unsent", kPackets,
               "CM MADs that could not leave the port (its queue was full or no mbuf)"),
    VF_COUNTER(CmStats, mad_dropped, "cm_mad_dropped", "cm_mad_dropped", kPackets,
               "MADs arriving at QP1 that were no CM message of a known sender"),
    VF_COUNTER(CmStats, events_dropped, "cm_events_dropped", "cm_events_dropped", kEvents,
               "rdma_cm events lost: the id's channel held 8192 events its app had not fetched"),
};
#undef VF_CM_PAIR
static_assert(valid_counter_table<CmStats>(kCmDefs));
}  // namespace

const CounterTable kCmCounters{kCmDefs};

}  // namespace vf::cm
