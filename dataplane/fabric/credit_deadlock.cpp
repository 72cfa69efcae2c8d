#include "dataplane/fabric/credit_deadlock.hpp"

#include <algorithm>

namespace vf::dp {

CreditDeadlockDetector::CreditDeadlockDetector(Fabric& f) : f_(f) {
  for (const LinkInfo& l : f.links()) {
    const Port* a = &f.port(l.a);
    const Port* b = &f.port(l.b);
    peer_[a] = b;
    peer_[b] = a;
  }
  for (const auto& s : f.switches())
    for (unsigned i = 1; i <= s->nports(); ++i) switch_of_[&s->port(i)] = s.get();
}

std::vector<CreditDeadlockDetector::Node> CreditDeadlockDetector::stuck_now() {
  std::vector<Node> stuck;
  auto visit = [&](const Port& p) {
    for (unsigned vl = 0; vl < kNumDataClasses; ++vl) {
      const Node n{&p, vl};
      const uint64_t sent = p.counters().cls[vl].xmit_pkts.get();
      const auto it = last_xmit_.find(n);
      if (p.head_gated(vl) && it != last_xmit_.end() && it->second == sent) stuck.push_back(n);
      last_xmit_[n] = sent;
    }
  };
  for (const auto& h : f_.hca_ports()) visit(h->port());
  for (const auto& s : f_.switches())
    for (unsigned i = 1; i <= s->nports(); ++i) visit(s->port(i));
  return stuck;
}

// (P, v) waits for the buffer of VL v at P's peer Q; in a switch that buffer
// is held by packets queued at its other egress ports.
std::vector<CreditDeadlockDetector::Node> CreditDeadlockDetector::waits_for(const Node& n,
                                                                            const std::set<Node>& stuck) const {
  std::vector<Node> out;
  const auto peer = peer_.find(n.first);
  if (peer == peer_.end()) return out;
  const auto sw = switch_of_.find(peer->second);
  if (sw == switch_of_.end()) return out;  // an HCA consumes at once: nothing waits behind it
  for (unsigned i = 1; i <= sw->second->nports(); ++i) {
    const Port& r = sw->second->port(i);
    for (unsigned w = 0; w < kNumDataClasses; ++w) {
      if (!stuck.count({&r, w})) continue;
      bool holds = false;
      r.for_each_queued(w, [&](const QueuedFrame& q) {
        holds |= q.origin == peer->second && q.origin_cls == n.second;
      });
      if (holds) out.push_back({&r, w});
    }
  }
  return out;
}

std::vector<std::vector<std::string>> CreditDeadlockDetector::check() {
  const std::vector<Node> list = stuck_now();
  const std::set<Node> stuck(list.begin(), list.end());
  // A reported circle that moved may deadlock again later.
  for (auto it = reported_.begin(); it != reported_.end();) it = stuck.count(*it) ? std::next(it) : reported_.erase(it);

  std::vector<std::vector<std::string>> found;
  std::set<Node> done;
  for (const Node& start : list) {
    if (done.count(start) || reported_.count(start)) continue;
    // Depth-first along waits-for edges; a node seen on the current path closes a circle.
    std::vector<std::pair<Node, std::vector<Node>>> path;
    std::set<Node> on_path;
    path.push_back({start, waits_for(start, stuck)});
    on_path.insert(start);
    while (!path.empty()) {
      auto& [node, next] = path.back();
      if (next.empty()) {
        done.insert(node);
        on_path.erase(node);
        path.pop_back();
        continue;
      }
      const Node v = next.back();
      next.pop_back();
      if (on_path.count(v)) {
        std::vector<std::string> circle;
        bool in = false;
        for (const auto& [p, _] : path) {
          in |= p == v;
          if (!in) continue;
          circle.push_back(p.first->name() + " VL" + std::to_string(p.second));
          reported_.insert(p);
        }
        ++found_;
        found.push_back(std::move(circle));
        for (const auto& [p, _] : path) done.insert(p);
        break;
      }
      if (done.count(v) || reported_.count(v)) continue;  // (a known circle: said already)
      on_path.insert(v);
      path.push_back({v, waits_for(v, stuck)});
    }
  }
  return found;
}

}  // namespace vf::dp
