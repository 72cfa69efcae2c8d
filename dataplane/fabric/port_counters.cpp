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
  s.port_rcv_discards = c.rcv_discards.get();
  const Nanos since = c.wait_since.get();
  if (since != kNever && now > since) s.port_xmit_wait_ns += now - since;
  s.tx_drops = s.port_xmit_discards;
  s.rx_drops = s.port_rcv_errors + s.port_rcv_switch_relay_errors + s.port_rcv_discards;
  for (unsigned i = 0; i < kNumClasses; ++i) {
    const ClassCounters& k = c.cls[i];
    s.classes[i] = ClassSnapshot{k.depth_pkts.get(),    k.depth_bytes.get(), k.max_depth_pkts.get(),
                                 k.xmit_pkts.get(),     k.xmit_bytes.get(),  k.xmit_discards.get(),
                                 k.rcv_pkts.get(),      k.rcv_bytes.get(),   k.rx_buffered_bytes.get(),
                                 k.rx_buffered_peak.get()};
  }
  return s;
}

namespace {
constexpr CounterDef kPortDefs[] = {
    VF_COUNTER(PortSnapshot, port_xmit_data, "PortXmitData", "port_xmit_data", kWords,
               "data octets sent, divided by 4 (all headers and CRCs included)"),
    VF_COUNTER(PortSnapshot, port_rcv_data, "PortRcvData", "port_rcv_data", kWords,
               "data octets received, divided by 4"),
    VF_COUNTER(PortSnapshot, port_xmit_pkts, "PortXmitPkts", "port_xmit_packets", kPackets,
               "packets sent"),
    VF_COUNTER(PortSnapshot, port_rcv_pkts, "PortRcvPkts", "port_rcv_packets", kPackets,
               "packets received, including those later found in error"),
    VF_COUNTER(PortSnapshot, port_xmit_discards, "PortXmitDiscards", "port_xmit_discards", kPackets,
               "outbound packets discarded because the port was down or its queue full"),
    VF_COUNTER(PortSnapshot, port_rcv_errors, "PortRcvErrors", "port_rcv_errors", kPackets,
               "received packets with an error (CRC, length, header checks, not for this port)"),
    VF_COUNTER(PortSnapshot, port_rcv_switch_relay_errors, "PortRcvSwitchRelayErrors",
               "port_rcv_switch_relay_errors", kPackets,
               "received packets a switch could not forward (no route, bad VL)"),
    VF_COUNTER(PortSnapshot, port_xmit_wait_ns, "PortXmitWait", "port_xmit_wait", kNanoseconds,
               "time a frame was ready but flow control let nothing go"),
    // Not an IBA PMA counter: the IBA has no name for a frame a receiver had
    // no room for, because a credit-respecting sender never causes one.
    VF_COUNTER(PortSnapshot, port_rcv_discards, "PortRcvDiscards", "port_rcv_discards", kPackets,
               "received frames dropped for want of buffer (switch memory, flow control) or receiver"),
};
}  // namespace

const CounterTable kPortCounters{kPortDefs};

}  // namespace vf::dp
