// An Ethernet switch: a static FDB (MAC → port) set by the daemon; no
// learning and no flooding yet, so unknown unicast, broadcast and multicast
// destinations are relay errors (the emulated hosts use a static neighbour
// table and never ARP). The egress priority is the ingress priority (802.1Q
// PCP; untagged = 0).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "dataplane/fabric/switch.hpp"

namespace vf::dp {

class EthSwitch final : public Switch {
 public:
  EthSwitch(Scheduler& sched, std::string name, const SwitchConfig& cfg);

  void add_fdb(const Mac& mac, unsigned port);
  void remove_fdb(const Mac& mac);

 private:
  static void on_rx(void* self, Port& in, rte_mbuf* m, unsigned cls);

  std::unordered_map<uint64_t, uint16_t> fdb_;
};

// 48-bit MAC as an integer key.
inline uint64_t mac_key(const uint8_t* mac) {
  uint64_t k = 0;
  for (int i = 0; i < 6; ++i) k = k << 8 | mac[i];
  return k;
}

}  // namespace vf::dp
