// fabricd's configuration: the YAML a lab writes (configs/default.yaml is the
// annotated example) turned into plain, fully validated structs. Everything a
// later stage needs is derived here once — HCA indices, MACs, GUIDs, link
// rates — so the daemon never re-parses or second-guesses the file.
//
// Every problem is reported as a ConfigError whose what() reads
//   <file>:<line>:<col>: <problem>; <what to do>
// The input is treated as hostile: size-capped, every key checked, every
// number range-checked, every cross reference resolved.
#pragma once

#include <sys/types.h>

#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/port_qos.hpp"
#include "daemon/config/addr.hpp"

namespace vf::config {

class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, int line, int column, std::string problem, std::string fix);
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }      // 1-based; 0 when not tied to a position
  int column() const noexcept { return column_; }  // 1-based
  const std::string& problem() const noexcept { return problem_; }
  const std::string& fix() const noexcept { return fix_; }

 private:
  std::string file_;
  int line_, column_;
  std::string problem_, fix_;
};

enum class LinkLayer { Infiniband, Ethernet };
// Lanes per link (the IBA "width"). 2X exists since IBA 1.4 (HDR100) and is
// what mlx5 reports for some Ethernet speeds.
enum class IbWidth : uint8_t { X1 = 1, X2 = 2, X4 = 4, X8 = 8, X12 = 12 };
enum class IbSpeed : uint8_t { SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR };

inline constexpr std::size_t kMaxHcas = 64;       // uverbs0..63, one per HCA
inline constexpr std::size_t kMaxSwitches = 256;
inline constexpr uint32_t kMaxSwitchPorts = 254;  // IB switches address ports 1..254
inline constexpr std::size_t kMaxNameLen = 63;    // ibdev names: IBV_SYSFS_NAME_MAX - 1
inline constexpr std::size_t kMaxRuntimeDirLen = 80;  // sockets under it must fit sun_path (108)

// Where fabricd serves Prometheus' GET /metrics: an IP literal and a port
// (0: any free one, as `fabricctl status` then says).
struct MetricsListen {
  std::string address = "127.0.0.1";  // "127.0.0.1", "::1", "0.0.0.0"
  uint16_t port = 9469;
  std::string text() const;  // "127.0.0.1:9469", "[::1]:9469"
  friend bool operator==(const MetricsListen&, const MetricsListen&) = default;
};

struct Daemon {
  std::string runtime_dir = "/run/vfabric";
  std::vector<std::string> eal_args{"--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-m", "512"};
  double time_dilation = 1.0;  // >= 1; emulated time runs this much slower than real time
  // After a late lcore pass, timers and ring work in exact emulated order
  // (exact), or only once the pass is over 1 ms late (batched: 2-3x the
  // bandwidth; core/emulated_clock.hpp kCatchUpAfter).
  bool exact_catch_up = false;
  // Members may run mutating control commands (besides root and fabricd's
  // user). Resolved when the config is read: a typo is an error, not a
  // silently powerless group.
  std::string admin_group;       // empty: none
  std::optional<gid_t> admin_gid;
  std::optional<MetricsListen> metrics = MetricsListen{};  // nullopt: metrics_listen: off
  // Each vHCA with an address gets a Linux interface holding it (netdev.hpp);
  // off: none (perftest-only runs beside a lab's fabricd: vfabric-compare).
  bool netdevs = true;
  friend bool operator==(const Daemon&, const Daemon&) = default;
};

