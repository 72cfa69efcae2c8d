// An operator's `fabricctl port set <hca> state down`: the vHCA's port stops
// passing packets both ways, as a disabled physical port does, while the
// engine keeps running (its RC QPs then time out like on hardware). Sits
// between the engine and its dataplane port. Lcore only.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "device/engine/packet_io.hpp"

namespace vf {

class PortGate : public engine::PacketIo {
 public:
  explicit PortGate(engine::PacketIo& port) : port_(port) {}
  bool up() const { return up_; }
  void set_up(bool up) { up_ = up; }
  uint64_t dropped() const { return dropped_; }

  // Receive side: the topology asks before handing a packet to the engine.
  bool admit(rte_mbuf* m) {
    if (up_) return true;
    rte_pktmbuf_free(m);
    ++dropped_;
    return false;
  }

  rte_mbuf* alloc() override { return port_.alloc(); }
  bool can_transmit() const override { return port_.can_transmit(); }
  void transmit(rte_mbuf* m, const ibv_ah_attr& av) override {
    if (admit(m)) port_.transmit(m, av);
  }

 private:
  engine::PacketIo& port_;
  bool up_ = true;
  uint64_t dropped_ = 0;
};

}  // namespace vf
