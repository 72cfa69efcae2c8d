// The connection manager's wire in fabricd: each CM message leaves its
// port's QP1 as a MAD (cm_mad.hpp) in a UD datagram -- LID-routed on
// InfiniBand, RoCEv2 to the peer's GID on Ethernet -- and crosses the
// emulated links and switches like any packet: captured, counted, delayed,
// lost with a lossy link. What arrives on a port's QP1 is decoded on the
// control thread and handed to the service with its sender, known by the
// packet's SLID (IB) or source GID (RoCE).
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 in C++20)

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <vector>

#include "daemon/cm/service.hpp"
#include "device/engine/gsi.hpp"

namespace vf {
class Lcore;
class Topology;
}  // namespace vf

namespace vf::cm {

class GsiWire final : public Wire {
 public:
  GsiWire(boost::asio::io_context& io, Lcore& lcore, Topology& topo, const std::vector<Port>& ports);
  // Hooks every vHCA's QP1 to `svc`. Before the lcore runs.
  void attach(Service& svc);
  void send(size_t from_vhca, size_t to_vhca, const Msg& m) override;
  // Adds port `vhca`'s MADs that could not leave (no room) and those that
  // arrived but were no CM message of a known sender. Any thread.
  void add_drops(size_t vhca, CmStats& s) const;

 private:
  void arrived(size_t at, const std::array<uint8_t, 256>& mad, const engine::GsiSource& from);

  boost::asio::io_context& io_;
  Lcore& lcore_;
  Topology& topo_;
  const std::vector<Port>& ports_;
  Service* svc_ = nullptr;
  uint64_t tid_ = 1;
  // Per port; counted on the lcore (unsent) and the control thread.
  std::unique_ptr<std::atomic<uint64_t>[]> unsent_, dropped_;
};

}  // namespace vf::cm
