#include "daemon/sm/subnet_manager.hpp"

#include <span>
#include <utility>

#include "daemon/sm/mcast_tree.hpp"
#include "daemon/sm/sm_qos.hpp"
#include "dataplane/fabric/fabric.hpp"

namespace vf::sm {

dp::Endpoint dp_endpoint(const config::Endpoint& e) { return {e.node, e.is_switch ? e.port : 0}; }

SubnetManager::SubnetManager(const config::Fabric& cfg, dp::Fabric& fabric, Scheduler& sched, Nanos sweep_delay)
    : cfg_(cfg),
      fabric_(fabric),
      sched_(sched),
      delay_(sweep_delay),
      lids_(assign_lids(cfg)),
      // Up/Down ranks come from the whole topology: a link going down must
      // not move the roots, or routes would turn over fabric-wide.
      roots_(cfg.sm.roots.empty() ? default_updn_roots(cfg) : cfg.sm.roots),
      qos_(programmed_qos(cfg.qos)),
      timer_(&SubnetManager::on_timer, this),
      mcast_timer_(&SubnetManager::on_mcast_timer, this) {
  sa_groups_.set_mlid_in_use([this](uint16_t mlid) { return mcast_.count(mlid) != 0; });
}

SubnetManager::~SubnetManager() {
  sched_.disarm(timer_);
  sched_.disarm(mcast_timer_);
}

void SubnetManager::request_sweep() {
  if (!timer_.armed()) sched_.arm_after(timer_, delay_);
}

void SubnetManager::on_timer(Timer& t, Nanos) {
  auto& sm = dp::CtxTimer::owner<SubnetManager>(t);
  sm.sweep();
}

config::Fabric SubnetManager::with_links_up() const {
  config::Fabric f = cfg_;
  f.links.clear();
  for (const config::Link& l : cfg_.links)
    if (const dp::LinkInfo* li = fabric_.find_link(dp_endpoint(l.a)); li && li->up()) f.links.push_back(l);
  f.sm.roots = roots_;
  return f;
}

const SweepReport& SubnetManager::sweep() {
  sched_.disarm(timer_);
  const config::Fabric up = with_links_up();
  const bool adaptive = cfg_.adaptive.mode != config::AdaptiveRouting::Mode::Off;
  ArGroups groups;
  Routes routes = compute_routes(up, false, adaptive ? &groups : nullptr);
  SweepReport r;
  r.number = last_.number + 1;
  r.at = sched_.now();
  r.links = unsigned(cfg_.links.size());
  r.links_up = unsigned(up.links.size());
  if (r.number == 1) program_switch_qos();
  r.lft_changes = program_lfts(routes, r.unrouted) + program_switch_lids(compute_routes(up, /*to_switches=*/true));
  if (adaptive) r.ar_groups = program_ar_groups(groups);
  for (const auto& [mlid, members] : mcast_groups()) r.mft_changes += program_mft(up, mlid, members);
  r.activated = activate_ports();
  routes_ = std::move(routes);
  last_ = std::move(r);
  if (done_) done_(last_);
  return last_;
}

// Every LID of every HCA (base .. base + 2^LMC - 1) on every switch: the
// route, or no route (a packet to it is a relay error at the switch).
unsigned SubnetManager::program_lfts(const Routes& routes, unsigned& unrouted) {
  unsigned changes = 0;
  unrouted = 0;
  for (const config::Switch& s : cfg_.switches) {
    auto& sw = static_cast<dp::IbSwitch&>(*fabric_.find_switch(s.name));
    const auto table = routes.find(s.name);
    for (const config::Hca& h : cfg_.hcas) {
      uint8_t port = dp::IbSwitch::kNoRoute;
      if (table != routes.end())
        if (const auto it = table->second.find(h.name); it != table->second.end()) port = uint8_t(it->second);
      if (port == dp::IbSwitch::kNoRoute) ++unrouted;
      const uint16_t base = lids_.lid(h.name);
      for (uint32_t lid = base; lid < base + (1u << lids_.lmc); ++lid)
        if (sw.lft(uint16_t(lid)) != port) {
          sw.set_lft(uint16_t(lid), port);
          ++changes;
        }
    }
  }
  return changes;
}

// Every LID of every HCA gets its AR group on every switch (none where the
// route has one way only); returns the (switch, HCA) pairs that have one.
unsigned SubnetManager::program_ar_groups(const ArGroups& groups) {
  unsigned with_group = 0;
  for (const config::Switch& s : cfg_.switches) {
    auto& sw = static_cast<dp::IbSwitch&>(*fabric_.find_switch(s.name));
    const auto table = groups.find(s.name);
    for (const config::Hca& h : cfg_.hcas) {
      std::span<const uint8_t> ports;
      if (table != groups.end())
        if (const auto it = table->second.find(h.name); it != table->second.end()) ports = it->second;
      with_group += !ports.empty();
      const uint16_t base = lids_.lid(h.name);
      for (uint32_t lid = base; lid < base + (1u << lids_.lmc); ++lid) sw.set_ar_group(uint16_t(lid), ports);
    }
  }
  return with_group;
}

// Every switch's own LID on every switch: port 0 on itself (its management
// port: SMA, PMA, and the SA on the SM's switch), the route elsewhere -- as
// opensm programs them, so LID-routed MADs reach a switch beyond the first.
unsigned SubnetManager::program_switch_lids(const Routes& routes) {
  unsigned changes = 0;
  for (const config::Switch& s : cfg_.switches) {
    auto& sw = static_cast<dp::IbSwitch&>(*fabric_.find_switch(s.name));
    const auto table = routes.find(s.name);
    for (const config::Switch& dest : cfg_.switches) {
      uint8_t port = dp::IbSwitch::kNoRoute;
      if (table != routes.end())
        if (const auto it = table->second.find(dest.name); it != table->second.end()) port = uint8_t(it->second);
      const uint16_t lid = lids_.lid(dest.name);
      if (lid != 0 && sw.lft(lid) != port) {
        sw.set_lft(lid, port);
        ++changes;
      }
    }
  }
  return changes;
}

void SubnetManager::set_member(std::map<uint16_t, std::set<std::string>>& table, const std::string& hca,
                               uint16_t mlid, bool member) {
  if (member) {
    table[mlid].insert(hca);
    return;
  }
  const auto it = table.find(mlid);
  if (it == table.end()) return;
  it->second.erase(hca);
  if (it->second.empty()) table.erase(it);
}

void SubnetManager::mark_dirty(uint16_t mlid) {
  mcast_dirty_.insert(mlid);
  if (!mcast_timer_.armed()) sched_.arm(mcast_timer_, sched_.now());
}

void SubnetManager::mcast_membership(const std::string& hca, uint16_t mlid, bool member) {
  set_member(mcast_, hca, mlid, member);
  mark_dirty(mlid);
}

void SubnetManager::sa_membership(const std::string& hca, uint16_t mlid, bool member) {
  set_member(sa_mcast_, hca, mlid, member);
  mark_dirty(mlid);
}

std::set<std::string> SubnetManager::members_of(uint16_t mlid) const {
  std::set<std::string> out;
  for (const auto* table : {&mcast_, &sa_mcast_})
    if (const auto it = table->find(mlid); it != table->end()) out.insert(it->second.begin(), it->second.end());
  return out;
}

std::map<uint16_t, std::set<std::string>> SubnetManager::mcast_groups() const {
  std::map<uint16_t, std::set<std::string>> out;
  for (const auto* table : {&mcast_, &sa_mcast_})
    for (const auto& [mlid, members] : *table) out[mlid].insert(members.begin(), members.end());
  return out;
}

void SubnetManager::on_mcast_timer(Timer& t, Nanos) {
  auto& sm = dp::CtxTimer::owner<SubnetManager>(t);
  const config::Fabric up = sm.with_links_up();
  for (uint16_t mlid : std::exchange(sm.mcast_dirty_, {})) sm.program_mft(up, mlid, sm.members_of(mlid));
}

unsigned SubnetManager::program_mft(const config::Fabric& up, uint16_t mlid, const std::set<std::string>& members) {
  const McastTree tree = members.empty() ? McastTree{} : compute_mcast_tree(up, roots_, members);
  unsigned changes = 0;
  for (const config::Switch& s : cfg_.switches) {
    auto& sw = static_cast<dp::IbSwitch&>(*fabric_.find_switch(s.name));
    const auto it = tree.find(s.name);
    const McastPorts want = it == tree.end() ? McastPorts{} : it->second;
    const dp::IbSwitch::PortMask* have = sw.mft(mlid);
    if ((have ? *have : McastPorts{}) == want) continue;
    sw.set_mft(mlid, want);
    ++changes;
  }
  return changes;
}

// SubnSet(SLtoVLMappingTable) for every (input, output) pair and
// SubnSet(VLArbitrationTable) for every port of every switch.
void SubnetManager::program_switch_qos() const {
  for (const config::Switch& s : cfg_.switches) {
    auto& sw = static_cast<dp::IbSwitch&>(*fabric_.find_switch(s.name));
    for (unsigned port = 1; port <= s.ports; ++port) {
      for (uint8_t sl = 0; sl < kNumSls; ++sl) sw.set_sl2vl(port, sl, qos_.sl2vl[sl]);
      sw.set_vlarb(port, qos_.vlarb_high, qos_.vlarb_low, qos_.vlarb_high_limit);
    }
  }
}

// A vHCA port's tables, before it turns Armed (a port that trained again
// gets them again, as from an SM that cannot know what it kept).
void SubnetManager::program_qos(dp::HcaPort& h) const {
  for (uint8_t sl = 0; sl < kNumSls; ++sl) h.set_sl2vl(sl, qos_.sl2vl[sl]);
  h.set_vlarb(qos_.vlarb_high, qos_.vlarb_low, qos_.vlarb_high_limit);
}

// The SM's SubnSet(PortInfo) to Armed, then to Active, for every port whose
// link trained since the last sweep.
std::vector<std::string> SubnetManager::activate_ports() {
  std::vector<std::string> out;
  for (const auto& h : fabric_.hca_ports()) {
    if (h->info().state != PortState::kInit) continue;
    program_qos(*h);
    h->set_state(PortState::kArmed, PhysState::kLinkUp);
    h->set_state(PortState::kActive, PhysState::kLinkUp);
    out.push_back(h->name());
  }
  return out;
}

}  // namespace vf::sm
