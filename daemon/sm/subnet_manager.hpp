// fabricd's subnet manager for one InfiniBand fabric. It owns what an SM
// programs once the fabric is built: the LFTs (the config's routing over the
// links that are up now), every port's SL→VL and VL arbitration tables (the
// config's qos: section; a port's operational VLs are structural, fixed when
// the fabric is built), and the logical state of the vHCA ports, which a
// trained link leaves in Init until a sweep arms and activates them. A link
// going down or up asks for a sweep; it runs `sweep_delay` later, as an SM
// reacts to a trap, so several changes cost one sweep. LIDs never move: they
// are the config's (sm::assign_lids), stable across restarts and sweeps.
//
// Lives on the lcore (or runs before it starts); everything here is slow path.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/port_qos.hpp"
#include "core/scheduler.hpp"
#include "dataplane/fabric/ctx_timer.hpp"
#include "daemon/config/config.hpp"
#include "daemon/sm/lid_assign.hpp"
#include "daemon/mad/sa_mcast.hpp"
#include "daemon/sm/routing.hpp"

namespace vf {
namespace dp {
class Fabric;
class HcaPort;
struct Endpoint;
}  // namespace dp

namespace sm {

// The dataplane's name for a config link end.
dp::Endpoint dp_endpoint(const config::Endpoint& e);

struct SweepReport {
  uint64_t number = 0;        // sweeps so far, this one included
  Nanos at = 0;               // dataplane clock
  unsigned links_up = 0, links = 0;
  unsigned lft_changes = 0;   // LFT entries now different from before the sweep
  unsigned mft_changes = 0;   // MFT entries (switch, MLID) set or cleared
  unsigned unrouted = 0;      // (switch, HCA) pairs with no route (the HCA's link is down, or a split)
  unsigned ar_groups = 0;     // (switch, HCA) pairs with an AR group (adaptive routing on)
  std::vector<std::string> activated;  // vHCA ports moved Init -> Armed -> Active
};

class SubnetManager {
 public:
  // Called after every sweep (on the lcore).
  using SweepDone = std::function<void(const SweepReport&)>;

  SubnetManager(const config::Fabric& cfg, dp::Fabric& fabric, Scheduler& sched, Nanos sweep_delay);
  ~SubnetManager();
  SubnetManager(const SubnetManager&) = delete;
  SubnetManager& operator=(const SubnetManager&) = delete;

  void on_sweep(SweepDone fn) { done_ = std::move(fn); }
  // Sweeps now: routes over the links that are up, programs every LFT entry
  // that differs, activates the ports in Init.
  const SweepReport& sweep();
  // A link changed: sweep after the delay (a sweep already due covers it).
  void request_sweep();

  // The port of vHCA `hca` joined (an app attached a QP to `mlid`) or left
  // the multicast group: every switch's MFT for it is programmed as an SM
  // does on an SA join -- once per lcore turn for all the MLIDs that changed
  // in it (a zero-delay timer), so a context leaving many groups costs one
  // pass. Attaching counts as joining, so apps that attach without asking
  // the SA (as they may on RoCE) still get their group's traffic.
  void mcast_membership(const std::string& hca, uint16_t mlid, bool member);
  // The same for a join or leave through the SA (mad::SaGroups): a port is
  // in an MLID's tree while it is attached or joined.
  void sa_membership(const std::string& hca, uint16_t mlid, bool member);
  // MLID -> member vHCAs, attached or joined.
  std::map<uint16_t, std::set<std::string>> mcast_groups() const;
  // The SA's multicast groups (MCMemberRecord), kept with the SM.
  mad::SaGroups& sa_groups() { return sa_groups_; }

  const Routes& routes() const { return routes_; }
  const SweepReport& last() const { return last_; }
  const LidTable& lids() const { return lids_; }
  const std::vector<std::string>& updn_roots() const { return roots_; }

 private:
  static void on_timer(Timer& t, Nanos now);
  static void on_mcast_timer(Timer& t, Nanos now);
  config::Fabric with_links_up() const;
  unsigned program_lfts(const Routes& routes, unsigned& unrouted);
  unsigned program_switch_lids(const Routes& switch_routes);
  unsigned program_ar_groups(const ArGroups& groups);
  // Every switch's entry for `mlid` from its tree over `up` (empty members:
  // the entry cleared); returns the entries that changed.
  unsigned program_mft(const config::Fabric& up, uint16_t mlid, const std::set<std::string>& members);
  std::vector<std::string> activate_ports();
  void program_qos(dp::HcaPort& h) const;
  void program_switch_qos() const;

  const config::Fabric& cfg_;
  dp::Fabric& fabric_;
  Scheduler& sched_;
  const Nanos delay_;
  const LidTable lids_;
  const std::vector<std::string> roots_;  // Up/Down roots, fixed from the whole topology
  const PortQos qos_;                     // what every port gets from the config's qos: section
  Routes routes_;
  SweepReport last_;
  dp::CtxTimer timer_;
  SweepDone done_;
  static void set_member(std::map<uint16_t, std::set<std::string>>& table, const std::string& hca, uint16_t mlid,
                         bool member);
  void mark_dirty(uint16_t mlid);
  std::set<std::string> members_of(uint16_t mlid) const;
  std::map<uint16_t, std::set<std::string>> mcast_;     // MLID -> vHCAs with a QP attached
  std::map<uint16_t, std::set<std::string>> sa_mcast_;  // MLID -> vHCAs joined through the SA
  mad::SaGroups sa_groups_;
  std::set<uint16_t> mcast_dirty_;                     // MLIDs whose MFT entries are due
  dp::CtxTimer mcast_timer_;
};

}  // namespace sm
}  // namespace vf