struct Switch {
  std::string name;
  uint32_t ports = 0;        // usable ports are 1..ports
  uint64_t latency_ns = 0;   // forwarding latency (cut-through), per hop
  uint64_t node_guid = 0;    // configured or derived from the name
  // IB: receive buffer per data VL of each port (credit flow control); 0 =
  // derived from each link (dp::default_vl_buffer).
  uint32_t vl_buffer_bytes = 0;
  // Ethernet: the packet memory all ports share, PFC headroom included; 0 =
  // unlimited (an ideal switch: only the per-priority thresholds apply).
  uint64_t buffer_bytes = 0;
  // Ethernet: how long a learned FDB entry outlives its station's silence
  // (Linux bridge's ageing_time), and entries that never age.
  uint64_t ageing_ns = 300'000'000'000ULL;
  struct StaticFdb {
    addr::Mac mac{};
    uint32_t port = 0;
    uint16_t vlan = 1;
    friend bool operator==(const StaticFdb&, const StaticFdb&) = default;
  };
  std::vector<StaticFdb> fdb;
  // Ethernet: the switch routes IPv4 too (a leaf or spine of a routed
  // fabric): routed ports, at most one gateway on a bridged VLAN, and static
  // routes or, without them, the ones fabricd computes (shortest paths over
  // routed links, ECMP over equal ones).
  struct StaticRoute {
    uint32_t prefix = 0;
    uint8_t len = 0;
    std::vector<uint32_t> via;  // routed ports: the ECMP group
    friend bool operator==(const StaticRoute&, const StaticRoute&) = default;
  };
  struct Router {
    uint32_t gateway = 0;    // 0: no gateway interface
    uint8_t prefix_len = 0;  // the gateway's subnet
    uint16_t vlan = 1;       // the VLAN the gateway is on
    std::vector<uint32_t> routed_ports;
    std::optional<std::vector<StaticRoute>> routes;  // nullopt: computed
    addr::Mac mac{};         // derived from the switch's name
    friend bool operator==(const Router&, const Router&) = default;
  };
  std::optional<Router> router;
  friend bool operator==(const Switch&, const Switch&) = default;
};

struct Hca {
  std::string name;          // also the ibdev name ("vib0")
  uint32_t index = 0;        // global, in config order: device number, preferred uverbsN
  std::optional<uint32_t> ipv4;  // Ethernet only (required there); host byte order
  // Ethernet: the host's subnet and default gateway (ip route). Given as
  // ip: A.B.C.D/LEN or taken from the router whose gateway serves the host's
  // VLAN; prefix 0: every destination is on the link (a plain L2 fabric).
  uint8_t prefix_len = 0;
  uint32_t gateway = 0;
  addr::Mac mac{};           // Ethernet only; configured or derived from the name
  uint64_t node_guid = 0;    // configured, or derived (IB: from the name; Ethernet: EUI-64 of the MAC)
  // Ethernet: the 802.1Q VLAN the host's RoCE interface is on (its frames
  // carry the tag, and with it their priority as PCP); 0 = untagged.
  uint16_t vlan = 0;
  // Ethernet: this vHCA's own DCQCN settings over the fabric's qos: dcqcn
  // (each unset one is the fabric's).
  struct DcqcnOverride {
    std::optional<bool> enabled;
    std::optional<uint64_t> cnp_interval_ns, rate_timer_ns;
    std::optional<uint32_t> ai_rate_mbps, hai_rate_mbps;
    friend bool operator==(const DcqcnOverride&, const DcqcnOverride&) = default;
  };
  DcqcnOverride dcqcn;
  // How fast the host takes received frames off its NIC; 0 = at once (as
  // fast as the link). Slower, its receive buffer fills and flow control
  // (PFC, IB credits) pushes back on the link.
  uint64_t rx_rate_bps = 0;
  // IB: the port's P_Key table from index 0 (bit 15 = full member), as the
  // SM's partition configuration gives it; RoCE ports have 0xFFFF only.
  std::vector<uint16_t> pkeys{0xFFFF};
  // The Linux interface holding `ipv4` (a RoCE vHCA's GID netdev, an IB
  // vHCA's IPoIB-style interface): configured, or the HCA's name. Empty: no
  // address, or daemon.netdevs is off.
  std::string netdev;
  friend bool operator==(const Hca&, const Hca&) = default;
};

