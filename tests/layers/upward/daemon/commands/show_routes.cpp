// Fixture (never compiled): a command may include the SM below it.
#include "daemon/commands/show_routes.hpp"
#include "daemon/sm/routing_engine.hpp"
