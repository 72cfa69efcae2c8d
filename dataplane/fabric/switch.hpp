// A store-and-forward switch with N ports (numbered 1..N as in the IBA and the
// config's "sw/1"; IB port 0, the switch's management port, is not modelled).
//
// A frame is switched once it has been received whole (the link delivers at its
// last bit): the forwarding decision is made then and the frame is queued on the
// egress port, eligible to leave `latency_ns` later. It keeps occupying the
// ingress port's receive buffer until it leaves the egress port (see Port).
//
// InfiniBand: egress port = LFT[DLID]. The LFT is linear, 0xC000 entries (the
// unicast LID space), 0xFF = unset, filled by the subnet manager. Multicast
// DLIDs (no MFT yet), unset entries, port 0, ports out of range and the ingress
// port itself are relay errors: drop, PortRcvSwitchRelayErrors on the ingress
// port. The egress VL is the egress port's SL→VL table for the packet's SL
// (default SL n → VL n % data_vls); an SL mapped to VL15 is dropped the same
// way. VL15 packets stay on VL15. The VL field travels in the LRH; when the map
// changes it the switch rewrites it and recomputes the VCRC (checking the old
// one first: a bad VCRC is a PortRcvErrors drop).
// Simplification: the IBA's SL→VL table is per (input, output) port pair; here
// it is per output port.
//
// Ethernet: a static FDB (MAC → port) set by the daemon; no learning and no
// flooding, so unknown unicast, broadcast and multicast destinations are relay
// errors (the emulated hosts use a static neighbour table and never ARP). The
// egress priority is the ingress priority (802.1Q PCP; untagged = 0).
//
// A full egress queue drops the frame and counts PortXmitDiscards on the egress
// port — until credits (IB) or PFC (lossless priorities) make that impossible.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "dataplane/fabric/port.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

struct SwitchConfig {
  unsigned nports = 8;
  Nanos latency_ns = 0;        // store-and-forward switching latency
  uint8_t data_vls = 8;        // IB: operational data VLs (1, 2, 4 or 8)
  PortConfig port;             // queue sizes of every port
  uint64_t buffer_bytes = 0;   // shared packet memory of all ports; 0 = unlimited
};

class Switch {
 public:
  static constexpr uint8_t kNoRoute = 0xFF;
  static constexpr size_t kLftSize = 0xC000;

  Switch(Scheduler& sched, std::string name, LinkLayer ll, const SwitchConfig& cfg);
  Switch(const Switch&) = delete;
  Switch& operator=(const Switch&) = delete;

  const std::string& name() const { return name_; }
  LinkLayer link_layer() const { return ll_; }
  unsigned nports() const { return unsigned(ports_.size()); }
  Nanos latency() const { return cfg_.latency_ns; }
  // Port `num`, 1..nports.
  Port& port(unsigned num) { return *ports_.at(num - 1); }
  // The shared packet memory (SwitchConfig::buffer_bytes), or null.
  const SharedBuffer* buffer() const { return buffer_.get(); }
  const Port& port(unsigned num) const { return *ports_.at(num - 1); }

  // ---- InfiniBand
  void set_lft(uint16_t dlid, uint8_t port);  // kNoRoute clears
  uint8_t lft(uint16_t dlid) const { return dlid < kLftSize ? lft_[dlid] : kNoRoute; }
  void set_sl2vl(unsigned out_port, uint8_t sl, uint8_t vl);
  uint8_t sl2vl(unsigned out_port, uint8_t sl) const { return sl2vl_.at(out_port - 1)[sl & 15]; }

  // ---- Ethernet
  void add_fdb(const Mac& mac, unsigned port);
  void remove_fdb(const Mac& mac);

 private:
  static void on_rx(void* self, Port& in, rte_mbuf* m, unsigned cls);
  void forward_ib(Port& in, rte_mbuf* m, unsigned cls);
  void forward_eth(Port& in, rte_mbuf* m, unsigned cls);
  void relay_error(Port& in, rte_mbuf* m, unsigned cls);
  // The egress port for `num` if it can take a frame from `in`, else null.
  Port* egress(const Port& in, unsigned num);

  const std::string name_;
  const LinkLayer ll_;
  const SwitchConfig cfg_;
  Scheduler& sched_;
  std::unique_ptr<SharedBuffer> buffer_;  // before ports_: they point into it
  std::vector<std::unique_ptr<Port>> ports_;
  std::vector<uint8_t> lft_;
  std::vector<std::array<uint8_t, 16>> sl2vl_;
  std::unordered_map<uint64_t, uint16_t> fdb_;
};

// 48-bit MAC as an integer key.
inline uint64_t mac_key(const uint8_t* mac) {
  uint64_t k = 0;
  for (int i = 0; i < 6; ++i) k = k << 8 | mac[i];
  return k;
}

}  // namespace vf::dp
