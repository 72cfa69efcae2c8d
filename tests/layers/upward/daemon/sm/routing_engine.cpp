// Fixture for layers.rejects_violations (never compiled): a routing engine
// reaching up into the control commands, which sit above the SM.
#include "daemon/sm/routing_engine.hpp"
#include "daemon/commands/show_routes.hpp"
