#include "dataplane/fabric/eth_switch.hpp"

#include <stdexcept>

#include "dataplane/wire/frame_peek.hpp"

namespace vf::dp {

EthSwitch::EthSwitch(Scheduler& sched, std::string name, const SwitchConfig& cfg)
    : Switch(sched, std::move(name), LinkLayer::kEthernet, cfg, this, &EthSwitch::on_rx) {}

void EthSwitch::add_fdb(const Mac& mac, unsigned port) {
  if (port == 0 || port > nports()) throw std::invalid_argument("switch " + name_ + ": FDB port out of range");
  fdb_[mac_key(mac.data())] = uint16_t(port);
}

void EthSwitch::remove_fdb(const Mac& mac) { fdb_.erase(mac_key(mac.data())); }

void EthSwitch::on_rx(void* self, Port& in, rte_mbuf* m, unsigned cls) {
  auto& sw = *static_cast<EthSwitch*>(self);
  // The ingress port classified the frame, so its Ethernet header is there.
  const auto it = sw.fdb_.find(mac_key(wire::eth_frame_dst(m)));
  Port* out = it == sw.fdb_.end() ? nullptr : sw.egress(in, it->second);
  if (!out) return sw.relay_error(in, m, cls);
  sw.forward(in, cls, *out, cls, m);
}

}  // namespace vf::dp