struct Endpoint {
  std::string node;          // HCA or switch name
  uint32_t port = 1;         // switch port 1..ports; 1 for an HCA (single-port vHCAs)
  bool is_switch = false;
  std::string text() const;  // "vib0" or "ibsw0/1", as written in configs
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

struct Link {
  Endpoint a, b;
  // IB: as configured. Ethernet: what mlx5 reports for eth_speed_gbps
  // (see link_attrs.hpp), so ibv_devinfo shows the familiar values.
  IbWidth width = IbWidth::X4;
  IbSpeed speed = IbSpeed::EDR;
  uint32_t eth_speed_gbps = 0;  // Ethernet only: 1, 10, 25, 40, 50, 100, 200, 400
  // Data rate the serializer uses: IB = lanes x lane signalling rate x line
  // coding (4X EDR = 4 x 25.78125 Gbaud x 64/66 = 100 Gb/s); Ethernet = the
  // nominal MAC rate (preamble and IFG are added per frame by the dataplane).
  // A `rate:` key overrides it to model a throttled link.
  uint64_t rate_bps = 0;
  uint64_t delay_ns = 0;     // one-way propagation delay
  uint32_t mtu = 0;          // IB: 256/512/1024/2048/4096; Ethernet: IP MTU 576..9216
  // IB: receive buffer per data VL at both ends of this link, overriding the
  // switch's; 0 = the switch's, else derived from the link.
  uint32_t vl_buffer_bytes = 0;
};

// A link's rate and delay bounds (config and fabricctl link set alike).
inline constexpr uint64_t kMinRateBps = 1'000'000;    // 1 Mb/s
inline constexpr uint64_t kMaxDelayNs = 1'000'000'000;  // 1 s: a cable to the Moon is 1.3 s
// What the cable carries: IB lanes x lane data rate, or the Ethernet speed;
// a link's `rate` may only be lower (a throttled link).
uint64_t line_rate_bps(const Link& l);

// A VL buffer's bounds: one packet of the largest IB MTU must fit (LRH, GRH,
// transport headers and CRCs included: dp::max_frame_bytes), and more than
// the 2048-block credit window is never advertised anyway.
inline constexpr uint32_t kMinVlBufferOverhead = 128;
inline constexpr uint32_t kMaxVlBufferBytes = 16 * 1024 * 1024;

// How the subnet manager computes an IB fabric's forwarding tables.
enum class Routing : uint8_t {
  MinHop,  // fewest hops; may leave credit loops in a topology with cycles
  UpDown,  // Up*/Down* from root switches: never a credit loop
};

struct SubnetManager {
  Routing routing = Routing::MinHop;
  // Up/Down roots by name; empty = the switches with no HCA attached (the
  // top of a fat-tree), or the first switch when every switch has HCAs.
  std::vector<std::string> roots;
  friend bool operator==(const SubnetManager&, const SubnetManager&) = default;
};

// What the SM programs into every IB port (HCA and switch): the IBA's
// OperationalVLs, SLtoVLMappingTable and VLArbitrationTable.
struct Qos {
  uint8_t data_vls = 8;                            // 1, 2, 4 or 8
  std::optional<std::array<uint8_t, kNumSls>> sl2vl;  // default: SL n -> VL n % data_vls
  std::optional<VlArbTable> vlarb_high, vlarb_low;  // default: low = every VL weight 64
  uint8_t high_limit = 0;                          // LimitOfHighPriority (4 KiB units, 255 = unbounded)
  friend bool operator==(const Qos&, const Qos&) = default;
};

// An Ethernet fabric's QoS in the words of mlnx_qos / dcb, the same on every
// port (switch ports and vHCA NIC ports). The defaults are what RoCE
// deployment guides set up: trust DSCP, RoCE (DSCP 26) on lossless priority 3.
struct EthQos {
  bool trust_dscp = true;                     // trust dscp | pcp
  std::array<uint8_t, 64> dscp2prio = [] {    // mlx5's default: DSCP >> 3
    std::array<uint8_t, 64> m{};
    for (unsigned d = 0; d < 64; ++d) m[d] = uint8_t(d >> 3);
    return m;
  }();
  uint8_t pfc = 1u << 3;       // pfc enable vector; 0 = lossy Ethernet (pfc: off)
  uint8_t roce_tclass = 106;   // vHCAs' traffic class when an app sets none (DSCP 26, ECT(0)); 0 = the app's
  uint16_t pause_quanta = 0xFFFF;
  uint64_t pfc_response_ns = 1000;  // a port's reaction to a received pause
  uint64_t pfc_watchdog_ns = 0;     // 0 = off
  // Per lossless priority group of every port; 0 = computed from each link.
  uint32_t xoff_bytes = 0, xon_bytes = 0, headroom_bytes = 0;
  // ECN marking on every switch port's egress (RED: 0 below kmin, rising to
  // pmax at kmax, 1 above); ecn_kmax 0 = off.
  uint32_t ecn_kmin_bytes = 8 * 1024, ecn_kmax_bytes = 32 * 1024;
  double ecn_pmax = 0.05;
  bool ecn_wred = false;  // lossy priorities drop what the profile picks and cannot mark
  // Dynamic shared-buffer thresholds (devlink sb pool thtype dynamic): a
  // priority group of a switch port may hold alpha = 2^buffer_alpha_log2
  // times the free shared buffer; kStaticBuffer: static (xoff, the pool).
  static constexpr int8_t kStaticBuffer = INT8_MIN;
  int8_t buffer_alpha_log2 = kStaticBuffer;
  // Every switch port's static reserved part per priority group: what each
  // group gets before it takes from the shared pool. 0 = none.
  uint32_t reserved_bytes = 0;
  // DCQCN at the vHCAs (reaction and notification point).
  bool dcqcn = true;
  uint64_t cnp_interval_ns = 50'000;   // min_time_between_cnps
  uint64_t rate_timer_ns = 55'000;     // rpg_time_reset
  uint32_t ai_rate_mbps = 5;           // rpg_ai_rate
  uint32_t hai_rate_mbps = 50;         // rpg_hai_rate
  // Egress scheduling (802.1Qaz ETS) of every port: priority -> traffic
  // class (802.1Q's recommended map, as mlx5's), each class strict or ETS,
  // and the ETS classes' bandwidth percentages (summing to 100).
  std::array<uint8_t, 8> prio_tc{1, 0, 2, 3, 4, 5, 6, 7};
  std::array<bool, 8> tc_strict{};
  std::array<uint8_t, 8> tc_bw{13, 13, 13, 13, 12, 12, 12, 12};
  friend bool operator==(const EthQos&, const EthQos&) = default;
};

// How switches choose among equal-cost ports (dp::AdaptiveConfig): off =
// the static choice (the SM's LFT, the ECMP hash); per-packet and flowlet
// pick the least-loaded port (IB: among the SM's Up/Down equal-cost ports;
// Ethernet: among a route's ECMP next hops).
struct AdaptiveRouting {
  enum class Mode : uint8_t { Off, PerPacket, Flowlet };
  Mode mode = Mode::Off;
  uint64_t flowlet_gap_ns = 10'000;
  friend bool operator==(const AdaptiveRouting&, const AdaptiveRouting&) = default;
};
const char* to_string(AdaptiveRouting::Mode m);  // "off", "per-packet", "flowlet"

struct Fabric {
  std::string name;
  LinkLayer link_layer = LinkLayer::Infiniband;
  uint64_t subnet_prefix = 0xfe80000000000000ULL;  // IB GID prefix (upper 64 bits)
  SubnetManager sm;  // IB only
  Qos qos;           // IB only
  EthQos eth_qos;    // Ethernet only
  AdaptiveRouting adaptive;
  std::vector<Switch> switches;
  std::vector<Hca> hcas;
  std::vector<Link> links;
  std::string generated;  // a `topology:` key's summary ("3-level fat tree, k=16: ..."); empty when hand-written

