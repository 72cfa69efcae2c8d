// Credit loops: whether a routing can deadlock a credit-based fabric. Each
// directed link is a channel; a route that enters a switch on channel a and
// leaves on channel b makes b a dependency of a (a packet holds a's buffer
// while it waits for b's credit). If the dependencies of every route between
// every pair of HCAs form a cycle, a load that fills the buffers on that
// cycle stops for good (Dally & Seitz); if they are acyclic, no load can.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/sm/routing.hpp"

namespace vf {

struct CreditLoopCheck {
  // A cycle of channels, each "sw0/2->sw1/3" (from the egress end to the
  // ingress end), the last depending on the first; empty when acyclic.
  std::vector<std::string> cycle;
  // A route that never reaches its HCA (a forwarding loop): "sw0 -> h3".
  std::vector<std::string> looping_routes;
  bool deadlock_free() const { return cycle.empty() && looping_routes.empty(); }
};

// The channel dependency graph of `routes` over every ordered pair of HCAs.
CreditLoopCheck check_credit_loops(const config::Fabric& fabric, const Routes& routes);

// What a lab should be told about `routes`, the fabric's own routing (its
// sm: section), in plain words; empty when it is deadlock free.
// The check walks every pair of HCAs: above `max_hcas` it is not run, and
// a min-hop fabric is told so (Up/Down cannot form a loop by construction).
inline constexpr size_t kCreditCheckMaxHcas = 4096;
std::string credit_loop_warning(const config::Fabric& fabric, const Routes& routes,
                                size_t max_hcas = kCreditCheckMaxHcas);

}  // namespace vf
