#include "dataplane/fabric/port_counters.hpp"

namespace vf::dp {

PortSnapshot snapshot(const PortCounters& c, Nanos now) {
  PortSnapshot s{};
  s.tx_bytes = c.xmit_bytes.get();
  s.rx_bytes = c.rcv_bytes.get();
  s.tx_packets = c.xmit_pkts.get();
  s.rx_packets = c.rcv_pkts.get();
  s.port_xmit_data = s.tx_bytes / 4;
  s.port_rcv_data = s.rx_bytes / 4;
  s.port_xmit_pkts = s.tx_packets;
  s.port_rcv_pkts = s.rx_packets;
  s.port_xmit_discards = c.xmit_discards.get();
  s.port_rcv_errors = c.rcv_errors.get();
  s.port_rcv_switch_relay_errors = c.rcv_switch_relay_errors.get();
  s.port_xmit_wait_ns = c.xmit_wait_ns.get();
  const Nanos since = c.wait_since.get();
  if (since != kNever && now > since) s.port_xmit_wait_ns += now - since;
  s.tx_drops = s.port_xmit_discards;
  s.rx_drops = s.port_rcv_errors + s.port_rcv_switch_relay_errors + c.rcv_discards.get();
  for (unsigned i = 0; i < kNumClasses; ++i) {
    const ClassCounters& k = c.cls[i];
    s.classes[i] = ClassSnapshot{k.depth_pkts.get(),    k.depth_bytes.get(), k.max_depth_pkts.get(),
                                 k.xmit_pkts.get(),     k.xmit_bytes.get(),  k.xmit_discards.get(),
                                 k.rcv_pkts.get(),      k.rcv_bytes.get(),   k.rx_buffered_bytes.get(),
                                 k.rx_buffered_peak.get()};
  }
  return s;
}

}  // namespace vf::dp
