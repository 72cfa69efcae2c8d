// A credit-loop deadlock as it happens, found by looking at the fabric (not
// at the routing): egress VLs that hold packets, have no credit and sent
// nothing since the previous check, each waiting for a receive buffer that
// packets queued at the next one hold, in a circle. Then no packet on the
// circle can ever move (IB switches would eventually discard them at their
// head-of-queue lifetime; vfabric does not model that, so the lesson stays
// visible). daemon/sm/credit_loops.hpp predicts the same from the routing.
//
// Slow path, on the lcore: check() walks the queues of stuck VLs. fabricd
// calls it once a second; a circle is reported when it has been stuck across
// two checks, once, and again only after it moved.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/fabric/fabric.hpp"

namespace vf::dp {

class CreditDeadlockDetector {
 public:
  // `f` outlives the detector; its elements are fixed once built.
  explicit CreditDeadlockDetector(Fabric& f);

  // Each newly stuck circle, as its egress VLs in order ("sw0/2 VL0"), the
  // last waiting for the first.
  std::vector<std::vector<std::string>> check();
  uint64_t deadlocks() const { return found_; }

 private:
  using Node = std::pair<const Port*, unsigned>;  // egress port, VL
  std::vector<Node> stuck_now();
  std::vector<Node> waits_for(const Node& n, const std::set<Node>& stuck) const;

  const Fabric& f_;
  std::map<const Port*, const Port*> peer_;          // the other end of each link
  std::map<const Port*, const Switch*> switch_of_;   // switch ports only
  std::map<Node, uint64_t> last_xmit_;               // per VL: frames sent at the last check
  std::set<Node> reported_;
  uint64_t found_ = 0;
};

}  // namespace vf::dp
