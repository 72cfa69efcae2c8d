#include "dataplane/fabric/ecn_marker.hpp"

#include <stdexcept>

#include "dataplane/wire/frame_peek.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "dataplane/wire/roce_framing.hpp"

namespace vf::dp {

namespace {
constexpr CounterDef kEcnDefs[] = {
    VF_COUNTER(EcnPrioritySnapshot, ecn_marked, "ecn_marked", "ecn_marked_packets", kPackets,
               "frames this egress port marked CE (congestion experienced) on the priority"),
    VF_COUNTER(EcnPrioritySnapshot, not_ect, "ecn_not_ect", "ecn_not_ect_packets", kPackets,
               "frames the marking profile picked that were not ECN-capable (passed unmarked, or dropped by WRED)"),
    VF_COUNTER(EcnPrioritySnapshot, wred_drops, "wred_drops", "wred_drop_packets", kPackets,
               "frames WRED dropped on a lossy priority: picked by the profile and not ECN-capable"),
};
static_assert(valid_counter_table<EcnPrioritySnapshot>(kEcnDefs));
}  // namespace

const CounterTable kEcnPriorityCounters{kEcnDefs};

double ecn_mark_probability(const EcnProfile& p, uint64_t bytes) {
  if (!p.enabled || bytes <= p.kmin_bytes) return 0;
  if (bytes > p.kmax_bytes) return 1;
  return p.pmax * double(bytes - p.kmin_bytes) / double(p.kmax_bytes - p.kmin_bytes);
}

EcnMarker::EcnMarker(Port& port, const std::array<EcnProfile, 8>& profiles, uint64_t seed)
    : port_(port), profiles_(profiles), state_(seed | 1) {
  for (const EcnProfile& p : profiles)
    if (p.enabled && (p.kmax_bytes <= p.kmin_bytes || p.pmax < 0 || p.pmax > 1))
      throw std::invalid_argument("port " + port.name() + ": ECN needs kmin < kmax and pmax in 0..1");
  port.set_enqueue_hook(EnqueueHook{this, &EcnMarker::on_enqueue});
}

EcnMarker::~EcnMarker() { port_.set_enqueue_hook({}); }

// xorshift64*: cheap, and the same sequence for the same seed.
double EcnMarker::draw() {
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return double((state_ * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
}

bool EcnMarker::on_enqueue(void* self, unsigned cls, rte_mbuf* m, uint32_t, uint64_t depth_bytes) {
  auto& e = *static_cast<EcnMarker*>(self);
  if (cls >= 8) return true;
  const double p = ecn_mark_probability(e.profiles_[cls], depth_bytes);
  if (p <= 0 || (p < 1 && e.draw() >= p)) return true;
  const int ecn = wire::eth_frame_ecn(m);
  if (ecn == wire::kEcnCe) return true;  // marked upstream already
  if (ecn > 0 && wire::roce_frame_mark_ce(m)) {
    ++e.marked_[cls];
    return true;
  }
  ++e.not_ect_[cls];
  // WRED drops IP that cannot be marked; ARP, ND and other non-IP pass.
  if (!e.profiles_[cls].wred || ecn < 0) return true;
  ++e.wred_[cls];
  return false;  // the port drops it (PortXmitDiscards)
}

}  // namespace vf::dp
