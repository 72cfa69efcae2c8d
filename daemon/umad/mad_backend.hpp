// The fabric side of one vHCA's umad port: runs each MAD through the
// management agents (daemon/mad/agents.hpp) on the lcore, against the
// fabric as it is at that moment, and applies what a PMA Set asked.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

#include "daemon/config/config.hpp"
#include "daemon/umad/umad_server.hpp"

namespace vf {

class Lcore;
class SmiAgent;
class Topology;


class MadBackend final : public UmadBackend {
 public:
  // `fabric`: the config index of the vHCA's fabric.
  MadBackend(Lcore& lcore, Topology& topo, const config::Fabric& f, size_t fabric, std::string vhca);
  void send(uint32_t qpn, uint16_t dlid, const mad::Mad& m, std::function<void(UmadResult)> done) override;
  // SMPs (QP0) on InfiniBand leave as VL15 packets through `smi` as vHCA
  // `vhca`; their responses come back through the umad server's
  // on_wire_response, so `done` only says they left. Before the lcore runs.
  void use_wire_for_smps(SmiAgent* smi, size_t vhca) {
    smi_ = smi;
    vhca_index_ = vhca;
  }
  // Adds the MADs that found no answer, by reason, to `s`. Any thread.
  void add_drops(UmadStats& s) const;

 private:
  Lcore& lcore_;
  Topology& topo_;
  const config::Fabric& fabric_cfg_;
  size_t fabric_;
  std::string vhca_;
  SmiAgent* smi_ = nullptr;
  size_t vhca_index_ = 0;
  // Written on the lcore (and by send() on the control thread for
  // Ethernet and a full lcore queue), read by add_drops anywhere.
  std::atomic<uint64_t> unroutable_{0}, no_agent_{0}, refused_{0};
};

}  // namespace vf
