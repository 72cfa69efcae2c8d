#include "daemon/umad/mad_backend.hpp"

#include <exception>

#include "daemon/lcore/lcore.hpp"
#include "daemon/mad/agents.hpp"
#include "daemon/umad/model_build.hpp"
#include "daemon/umad/smi_agent.hpp"
#include "daemon/sm/subnet_manager.hpp"
#include "daemon/fabric/topology.hpp"
#include "dataplane/fabric/fabric.hpp"

namespace vf {

MadBackend::MadBackend(Lcore& lcore, Topology& topo, const config::Fabric& f, size_t fabric, std::string vhca)
    : lcore_(lcore), topo_(topo), fabric_cfg_(f), fabric_(fabric), vhca_(std::move(vhca)) {}

void MadBackend::send(uint32_t qpn, uint16_t dlid, const mad::Mad& m, std::function<void(UmadResult)> done) {
  if (fabric_cfg_.link_layer != config::LinkLayer::Infiniband) {
    // Ethernet has no SMA, PMA or SA: a RoCE port's MADs find no agent.
    no_agent_.fetch_add(1, std::memory_order_relaxed);
    return done({});
  }
  if (qpn == 0 && smi_) {
    SmiAgent* smi = smi_;
    const size_t vhca = vhca_index_;
    // `done` once the SMP has left, on the lcore: the umad server's bound on
    // MADs in flight then bounds this app's share of the lcore's queue.
    const bool posted = lcore_.post([smi, vhca, dlid, m, done] {
      smi->originate(vhca, dlid, m);
      done({});  // the response, if any, comes back over the fabric
    });
    if (!posted) {
      no_agent_.fetch_add(1, std::memory_order_relaxed);  // the lcore is swamped: never left
      done({});
    }
    return;
  }
  auto task = [this, qpn, dlid, m, done] {
    const bool counters = mad::mgmt_class(m) == mad::kClassPerf;
    const mad::MadModel model = mad::build_model(topo_, fabric_cfg_, fabric_, counters);
    size_t src = model.nodes.size();
    for (size_t i = 0; i < model.nodes.size(); ++i)
      if (!model.nodes[i].is_switch && model.nodes[i].name == vhca_) src = i;
    sm::SubnetManager* sm = topo_.subnet_manager(fabric_);
    mad::MadOutcome out = mad::answer_mad(model, src, qpn, dlid, m, sm ? &sm->sa_groups() : nullptr);
    for (const mad::McChange& c : out.mcast)
      if (sm && !c.node.empty()) sm->sa_membership(c.node, c.mlid, c.member);
    if (out.reset) {
      const mad::ModelNode& n = model.nodes[out.reset->node];
      try {
        topo_.reset_counters(fabric_, dp::Endpoint{n.name, n.is_switch ? out.reset->port : 0u});
      } catch (const std::exception&) {
        // A port the PMA should not have named: the agents' bug, never the
        // dataplane's end. The response still says what the agent decided.
      }
    }
    switch (out.why) {
      case mad::NoAnswer::kUnroutable: unroutable_.fetch_add(1, std::memory_order_relaxed); break;
      case mad::NoAnswer::kNoAgent: no_agent_.fetch_add(1, std::memory_order_relaxed); break;
      case mad::NoAnswer::kRefused: refused_.fetch_add(1, std::memory_order_relaxed); break;
      case mad::NoAnswer::kNone: break;
    }
    done(UmadResult{out.response, out.slid, std::move(out.table)});
  };
  if (!lcore_.post(std::move(task))) {
    no_agent_.fetch_add(1, std::memory_order_relaxed);  // the lcore is swamped: nobody got it
    done({});
  }
}

void MadBackend::add_drops(UmadStats& s) const {
  s.unroutable += unroutable_.load(std::memory_order_relaxed);
  s.no_agent += no_agent_.load(std::memory_order_relaxed);
  s.refused += refused_.load(std::memory_order_relaxed);
}

}  // namespace vf
