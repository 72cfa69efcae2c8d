// Loopback inside the vHCA. A packet to the port's own LID (IB, any LID of its
// LMC range, unicast) or to one of its GIDs (RoCE) never reaches the wire: a
// real HCA turns it round internally, so two QPs of one device -- or one QP
// connected to itself -- talk without the switch, the link or the port's PMA
// counters seeing it. It is framed like any packet (so the receive side
// checks the same ICRCs) and handed back to the receive path from a zero-delay
// timer, in order: never from inside the engine's own transmit call.
#include <cstring>

#include "dataplane/fabric/hca_port.hpp"

namespace vf::dp {

bool HcaPort::is_own_lid(uint16_t dlid) const {
  const uint16_t mask = uint16_t(~((1u << cfg_.lmc) - 1));
  return cfg_.lid != 0 && dlid < 0xC000 && (dlid & mask) == (cfg_.lid & mask);
}

bool HcaPort::is_own_gid(const Route& r) const {
  if (!r.is_global) return false;
  for (const Gid& g : cfg_.gids)
    if (g == r.dgid) return true;
  return false;
}

void HcaPort::loop_back(rte_mbuf* m) {
  if (loopback_.full()) {
    loopback_drops_.add();
    rte_pktmbuf_free(m);
    return;
  }
  loopback_pkts_.add();
  const bool was_empty = loopback_.empty();
  loopback_.push(m);
  if (was_empty) sched_.arm(loopback_timer_, sched_.now());
}

void HcaPort::on_loopback_timer(Timer& t, Nanos) {
  auto& h = CtxTimer::owner<HcaPort>(t);
  // Only what was queued before this drain: what the engine sends back from
  // inside it waits for the next turn.
  for (uint32_t n = h.loopback_.size(); n > 0; --n) h.receive_frame(h.loopback_.pop(), nullptr);
  if (!h.loopback_.empty()) h.sched_.arm(h.loopback_timer_, h.sched_.now());
}

}  // namespace vf::dp
