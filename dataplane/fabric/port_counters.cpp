#include "dataplane/fabric/port_counters.hpp"

#include <iterator>

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
  s.vl15_dropped = c.vl15_dropped.get();
  s.excessive_buffer_overrun_errors = c.excessive_buffer_overruns.get();
  s.link_downed = c.link_downed.get();
  const Nanos since = c.wait_since.get();
  if (since != kNever && now > since) s.port_xmit_wait_ns += now - since;
  s.tx_drops = s.port_xmit_discards;
  s.rx_drops = s.port_rcv_errors + s.port_rcv_switch_relay_errors + s.port_rcv_discards;
  for (unsigned i = 0; i < kNumClasses; ++i) {
    const ClassCounters& k = c.cls[i];
    s.classes[i] = ClassSnapshot{k.depth_pkts.get(),    k.depth_bytes.get(), k.max_depth_pkts.get(),
                                 k.xmit_pkts.get(),     k.xmit_bytes.get(),  k.xmit_discards.get(),
                                 k.rcv_pkts.get(),      k.rcv_bytes.get(),   k.rx_buffered_bytes.get(),
                                 k.rx_buffered_peak.get(), k.xmit_wait_ns.get()};
    const Nanos cls_since = k.wait_since.get();
    if (cls_since != kNever && now > cls_since) s.classes[i].xmit_wait_ns += now - cls_since;
  }
  return s;
}

void reset(PortCounters& c, Nanos now) {
  for (Counter* k : {&c.xmit_bytes, &c.rcv_bytes, &c.xmit_pkts, &c.rcv_pkts, &c.xmit_discards, &c.rcv_errors,
                     &c.rcv_switch_relay_errors, &c.rcv_discards, &c.vl15_dropped, &c.excessive_buffer_overruns,
                     &c.link_downed, &c.xmit_wait_ns})
    k->set(0);
  if (c.wait_since.get() != kNever) c.wait_since.set(now);
  for (ClassCounters& k : c.cls) {
    for (Counter* x : {&k.xmit_pkts, &k.xmit_bytes, &k.xmit_discards, &k.rcv_pkts, &k.rcv_bytes, &k.xmit_wait_ns})
      x->set(0);
    k.max_depth_pkts.set(k.depth_pkts.get());
    k.rx_buffered_peak.set(k.rx_buffered_bytes.get());
    if (k.wait_since.get() != kNever) k.wait_since.set(now);
  }
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
    VF_COUNTER(PortSnapshot, link_downed, "LinkDownedCounter", "link_downed", kEvents,
               "times the link went down"),
    VF_COUNTER(PortSnapshot, vl15_dropped, "VL15Dropped", "VL15_dropped", kPackets,
               "management (VL15) packets dropped for want of buffer"),
    VF_COUNTER(PortSnapshot, excessive_buffer_overrun_errors, "ExcessiveBufferOverrunErrors",
               "excessive_buffer_overrun_errors", kPackets,
               "data packets that overran their VL's receive buffer"),
    // Not an IBA PMA counter: the IBA has no name for a frame a receiver had
    // no room for, because a credit-respecting sender never causes one.
    VF_COUNTER(PortSnapshot, port_rcv_discards, "PortRcvDiscards", "port_rcv_discards", kPackets,
               "received frames dropped for want of buffer (switch memory, flow control) or receiver"),
};
static_assert(valid_counter_table<PortSnapshot>(kPortDefs));

// Levels are gauges; the rest only grow.
constexpr CounterDef kClassDefs[] = {
    VF_GAUGE(ClassSnapshot, depth_pkts, "depth_pkts", "class_depth_packets", kPackets,
             "frames queued for egress in this class now"),
    VF_GAUGE(ClassSnapshot, depth_bytes, "depth_bytes", "class_depth_bytes", kBytes,
             "bytes queued for egress in this class now"),
    VF_GAUGE(ClassSnapshot, max_depth_pkts, "max_depth_pkts", "class_max_depth_packets", kPackets,
             "most frames ever queued for egress in this class"),
    VF_COUNTER(ClassSnapshot, xmit_pkts, "xmit_pkts", "class_xmit_packets", kPackets,
               "frames of this class sent"),
    VF_COUNTER(ClassSnapshot, xmit_bytes, "xmit_bytes", "class_xmit_bytes", kBytes,
               "bytes of this class sent"),
    VF_COUNTER(ClassSnapshot, xmit_discards, "xmit_discards", "class_xmit_discards", kPackets,
               "frames of this class dropped on the way out"),
    VF_COUNTER(ClassSnapshot, rcv_pkts, "rcv_pkts", "class_rcv_packets", kPackets,
               "frames of this class received"),
    VF_COUNTER(ClassSnapshot, rcv_bytes, "rcv_bytes", "class_rcv_bytes", kBytes,
               "bytes of this class received"),
    VF_GAUGE(ClassSnapshot, rx_buffered_bytes, "rx_buffered_bytes", "class_rx_buffered_bytes", kBytes,
             "receive buffer held now by frames of this class"),
    VF_GAUGE(ClassSnapshot, rx_buffered_peak, "rx_buffered_peak", "class_rx_buffered_peak_bytes", kBytes,
             "most receive buffer frames of this class ever held"),
    VF_COUNTER(ClassSnapshot, xmit_wait_ns, "xmit_wait", "class_xmit_wait", kNanoseconds,
               "time the port waited with this class's next frame held by flow control (PortVLXmitWait)"),
};
static_assert(valid_counter_table<ClassSnapshot>(kClassDefs));
}  // namespace

const CounterTable kPortCounters{kPortDefs};
const CounterTable kClassCounters{kClassDefs};

const char* class_name(LinkLayer ll, unsigned cls) {
  static constexpr const char* kVl[] = {"vl0", "vl1", "vl2", "vl3", "vl4", "vl5", "vl6", "vl7", "vl15", "link_ctrl"};
  static constexpr const char* kPrio[] = {"prio0", "prio1", "prio2", "prio3", "prio4",
                                          "prio5", "prio6", "prio7", nullptr,  "link_ctrl"};
  static_assert(std::size(kVl) == kNumClasses && std::size(kPrio) == kNumClasses);
  if (cls >= kNumClasses) return nullptr;
  return ll == LinkLayer::kInfiniBand ? kVl[cls] : kPrio[cls];
}

}  // namespace vf::dp
