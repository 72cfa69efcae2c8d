// What vfabric-sim writes: nccl-tests' table on stdout, the analytic bound
// beside it, and the CSV and counter files a run asks for.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/telemetry/metrics_text.hpp"
#include "sim/plan.hpp"
#include "sim/plan_run.hpp"

namespace vf::sim {

// The payload rate of a host's link, in GB/s: its line rate times the share
// of a full-MTU packet that is payload (IB: LRH, BTH, ICRC, VCRC; RoCEv2:
// Ethernet, IPv4, UDP, BTH, ICRC, FCS, preamble and gap). A ring collective's
// bus bandwidth cannot exceed it; an oversubscribed fabric's all-to-all can
// fall below it (the bound does not model the core).
double host_link_bound_gbs(const config::Fabric& f, const config::Link& host_link, uint32_t mtu);

struct IterationRow {
  unsigned iteration;
  Nanos elapsed;
};
// One line per iteration: workload,algo,ranks,bytes,iteration,time_us,algbw_GBps,busbw_GBps,bound_busbw_GBps.
void write_iterations_csv(std::FILE* out, const Plan& p, const std::vector<IterationRow>& rows, double bound);
// One line per switch and HCA port: bytes each way, wait, drops, the deepest queue.
void write_ports_csv(std::FILE* out, const MetricsSnapshot& m);
// An iteration's ranks in the order they finished -- x the share of ranks
// done, y when (µs from the iteration's start) -- beside the time the
// host link's bound allows (`bound`, GB/s of bus bandwidth): a
// collective's tail at a glance, as an SVG in vfabric-compare's style.
// `finish_ns`: every rank's finish, from the start; `elapsed`: the last.
std::string finish_svg(const Plan& p, std::vector<Nanos> finish_ns, Nanos elapsed, double bound);

}  // namespace vf::sim
