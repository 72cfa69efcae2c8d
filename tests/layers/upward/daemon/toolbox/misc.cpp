// Fixture (never compiled): a folder that is no subsystem.
#include "daemon/sm/routing_engine.hpp"