  const Link* link_of(std::string_view node) const;  // the (single) link of an HCA
  const Hca* find_hca(std::string_view name) const;
  const Switch* find_switch(std::string_view name) const;
};

// Why fabric `f` cannot route adaptively in `mode` (IB: the SM must route
// Up/Down; Ethernet: some switch must route), and what to do; empty if it can.
struct AdaptiveProblem {
  std::string problem, fix;
};
AdaptiveProblem adaptive_routing_problem(const Fabric& f, AdaptiveRouting::Mode mode);

struct Config {
  std::string source;        // file name (or the name given with the string)
  Daemon daemon;
  std::vector<Fabric> fabrics;

  struct HcaRef {
    const Fabric* fabric;
    const Hca* hca;
    const Link* link;
  };
  std::vector<HcaRef> hcas() const;  // every HCA, in index order
  std::optional<HcaRef> find_hca(std::string_view name) const;
};

// How big a fabric the reader of a config can run: fabricd one vHCA per
// uverbs device; vfabric-sim, which needs no devices, far more.
struct Limits {
  std::size_t max_hcas = kMaxHcas;
  std::size_t max_switches = kMaxSwitches;
  std::string_view why_hcas = "fabricd serves at most 64 vHCAs (uverbs0..63); vfabric-sim runs larger fabrics";
};
inline constexpr Limits kSimLimits{65536, 8192, "vfabric-sim runs at most 65536 hosts"};

// Reads and validates a config file (at most 1 MiB, a regular file).
Config load_config(const std::string& path, const Limits& limits = {});
// Same, from text; `name` stands for the file in error messages.
Config load_config_string(std::string_view yaml, const std::string& name, const Limits& limits = {});

const char* to_string(LinkLayer ll);  // "infiniband", "ethernet"
const char* to_string(Routing r);     // "minhop", "updn"
const char* to_string(IbSpeed s);     // "EDR"
const char* to_string(IbWidth w);     // "4X"
unsigned lanes(IbWidth w);

}  // namespace vf::config
