// Every counter of the daemon in the Prometheus text exposition format
// (0.0.4): one family per counter-table row (counter_format.hpp), one sample
// per labelled owner. The lcore fills a MetricsSnapshot with plain copies
// (Topology::metrics plus the lcore's and event sinks' numbers); this runs
// on the control thread.
#pragma once

#include <string>
#include <vector>

#include "core/types.hpp"
#include "daemon/telemetry/event_sink_stats.hpp"
#include "daemon/telemetry/lcore_stats.hpp"
#include "daemon/telemetry/cm_stats.hpp"
#include "daemon/telemetry/umad_stats.hpp"
#include "dataplane/fabric/ecn_marker.hpp"
#include "dataplane/fabric/eth_switch.hpp"
#include "dataplane/fabric/hca_port.hpp"
#include "dataplane/fabric/ib_credits.hpp"
#include "dataplane/fabric/ib_switch.hpp"
#include "dataplane/fabric/link.hpp"
#include "dataplane/fabric/pfc.hpp"
#include "device/engine/hca.hpp"

namespace vf {

// Per IB fabric: credit-loop deadlocks the dataplane found (kFabricCounters).
struct FabricFlowSnapshot {
  uint64_t credit_loop_deadlocks;
};
extern const CounterTable kFabricCounters;

struct MetricsSnapshot {
  struct Vhca {
    std::string fabric, name;
    LinkLayer link_layer;
    dp::HcaPortSnapshot port;
    engine::Counters engine;
    EventSinkStats events;
    UmadStats mad;     // filled on the control thread
    cm::CmStats cm;    // and these
  };
  struct SwitchPort {
    std::string fabric, name;  // "ibsw0/3"
    LinkLayer link_layer;
    dp::PortSnapshot port;
  };
  struct LinkDirection {
    std::string fabric, from, to;  // endpoints, "vib0" -> "ibsw0/1"
    dp::LinkDirectionSnapshot wire;
  };
  struct VlCredits {  // one data VL of one credit-controlled IB port
    std::string fabric, port;
    unsigned vl;
    dp::VlCreditGauges credits;
  };
  struct PfcPriority {  // one priority of one Ethernet port
    std::string fabric, port;
    unsigned priority;
    dp::PfcPrioritySnapshot pfc;
  };
  struct EcnPriority {  // one priority of one ECN-marking switch port
    std::string fabric, port;
    unsigned priority;
    dp::EcnPrioritySnapshot ecn;
  };
  struct Fabric {
    std::string name;
    FabricFlowSnapshot flow;
  };
  struct Bridge {  // one Ethernet switch
    std::string fabric, name;
    dp::BridgeSnapshot bridge;
  };
  struct IbSwitch {  // one InfiniBand switch
    std::string fabric, name;
    dp::IbSwitchSnapshot ib;
  };
  struct Router {  // one routing Ethernet switch
    std::string fabric, name;
    dp::RouterSnapshot router;
  };
  LcoreSnapshot lcore;
  std::vector<Fabric> fabrics;  // IB fabrics
  std::vector<VlCredits> vl_credits;
  std::vector<PfcPriority> pfc;  // Ethernet fabrics
  std::vector<EcnPriority> ecn;
  std::vector<Bridge> bridges;
  std::vector<Router> routers;
  std::vector<IbSwitch> ib_switches;
  std::vector<Vhca> vhcas;
  std::vector<SwitchPort> switch_ports;
  std::vector<LinkDirection> links;
};

// Families are prefixed "vfabric_". Labels: port counters and classes
// {fabric, port[, class]} over HCA and switch ports alike; the HCA port's own
// counters, rx errors, the engine's and the event sink's {fabric, hca}; links
// {fabric, from, to}; VL credit levels {fabric, port, vl}; per fabric
// {fabric}; Ethernet switches' bridge and router counters and InfiniBand
// switches' multicast counters {fabric, switch}; the lcore's none.
std::string prometheus_text(const MetricsSnapshot& m);

}  // namespace vf
