// An Ethernet port's QoS, in the words of `dcb` / `mlnx_qos`: what the port
// trusts to classify a frame (the 802.1Q PCP or the IP DSCP), the DSCP ->
// priority map, and 802.1Qbb PFC (pfc.hpp). Switch ports and RoCE vHCA ports
// take the same record; the daemon fills it from the fabric's `qos:` section.
// The dataplane's default is plain lossy Ethernet that trusts PCP; the
// daemon's default for a RoCE fabric is what RoCE guides recommend (trust
// DSCP, PFC on priority 3).
#pragma once

#include <array>
#include <climits>
#include <cstdint>

#include "dataplane/fabric/types.hpp"

namespace vf::dp {

struct PfcSettings {
  uint8_t enable = 0;              // pfc enable vector (bit n: priority n is lossless)
  uint16_t pause_quanta = 0xFFFF;  // what an XOFF asks for
  Nanos response_ns = 1000;        // this port's reaction to a received pause
  Nanos watchdog_ns = 0;           // PFC watchdog; 0 = off
  // Per lossless priority group of this port's receive side; 0 = computed
  // from the link (pfc_headroom.hpp).
  uint32_t xoff_bytes = 0;
  uint32_t xon_bytes = 0;
  uint32_t headroom_bytes = 0;
  Nanos interface_delay_ns = 0;  // PHY/MAC delay per direction in the headroom model
  // A switch port's static reserved part per priority group, lossy and
  // lossless alike: guaranteed before the group takes from the shared pool.
  uint32_t reserved_bytes = 0;
  // Dynamic shared-buffer thresholds (pfc.hpp): a group may hold alpha times
  // the switch's free shared buffer, alpha = 2^alpha_log2; kStaticThresholds:
  // the static xoff (and, lossy, only the pool's size) bound it.
  int8_t alpha_log2 = kStaticThresholds;
  static constexpr int8_t kStaticThresholds = INT8_MIN;
};

// mlx5's and Linux's default map: priority = DSCP >> 3 (DSCP 26 -> 3, 48 -> 6).
constexpr std::array<uint8_t, 64> default_dscp2prio() {
  std::array<uint8_t, 64> m{};
  for (unsigned d = 0; d < 64; ++d) m[d] = uint8_t(d >> 3);
  return m;
}

// RED-style ECN marking on a switch's egress queues (ecn_marker.hpp).
struct EcnProfile {
  bool enabled = false;
  uint32_t kmin_bytes = 0;
  uint32_t kmax_bytes = 0;
  double pmax = 0;  // 0..1
  // WRED: a frame the profile picks that cannot be marked (not ECT) is
  // dropped instead of passing. Only ever on lossy priorities.
  bool wred = false;
};

// 802.1Qaz egress scheduling (ets.hpp): priorities map to traffic classes,
// each class is strict priority (higher TC first) or shares what the strict
// ones leave by ETS bandwidth percentages. Off: the priorities' queues are
// served round robin, one frame each.
enum class Tsa : uint8_t { kStrict, kEts };
struct EtsConfig {
  bool enabled = false;
  // IEEE 802.1Q's recommended map for eight classes, which mlx5 uses too:
  // best effort (0) above background (1).
  std::array<uint8_t, 8> prio2tc{1, 0, 2, 3, 4, 5, 6, 7};
  std::array<Tsa, 8> tsa{Tsa::kEts, Tsa::kEts, Tsa::kEts, Tsa::kEts,
                         Tsa::kEts, Tsa::kEts, Tsa::kEts, Tsa::kEts};
  std::array<uint8_t, 8> bw{13, 13, 13, 13, 12, 12, 12, 12};  // percent; the ETS classes' sum to 100
};

struct EthQos {
  bool trust_dscp = false;  // false: trust pcp (untagged = priority 0)
  std::array<uint8_t, 64> dscp2prio = default_dscp2prio();
  PfcSettings pfc;
  EcnProfile ecn;  // a switch port's marking, the same on every priority
  EtsConfig ets;
};

}  // namespace vf::dp
