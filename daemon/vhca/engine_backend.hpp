// Connects one vHCA's device socket to its engine: requests run on the lcore
// (where the engine lives) and their replies come back to the control thread.
#pragma once

#include <unordered_map>

#include "daemon/vhca/device_commands.hpp"
#include "daemon/vhca/device_server.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/fabric/topology.hpp"

namespace vf {

class EngineBackend : public DeviceBackend {
 public:
  // `index`: the vHCA's place in the topology.
  EngineBackend(Lcore& lcore, Topology& topo, size_t index, AppEventSink& events);

  void opened(uint32_t client, const DevicePeer& peer) override;
  void request(uint32_t client, std::vector<uint8_t> msg, std::vector<int> fds,
               std::function<void(DeviceReply)> done) override;
  void closed(uint32_t client) override;

 private:
  Lcore& lcore_;
  engine::Hca& hca_;
  AppEventSink& events_;  // lcore only
  std::unordered_map<uint32_t, DevicePeer> peers_;  // control thread only
};

}  // namespace vf
