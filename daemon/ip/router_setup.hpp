// Programs a routed Ethernet fabric's switches as the config says: each
// switch with a `router:` becomes an IPv4 router, and every router gets the
// routes the fabric's routing protocol converges to with the links as they
// are now (ip_routing.hpp). fabricd calls it at start-up and after every link
// change; the comparison's virtual-time lab calls the same code.
#pragma once

#include "daemon/config/config.hpp"

namespace vf::dp {
class Fabric;
}

namespace vf::routing {

// Makes every switch of `f` that has a router one (once, at set-up).
void enable_routers(dp::Fabric& fabric, const config::Fabric& f);

// Recomputes and installs every router's routes from the links' state now.
void program_routes(dp::Fabric& fabric, const config::Fabric& f);

}  // namespace vf::routing
