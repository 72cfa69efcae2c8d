#include "daemon/mad/pma.hpp"

#include <algorithm>
#include <cstring>

namespace vf::mad {
namespace {

constexpr uint16_t kCapExtWidth = 1u << 9;   // PortCountersExtended
constexpr uint16_t kCapXmitWait = 1u << 12;  // PortXmitWait
// CounterSelect bits of what the emulated ports count (IBA 16.1.3.5): a
// Set must clear all of them or none, since the 32-bit and 64-bit
// attributes read the same counters.
constexpr uint16_t kAllCounters = 0xFFFF;
constexpr uint16_t kAllCountersExt = 0x00FF;

uint64_t sat(uint64_t v, unsigned bits) {
  const uint64_t max = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
  return std::min(v, max);
}

void class_port_info(Mad& m) {
  uint8_t* d = &m[kPmaData];
  d[0] = 1;
  d[1] = 1;
  put_be(d + 2, 2, kCapExtWidth | kCapXmitWait);
  put_bits(d, 59, 5, 18);  // RespTimeValue
}

void port_counters(const ModelPort& p, Mad& m) {
  uint8_t* d = &m[kPmaData];
  const PortCounterValues& c = p.counters;
  put_bits(d, 56, 8, sat(c.link_downed, 8));
  put_bits(d, 64, 16, sat(c.rcv_errors, 16));
  put_bits(d, 96, 16, sat(c.rcv_switch_relay_errors, 16));
  put_bits(d, 112, 16, sat(c.xmit_discards, 16));
  put_bits(d, 156, 4, sat(c.excessive_buffer_overruns, 4));
  put_bits(d, 176, 16, sat(c.vl15_dropped, 16));
  put_bits(d, 192, 32, sat(c.xmit_data, 32));
  put_bits(d, 224, 32, sat(c.rcv_data, 32));
  put_bits(d, 256, 32, sat(c.xmit_pkts, 32));
  put_bits(d, 288, 32, sat(c.rcv_pkts, 32));
  put_bits(d, 320, 32, sat(c.xmit_wait_ticks, 32));
}

void port_counters_ext(const ModelPort& p, Mad& m) {
  uint8_t* d = &m[kPmaData];
  const PortCounterValues& c = p.counters;
  put_be(d + 8, 8, c.xmit_data);
  put_be(d + 16, 8, c.rcv_data);
  put_be(d + 24, 8, c.xmit_pkts);
  put_be(d + 32, 8, c.rcv_pkts);
  put_be(d + 40, 8, c.xmit_pkts - std::min(c.xmit_pkts, c.mcast_xmit_pkts));
  put_be(d + 48, 8, c.rcv_pkts - std::min(c.rcv_pkts, c.mcast_rcv_pkts));
  put_be(d + 56, 8, c.mcast_xmit_pkts);
  put_be(d + 64, 8, c.mcast_rcv_pkts);
}

// The status of a Get/Set of PortCounters[Extended], after filling it.
uint16_t counters(const ModelNode& n, size_t node, uint8_t meth, Mad& m, bool ext, std::optional<PmaReset>& reset) {
  uint8_t* d = &m[kPmaData];
  // A CA port's PMA is its own (the GMP came in on that port's QP1):
  // PortSelect is echoed, not used, as mlx5 does. A switch's names one of
  // its ports, 0 being its management port, which carries no traffic here.
  const uint8_t port = n.is_switch ? d[1] : 1;
  const uint16_t select = uint16_t(get_be(d + 2, 2));
  static const ModelPort kIdle{};
  const ModelPort* p = n.is_switch && port == 0 ? &kIdle : n.port(port);
  if (!p) return kStatusBadAttrOrModifier;  // includes 0xFF (AllPortSelect is not offered)
  if (meth == kSet) {
    if (p == &kIdle) return kStatusBadAttrOrModifier;  // port 0 counts nothing to clear
    const uint16_t all = ext ? kAllCountersExt : kAllCounters;
    if ((select & all) != all) return kStatusBadAttrOrModifier;
    reset = PmaReset{node, port};
    // The response shows the counters as the Set left them: all zero.
    std::memset(d + 4, 0, kMadSize - kPmaData - 4);
    return 0;
  }
  std::memset(d + 4, 0, kMadSize - kPmaData - 4);
  ext ? port_counters_ext(*p, m) : port_counters(*p, m);
  return 0;
}

}  // namespace

Verdict pma_process(const MadModel& model, size_t node, Mad& m, std::optional<PmaReset>& reset) {
  const uint8_t meth = method(m);
  if (is_response(m) || (meth != kGet && meth != kSet && !expects_response(m))) return Verdict::kDrop;
  m[3] = kGetResp;
  uint16_t st = 0;
  if (base_version(m) != 1 || class_version(m) != 1) {
    st = kStatusBadVersion;
  } else if (meth != kGet && meth != kSet) {
    st = kStatusMethodUnsupported;
  } else {
    switch (attr_id(m)) {
      case kAttrClassPortInfo:
        if (meth != kGet) {
          st = kStatusMethodAttrUnsupported;
          break;
        }
        std::memset(&m[kPmaData], 0, kMadSize - kPmaData);
        class_port_info(m);
        break;
      case kAttrPortCounters:
        st = counters(model.nodes.at(node), node, meth, m, false, reset);
        break;
      case kAttrPortCountersExt:
        st = counters(model.nodes.at(node), node, meth, m, true, reset);
        break;
      default:
        st = kStatusMethodAttrUnsupported;
    }
  }
  set_status(m, st);
  return Verdict::kRespond;
}

}  // namespace vf::mad
